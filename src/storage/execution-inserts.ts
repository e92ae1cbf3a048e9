import { CompiledQuery, SqliteAdapter } from 'kysely';
import type { Db } from './database.ts';
import { columns, type Execution, rowOf } from './execution-rows.ts';

/**
 * The columns a synchronous call's row sets when it was tried once: the others (`mode` 'sync', `attempts` 1, `runs` 0,
 * no `result` and no expiry) are the columns' defaults. Binding fewer values is most of what a row costs on SQLite.
 */
const defaulted: ReadonlySet<string> = new Set(['mode', 'attempts', 'runs', 'result', 'result_expires_at']);
const syncColumns = columns.filter((column) => !defaulted.has(column));

/** The columns PostgreSQL reads as integers from a batch's JSON (`->>` gives text); the others are text. */
const integerColumns: ReadonlySet<string> = new Set(['http_status', 'message_count', 'duration_ms', 'attempts', 'runs']);

/**
 * PostgreSQL: a batch's rows as one JSON parameter, an array of arrays in `columns` order, read back in SQL. Binding
 * 21 parameters a row cost the server more than this (pg writes each value into the message on its own). Not on
 * SQLite: reading each value back out of JSON there cost three times what binding it did.
 */
const postgresBatchText = `insert into executions (${columns.join(', ')}) select ${columns
  .map((column, i) => (integerColumns.has(column) ? `(r ->> ${i})::integer` : `r ->> ${i}`))
  .join(', ')} from jsonb_array_elements($1::jsonb) as r`;

/**
 * Inserts executions rows, each batch in one statement: on PostgreSQL a batch's rows as one JSON parameter
 * (`postgresBatchText`), otherwise (SQLite, a single row) with their values bound one by one, only `syncColumns` when
 * every row is a synchronous call's. The statement's text is written here, not compiled by Kysely, which walked a
 * tree of nodes for every value. The executions log writes a failed batch again row by row, so a row that JSON cannot
 * carry as bound values would (jsonb refuses the escape of a NUL) still fails alone, as it did before.
 */
export class ExecutionInserts {
  readonly #db: Db;
  readonly #sqlite: boolean;
  readonly #maxTexts: number;
  /** The bound statement's text by number of rows and columns. */
  readonly #texts = new Map<string, string>();

  constructor(db: Db, maxTexts = 256) {
    this.#db = db;
    this.#sqlite = db.getExecutor().adapter instanceof SqliteAdapter;
    this.#maxTexts = maxTexts;
  }

  async insert(rows: ReadonlyArray<{ tenantId: string; execution: Execution }>): Promise<void> {
    if (rows.length === 0) return;
    if (!this.#sqlite && rows.length > 1) {
      const values = rows.map(({ tenantId, execution }) => {
        const row = rowOf(tenantId, execution);
        return columns.map((column) => row[column]);
      });
      await this.#db.executeQuery(CompiledQuery.raw(postgresBatchText, [JSON.stringify(values)]));
      return;
    }
    const sync = rows.every(({ execution }) => execution.mode === 'sync' && execution.attempts === 1);
    const bound = sync ? syncColumns : columns;
    const parameters: unknown[] = [];
    for (const { tenantId, execution } of rows) {
      const row = rowOf(tenantId, execution);
      for (const column of bound) parameters.push(row[column]);
    }
    await this.#db.executeQuery(CompiledQuery.raw(this.#text(rows.length, bound), parameters));
  }

  #text(rowCount: number, bound: ReadonlyArray<string>): string {
    const key = `${rowCount}:${bound.length}`;
    let text = this.#texts.get(key);
    if (text === undefined) {
      let n = 0;
      const placeholder = this.#sqlite ? () => '?' : () => `$${++n}`;
      const tuples = Array.from({ length: rowCount }, () => `(${bound.map(placeholder).join(', ')})`);
      text = `insert into executions (${bound.join(', ')}) values ${tuples.join(', ')}`;
      if (this.#texts.size < this.#maxTexts) this.#texts.set(key, text);
    }
    return text;
  }
}

/** Records executes, in one statement (see ExecutionInserts, which the executions log keeps). */
export function insertExecutions(db: Db, rows: ReadonlyArray<{ tenantId: string; execution: Execution }>): Promise<void> {
  return new ExecutionInserts(db).insert(rows);
}
