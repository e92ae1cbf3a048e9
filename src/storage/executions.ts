import { CompiledQuery, type Selectable } from 'kysely';
import { newId } from '../ids.ts';
import type { Db } from './database.ts';
import { decodeCursor, type Page, toPage } from './pagination.ts';
import type { ExecutionsTable } from './schema.ts';

/** One execute call as the log shows it; request and response bodies are never stored. */
export type Execution = Omit<ExecutionsTable, 'tenant_id' | 'status' | 'error_details'> & {
  status: 'succeeded' | 'failed';
  /** A failure's `details` as the caller got them; null for a success or a failure without details. */
  error_details: Record<string, unknown> | null;
};

const base36 = '0123456789abcdefghijklmnopqrstuvwxyz';
let lastExecutionId = '';

/** The id right after `id`: its suffix (time, then random) read as one base-36 number, plus one. */
function successor(id: string): string {
  const chars = [...id];
  for (let i = chars.length - 1; chars[i] !== '_'; i--) {
    const digit = base36.indexOf(chars[i]);
    if (digit < base36.length - 1) {
      chars[i] = base36[digit + 1];
      return chars.join('');
    }
    chars[i] = '0';
  }
  throw new RangeError(`no successor for ${id}`);
}

/**
 * A new execution id (`exe_…`), greater than every one this process made before. `newId` sorts by the
 * millisecond only: calls in the same millisecond would otherwise be listed in random order, not newest first.
 */
export function newExecutionId(): string {
  const id = newId('exe');
  lastExecutionId = id > lastExecutionId ? id : successor(lastExecutionId);
  return lastExecutionId;
}

function fromRow(row: Selectable<ExecutionsTable>): Execution {
  const { tenant_id: _tenant, ...rest } = row;
  return {
    ...rest,
    status: rest.status as Execution['status'],
    http_status: Number(rest.http_status),
    message_count: Number(rest.message_count),
    duration_ms: Number(rest.duration_ms),
    error_details: rest.error_details === null ? null : (JSON.parse(rest.error_details) as Record<string, unknown>),
  };
}

/** Every column of a row, in the order an insert binds their values. */
const columns = [
  'id',
  'tenant_id',
  'integration_id',
  'connector',
  'operation',
  'status',
  'http_status',
  'error_code',
  'error_message',
  'error_details',
  'message_count',
  'duration_ms',
  'api_key_id',
  'user_id',
  'request_id',
  'started_at',
] as const satisfies ReadonlyArray<keyof ExecutionsTable>;

/**
 * The row as stored, its keys in `columns` order and none undefined. `error_message` can carry upstream text (a
 * GraphQL error, a fault string), which may hold a NUL that PostgreSQL's text refuses: it is stored as U+FFFD, the
 * same on both databases, so the call is recorded. `error_details` is stored as JSON text (where a NUL is the escape
 * `\u0000`, which both keep).
 */
function rowOf(tenantId: string, execution: Execution): ExecutionsTable {
  return {
    id: execution.id,
    tenant_id: tenantId,
    integration_id: execution.integration_id,
    connector: execution.connector,
    operation: execution.operation,
    status: execution.status,
    http_status: execution.http_status,
    error_code: execution.error_code ?? null,
    error_message: execution.error_message?.replaceAll('\u0000', '\ufffd') ?? null,
    error_details: execution.error_details === null ? null : JSON.stringify(execution.error_details),
    message_count: execution.message_count,
    duration_ms: execution.duration_ms,
    api_key_id: execution.api_key_id ?? null,
    user_id: execution.user_id ?? null,
    request_id: execution.request_id,
    started_at: execution.started_at,
  };
}

/**
 * Inserts executions rows, each batch in one statement. Kysely compiles the statement for a number of rows once; later
 * batches of that size bind their values to the same text. Compiling walks a tree of nodes for every value, about
 * 2 µs a row, a third of what a row cost on SQLite: the executions log writes one row per execute. At most `maxTexts`
 * sizes are kept (the executions log's batches are never larger than its `maxBatch`); others are compiled each time.
 */
export class ExecutionInserts {
  readonly #db: Db;
  readonly #maxTexts: number;
  /** The statement's text by number of rows. */
  readonly #texts = new Map<number, string>();

  constructor(db: Db, maxTexts = 256) {
    this.#db = db;
    this.#maxTexts = maxTexts;
  }

  async insert(rows: ReadonlyArray<{ tenantId: string; execution: Execution }>): Promise<void> {
    if (rows.length === 0) return;
    const values = rows.map(({ tenantId, execution }) => rowOf(tenantId, execution));
    const text = this.#texts.get(values.length);
    if (text === undefined) {
      const compiled = this.#db.insertInto('executions').values(values).compile();
      // Bound in `columns` order, row after row: what the cached text expects of later batches.
      if (compiled.parameters.length === values.length * columns.length && this.#texts.size < this.#maxTexts) {
        this.#texts.set(values.length, compiled.sql);
      }
      await this.#db.executeQuery(compiled);
      return;
    }
    const parameters: unknown[] = [];
    for (const row of values) for (const column of columns) parameters.push(row[column]);
    await this.#db.executeQuery(CompiledQuery.raw(text, parameters));
  }
}

/** Records executes, in one statement (see ExecutionInserts, which the executions log keeps). */
export function insertExecutions(db: Db, rows: ReadonlyArray<{ tenantId: string; execution: Execution }>): Promise<void> {
  return new ExecutionInserts(db).insert(rows);
}

export async function findExecution(db: Db, tenantId: string, id: string): Promise<Execution | undefined> {
  const row = await db
    .selectFrom('executions')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('id', '=', id)
    .executeTakeFirst();
  return row && fromRow(row);
}

/** Newest first: ids sort by creation time, so the cursor is the last id seen. */
export async function listExecutions(
  db: Db,
  tenantId: string,
  options: { limit: number; cursor?: string; integration_id?: string; status?: string },
): Promise<Page<Execution>> {
  let query = db.selectFrom('executions').selectAll().where('tenant_id', '=', tenantId);
  if (options.integration_id !== undefined) query = query.where('integration_id', '=', options.integration_id);
  if (options.status !== undefined) query = query.where('status', '=', options.status);
  const before = decodeCursor(options.cursor);
  if (before !== undefined) query = query.where('id', '<', before);
  const rows = await query
    .orderBy('id', 'desc')
    .limit(options.limit + 1)
    .execute();
  return toPage(rows.map(fromRow), options.limit, (e) => e.id);
}
