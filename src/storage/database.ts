import { existsSync, mkdirSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import { Kysely, PostgresDialect, SqliteDialect, sql } from 'kysely';
import { type Migration, type MigrationProvider, Migrator } from 'kysely/migration';
import { ConfigError, sqlitePath } from '../config/config.ts';
import { displayUrl } from '../core/display-url.ts';
import * as foundation from './migrations/001_foundation.ts';
import * as integrations from './migrations/002_integrations.ts';
import * as executionMessages from './migrations/003_execution_messages.ts';
import * as executionDetails from './migrations/004_execution_details.ts';
import * as people from './migrations/005_people.ts';
import * as asyncExecutions from './migrations/006_async_executions.ts';
import * as webhooks from './migrations/007_webhooks.ts';
import * as executionRuns from './migrations/008_execution_runs.ts';
import * as executionClaims from './migrations/009_execution_claims.ts';
import * as queueRounds from './migrations/010_queue_rounds.ts';
import * as catalog from './migrations/011_catalog.ts';
import * as auditLog from './migrations/012_audit_log.ts';
import { openNodeSqlite } from './node-sqlite.ts';
import type { Database } from './schema.ts';

export type Db = Kysely<Database>;

export interface Storage {
  readonly db: Db;
  readonly kind: 'sqlite' | 'postgres';
  /** The folder the SQLite file lives in (for the generated master key); undefined on PostgreSQL. */
  readonly dataDir: string | undefined;
  /** Where the data is, fit for logs: the SQLite file's path, or the PostgreSQL URL without its password. */
  readonly location: string;
  close(): Promise<void>;
}

// Listed explicitly, not read from a folder, so the set of migrations is part of the code under review.
const migrations: Record<string, Migration> = {
  '001_foundation': foundation,
  '002_integrations': integrations,
  '003_execution_messages': executionMessages,
  '004_execution_details': executionDetails,
  '005_people': people,
  '006_async_executions': asyncExecutions,
  '007_webhooks': webhooks,
  '008_execution_runs': executionRuns,
  '009_execution_claims': executionClaims,
  '010_queue_rounds': queueRounds,
  '011_catalog': catalog,
  '012_audit_log': auditLog,
};

const requireModule = createRequire(import.meta.url);

const provider: MigrationProvider = { getMigrations: async () => migrations };

/**
 * `mkdir -p`, each folder it creates owner-only. Not `mkdirSync(…, { recursive: true })`: that loops for ever where the
 * kernel answers ENOENT for a folder it will never create (under /proc), and the process spins instead of failing.
 */
function makeFolder(dir: string): void {
  const isFolder = (path: string) => statSync(path, { throwIfNoEntry: false })?.isDirectory() === true;
  if (isFolder(dir)) return;
  const parent = dirname(dir);
  if (parent !== dir && !existsSync(parent)) makeFolder(parent);
  try {
    mkdirSync(dir, { mode: 0o700 });
  } catch (error) {
    // Made by another process meanwhile is fine; a file in its place is not (mkdir's own error names it).
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST' || !isFolder(dir)) throw error;
  }
}

/**
 * Opens storage for a DATABASE_URL: `postgres://…` through a pg pool, otherwise the embedded SQLite
 * file (created with its folder on first use). The queries and migrations are the same for both.
 */
export function openStorage(databaseUrl: string, options: { pgPoolMax?: number } = {}): Storage {
  if (/^postgres(ql)?:\/\//.test(databaseUrl)) {
    // pg is loaded only for PostgreSQL: the embedded default does without it.
    const pg = requireModule('pg') as typeof import('pg');
    // A server that does not answer at all (a failover whose old address drops packets) fails a connection attempt
    // within 5 s, answered 503, rather than hanging the request for the kernel's TCP timeout; keepalive finds a
    // connection whose server vanished.
    const pool = new pg.Pool({
      connectionString: databaseUrl,
      max: options.pgPoolMax ?? 10,
      connectionTimeoutMillis: 5000,
      keepAlive: true,
      keepAliveInitialDelayMillis: 10_000,
    });
    // A connection that the server ends (a restart, a failover, an idle-session kill) is an 'error' event; unheard,
    // it is an uncaught exception that takes the process down. The pool hears it for idle clients only, so every
    // client gets a listener of its own when it connects: one checked out for a transaction, between two statements,
    // is covered too. The pool drops such a client when it comes back, and the next query opens a new one; a query
    // in flight reports its own failure (answered 503, src/storage/availability.ts).
    pool.on('error', () => {});
    pool.on('connect', (client) => client.on('error', () => {}));
    const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
    return { db, kind: 'postgres', dataDir: undefined, location: displayUrl(databaseUrl), close: () => db.destroy() };
  }
  if (!databaseUrl.startsWith('sqlite:')) throw new ConfigError('DATABASE_URL must start with sqlite: or postgres://');
  const path = sqlitePath(databaseUrl);
  const dataDir = path === ':memory:' ? undefined : dirname(path);
  let database: ReturnType<typeof openNodeSqlite>;
  try {
    // Owner-only, like the files in it (the database, master.key); an existing folder keeps its mode.
    if (dataDir) makeFolder(dataDir);
    database = openNodeSqlite(path);
  } catch (error) {
    throw new Error(`cannot open the SQLite database ${path} (DATABASE_URL): ${(error as Error).message}`, { cause: error });
  }
  const db = new Kysely<Database>({ dialect: new SqliteDialect({ database }) });
  return { db, kind: 'sqlite', dataDir, location: path, close: () => db.destroy() };
}

// What the network said, in words; anything else (authentication, a missing database, TLS) in the driver's words.
const networkFailures: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset',
  ENOTFOUND: 'host not found',
  EAI_AGAIN: 'host name lookup failed',
  ETIMEDOUT: 'connection timed out',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
};

