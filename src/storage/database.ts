import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { Kysely, SqliteDialect } from 'kysely';
import { type Migration, type MigrationProvider, Migrator } from 'kysely/migration';
import { ConfigError, sqlitePath } from '../config.ts';
import * as foundation from './migrations/001_foundation.ts';
import { openNodeSqlite } from './node-sqlite.ts';
import type { Database } from './schema.ts';

export type Db = Kysely<Database>;

export interface Storage {
  readonly db: Db;
  readonly kind: 'sqlite' | 'postgres';
  /** The folder the SQLite file lives in (for the generated master key); undefined on PostgreSQL. */
  readonly dataDir: string | undefined;
  close(): Promise<void>;
}

// Listed explicitly, not read from a folder, so the set of migrations is part of the code under review.
const migrations: Record<string, Migration> = {
  '001_foundation': foundation,
};

const provider: MigrationProvider = { getMigrations: async () => migrations };

/** Opens storage for a DATABASE_URL; SQLite files and their folder are created on first use. */
export function openStorage(databaseUrl: string): Storage {
  if (!databaseUrl.startsWith('sqlite:')) {
    throw new ConfigError('Only sqlite: DATABASE_URLs are supported in this version.');
  }
  const path = sqlitePath(databaseUrl);
  const dataDir = path === ':memory:' ? undefined : dirname(path);
  if (dataDir) mkdirSync(dataDir, { recursive: true });
  const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: openNodeSqlite(path) }) });
  return { db, kind: 'sqlite', dataDir, close: () => db.destroy() };
}

/**
 * Applies pending migrations. Kysely's migrator locks on PostgreSQL; on SQLite a second process that
 * loses the race for the write lock sees SQLITE_BUSY, so it waits and tries again, and then finds the work done.
 */
export async function migrate(storage: Storage): Promise<string[]> {
  const migrator = new Migrator({ db: storage.db, provider });
  for (let attempt = 1; ; attempt++) {
    const { error, results } = await migrator.migrateToLatest();
    if (!error) return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
    if (attempt >= 20 || !isBusy(error)) throw error;
    await new Promise((r) => setTimeout(r, 50 * attempt));
  }
}

function isBusy(error: unknown): boolean {
  const message = error instanceof Error ? error.message : String(error);
  return /SQLITE_BUSY|database is locked/i.test(message);
}

/** True when storage answers a trivial query. */
export async function isReachable(storage: Storage): Promise<boolean> {
  try {
    await storage.db.selectFrom('tenants').select('id').limit(1).execute();
    return true;
  } catch {
    return false;
  }
}
