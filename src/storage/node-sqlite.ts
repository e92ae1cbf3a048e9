import { DatabaseSync, type SQLInputValue, type StatementSync } from 'node:sqlite';
import type { SqliteDatabase, SqliteStatement } from 'kysely';

/**
 * Adapts Node's built-in `node:sqlite` to the better-sqlite3 shape that Kysely's SqliteDialect drives,
 * so the embedded default needs no native build.
 */
export function openNodeSqlite(path: string): SqliteDatabase {
  const db = new DatabaseSync(path);
  // WAL lets readers (the CLI, a second server) work beside a writer; busy_timeout waits out short locks.
  // busy_timeout first: switching a new file to WAL needs a lock that another process may hold.
  db.exec('PRAGMA busy_timeout = 5000; PRAGMA journal_mode = WAL; PRAGMA foreign_keys = ON; PRAGMA synchronous = NORMAL;');
  return {
    close: () => db.close(),
    prepare: (sql) => adaptStatement(db.prepare(sql)),
  };
}

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