/**
 * Connects before anything else is asked of PostgreSQL, so that a server that cannot be reached or refuses the
 * login is reported as such, naming DATABASE_URL (without its password), rather than as a bare
 * `connect ECONNREFUSED 127.0.0.1:5432`. A runtime error: the CLI exits 1.
 */
async function checkConnection(storage: Storage): Promise<void> {
  try {
    await sql`select 1`.execute(storage.db);
  } catch (error) {
    // Several addresses tried (localhost: ::1 and 127.0.0.1) fail as one AggregateError with an empty message.
    const { code, message } = error as NodeJS.ErrnoException;
    const network = code === undefined ? undefined : networkFailures[code];
    const reason = network ?? (message || code || 'unknown error');
    const verb = network ? 'cannot reach' : 'cannot connect to';
    throw new Error(`${verb} the database at ${storage.location} (DATABASE_URL): ${reason}`, { cause: error });
  }
}

/**
 * Applies pending migrations, each once however many processes start at the same time. Kysely's
 * migrator locks on PostgreSQL but not on SQLite (it runs SQLite migrations outside any transaction),
 * so on SQLite the whole run holds the database's write lock: `BEGIN IMMEDIATE` waits (busy_timeout)
 * while another process migrates, and then finds the work done. SQLite DDL is transactional, so a
 * failed migration leaves nothing behind.
 */
export async function migrate(storage: Storage): Promise<string[]> {
  const migrator = new Migrator({ db: storage.db, provider });
  if (storage.kind === 'postgres') await checkConnection(storage);
  if (storage.kind === 'sqlite') await sql`begin immediate`.execute(storage.db);
  try {
    const { error, results } = await migrator.migrateToLatest();
    if (error) throw error;
    if (storage.kind === 'sqlite') await sql`commit`.execute(storage.db);
    return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
  } catch (error) {
    if (storage.kind === 'sqlite') await sql`rollback`.execute(storage.db).catch(() => {});
    throw error;
  }
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
