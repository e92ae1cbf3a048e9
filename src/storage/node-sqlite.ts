import { chmodSync, closeSync, openSync, statSync } from 'node:fs';
import { DatabaseSync, type SQLInputValue, type StatementSync } from 'node:sqlite';
import type { SqliteDatabase, SqliteStatement } from 'kysely';

/**
 * The database holds key hashes and encrypted integration secrets, so it is for its owner only (0600).
 * A new file is created 0600 before SQLite opens it, and SQLite creates the -wal and -shm files with
 * the database file's permissions. An existing file (or a -wal/-shm left by a crash) that others may
 * read is tightened when this process's user owns it: it predates this rule, and the user that runs the
 * service owns its data. A file another user owns is left as its owner set it (chmod would fail anyway).
 */
function restrictToOwner(path: string): void {
  try {
    closeSync(openSync(path, 'wx', 0o600));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  const uid = process.getuid?.();
  if (uid === undefined) return; // Windows: no POSIX modes
  for (const file of [path, `${path}-wal`, `${path}-shm`]) {
    const stat = statSync(file, { throwIfNoEntry: false });
    if (stat && stat.uid === uid && (stat.mode & 0o077) !== 0) chmodSync(file, stat.mode & 0o700);
  }
}

/**
 * Adapts Node's built-in `node:sqlite` to the better-sqlite3 shape that Kysely's SqliteDialect drives,
 * so the embedded default needs no native build.
 */
export function openNodeSqlite(path: string): SqliteDatabase {
  if (path !== ':memory:' && path !== '') restrictToOwner(path);
  const db = new DatabaseSync(path);
  // WAL lets readers (the CLI, a second server) work beside a writer; busy_timeout waits out short locks.
  // busy_timeout first: switching a new file to WAL needs a lock that another process may hold.
  db.exec('PRAGMA busy_timeout = 5000; PRAGMA journal_mode = WAL; PRAGMA foreign_keys = ON; PRAGMA synchronous = NORMAL;');
  // Kysely prepares every query it runs; the same SQL text is prepared once and its statement reused (a statement
  // runs to completion synchronously, so one statement serves every caller). Kysely's SQL for a query shape is the
  // same text each time (values are bound), so the number of distinct texts is small; the bound is a safeguard.
  const statements = new Map<string, SqliteStatement>();
  return {
    close: () => {
      statements.clear();
      db.close();
    },
    prepare: (sql) => {
      let statement = statements.get(sql);
      if (!statement) {
        if (statements.size >= maxCachedStatements) statements.delete(statements.keys().next().value as string);
        statement = adaptStatement(db.prepare(sql));
        statements.set(sql, statement);
      }
      return statement;
    },
  };
}

/** Prepared statements kept per database; past it, the oldest is dropped (and prepared again when next used). */
const maxCachedStatements = 500;

function adaptStatement(statement: StatementSync): SqliteStatement {
  const bind = (parameters: ReadonlyArray<unknown>) => parameters.map(toSqlite);
  return {
    reader: statement.columns().length > 0,
    all: (parameters) => statement.all(...bind(parameters)),
    run: (parameters) => statement.run(...bind(parameters)),
    iterate: (parameters) => statement.iterate(...bind(parameters)),
  };
}

// node:sqlite binds no booleans or Dates; map them the way PostgreSQL rows will read back here.
function toSqlite(value: unknown): SQLInputValue {
  if (typeof value === 'boolean') return value ? 1 : 0;
  if (value instanceof Date) return value.toISOString();
  if (value === undefined) return null;
  return value as SQLInputValue;
}
