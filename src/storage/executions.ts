import { CompiledQuery, type ExpressionBuilder, type Selectable, SqliteAdapter, type UpdateObject } from 'kysely';
import { newId } from '../core/ids.ts';
import type { Db } from './database.ts';
import { decodeCursor, type Page, toPage } from './pagination.ts';
import type { Database, ExecutionsTable } from './schema.ts';

export type ExecutionStatus = 'queued' | 'running' | 'succeeded' | 'failed' | 'canceled';
export const finishedStatuses: readonly ExecutionStatus[] = ['succeeded', 'failed', 'canceled'];

/** One execute call as the log shows it; request bodies are never stored, an async one's answer is (`result`). */
export type Execution = Omit<
  ExecutionsTable,
  'tenant_id' | 'status' | 'error_details' | 'http_status' | 'mode' | 'result' | 'result_expires_at' | 'runs' | 'claim_token'
> & {
  mode: 'sync' | 'async';
  status: ExecutionStatus;
  /** The status the caller got (sync), or the one the synchronous call would have answered (async); null until then. */
  http_status: number | null;
  /** A failure's `details` as the caller got them; null for a success or a failure without details. */
  error_details: Record<string, unknown> | null;
};

/** An async execution as GET /executions/{id} shows it: with the answer, or `result_expired` once it is dropped. */
export type ExecutionWithResult = Execution & { result?: unknown; result_expired?: boolean };

/** What an execution's row holds beside the record: its answer, and when that is dropped. */
interface ResultColumns {
  result: string | null;
  result_expires_at: string | null;
}

const base36 = '0123456789abcdefghijklmnopqrstuvwxyz';
let lastExecutionId = '';
let lastExecutionMs = Number.NEGATIVE_INFINITY;

/** The id right after `id`: its suffix (time, then random) read as one base-36 number, plus one. */
function successor(id: string): string {
  for (let i = id.length - 1; id[i] !== '_'; i--) {
    const digit = base36.indexOf(id[i]);
    if (digit < base36.length - 1) return id.slice(0, i) + base36[digit + 1] + '0'.repeat(id.length - 1 - i);
  }
  throw new RangeError(`no successor for ${id}`);
}

/**
 * A new execution id (`exe_…`), greater than every one this process made before. `newId` sorts by the
 * millisecond only: calls in the same millisecond would otherwise be listed in random order, not newest first, so
 * they get the successor of the one before (no random part is drawn for them: under load most calls share one).
 */
export function newExecutionId(): string {
  const now = Date.now();
  if (now <= lastExecutionMs) {
    lastExecutionId = successor(lastExecutionId);
    return lastExecutionId;
  }
  lastExecutionMs = now;
  const id = newId('exe', now);
  lastExecutionId = id > lastExecutionId ? id : successor(lastExecutionId);
  return lastExecutionId;
}

function fromRow(row: Selectable<ExecutionsTable>): Execution {
  const { tenant_id: _tenant, result: _result, result_expires_at: _expires, runs: _runs, claim_token: _token, ...rest } = row;
  const httpStatus = Number(rest.http_status);
  return {
    ...rest,
    mode: rest.mode as Execution['mode'],
    status: rest.status as ExecutionStatus,
    http_status: httpStatus === 0 ? null : httpStatus,
    message_count: Number(rest.message_count),
    duration_ms: Number(rest.duration_ms),
    attempts: Number(rest.attempts),
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
  'mode',
  'attempts',
  'runs',
  'finished_at',
  'result',
  'result_expires_at',
] as const satisfies ReadonlyArray<keyof ExecutionsTable>;

/**
 * The row as stored, its keys in `columns` order and none undefined, with `kept` (an async call's answer) or none.
 * Every write of a row goes through here (the log's batches, a queued execution, its end). `error_message` can carry upstream text (a
 * GraphQL error, a fault string), which may hold a NUL that PostgreSQL's text refuses: it is stored as U+FFFD, the
 * same on both databases, so the call is recorded. Half a surrogate pair is stored as U+FFFD too, as binding it did
 * already: PostgreSQL's jsonb would refuse its escape and fail the whole batch. `error_details` is stored as JSON text
 * (where a NUL is the escape `\u0000`, which both keep).
 */
function rowOf(tenantId: string, execution: Execution, kept: ResultColumns = noResult): ExecutionsTable {
  return {
    id: execution.id,
    tenant_id: tenantId,
    integration_id: execution.integration_id,
    connector: execution.connector,
    operation: execution.operation,
    status: execution.status,
    http_status: execution.http_status ?? 0,
    error_code: execution.error_code ?? null,
    error_message: execution.error_message?.replaceAll('\u0000', '\ufffd').toWellFormed() ?? null,
    error_details: execution.error_details === null ? null : JSON.stringify(execution.error_details),
    message_count: execution.message_count,
    duration_ms: execution.duration_ms,
    api_key_id: execution.api_key_id ?? null,
    user_id: execution.user_id ?? null,
    request_id: execution.request_id,
    started_at: execution.started_at,
    mode: execution.mode,
    attempts: execution.attempts,
    // Every row is inserted before any run: queued, or a synchronous call's (claimExecution counts the runs).
    runs: 0,
    claim_token: null,
    finished_at: execution.finished_at,
    result: kept.result,
    result_expires_at: kept.result_expires_at,
  };
}

/** A row without an answer kept: every synchronous call's, and an async one's until it ends. */
const noResult: ResultColumns = { result: null, result_expires_at: null };

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

/**
 * One execution; an async one with its `result` (the answer as JSON), or `result: null, result_expired: true` once it
 * was kept its time. `now` is when "now" is (tests set it).
 */
export async function findExecution(
  db: Db,
  tenantId: string,
  id: string,
  now = new Date(),
): Promise<ExecutionWithResult | undefined> {
  const row = await db
    .selectFrom('executions')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('id', '=', id)
    .executeTakeFirst();
  if (!row) return undefined;
  const execution = fromRow(row);
  if (execution.mode !== 'async') return execution;
  const expired = row.result_expires_at !== null && row.result_expires_at <= now.toISOString();
  if (expired) return { ...execution, result: null, result_expired: true };
  return { ...execution, result: row.result === null ? null : JSON.parse(row.result), result_expired: false };
}

/** Stores an async execution, queued, within `db` (the transaction that also adds its job). */
export async function insertQueuedExecution(db: Db, tenantId: string, execution: Execution): Promise<void> {
  await db.insertInto('executions').values(rowOf(tenantId, execution)).execute();
}

/**
 * Moves a queued execution on (`running` for a run, `canceled`) in one conditional update, so that of two callers only
 * one does; returns whether this one did, and the row as it is afterwards (undefined when the tenant has none).
 */
async function leaveQueue(
  db: Db,
  tenantId: string,
  id: string,
  change:
    | UpdateObject<Database, 'executions'>
    | ((eb: ExpressionBuilder<Database, 'executions'>) => UpdateObject<Database, 'executions'>),
): Promise<{ changed: boolean; execution: Execution | undefined; runs: number; claimToken: string | null }> {
  const updated = await db
    .updateTable('executions')
    .set(change)
    .where('tenant_id', '=', tenantId)
    .where('id', '=', id)
    .where('status', '=', 'queued')
    .executeTakeFirst();
  const row = await db
    .selectFrom('executions')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('id', '=', id)
    .executeTakeFirst();
  return {
    changed: Number(updated.numUpdatedRows) === 1,
    execution: row && fromRow(row),
    runs: Number(row?.runs ?? 0),
    claimToken: row?.claim_token ?? null,
  };
}

/**
 * Claims a queued execution for a run: `queued` becomes `running`, `runs` grows and `claim_token` becomes the run's
 * `token`, in one conditional update, so of two workers given the same job only one runs it. Returns the row as it is
 * after the attempt (claimed or not). Asked again with the same token (its first answer was lost with its connection),
 * it says claimed when that first update did take: the run is its own, and nothing of it was sent.
 */
export async function claimExecution(
  db: Db,
  tenantId: string,
  id: string,
  token: string,
): Promise<{ claimed: boolean; execution: Execution | undefined; runs: number }> {
  const { changed, execution, runs, claimToken } = await leaveQueue(db, tenantId, id, (eb) => ({
    status: 'running',
    runs: eb('runs', '+', 1),
    claim_token: token,
  }));
  const ours = changed || (execution?.status === 'running' && claimToken === token);
  return { claimed: ours, execution, runs };
}

/**
 * Runs a running execution again (its earlier run's process died): `runs` grows, only while it is still `running`
 * with the runs it was read with, so two workers that find it do not both run it.
 */
export async function reclaimExecution(db: Db, tenantId: string, id: string, runs: number, token: string): Promise<boolean> {
  const updated = await db
    .updateTable('executions')
    .set({ runs: runs + 1, claim_token: token })
    .where('tenant_id', '=', tenantId)
    .where('id', '=', id)
    .where('status', '=', 'running')
    .where((eb) => eb.or([eb('runs', '=', runs), eb.and([eb('runs', '=', runs + 1), eb('claim_token', '=', token)])]))
    .executeTakeFirst();
  return Number(updated.numUpdatedRows) === 1;
}

/** Ends a running execution with its outcome and answer; false when it was not running (nothing changed). */
export async function finishExecution(db: Db, tenantId: string, execution: Execution, kept: ResultColumns): Promise<boolean> {
  const ended = rowOf(tenantId, execution, kept);
  const updated = await db
    .updateTable('executions')
    .set({
      status: ended.status,
      http_status: ended.http_status,
      error_code: ended.error_code,
      error_message: ended.error_message,
      error_details: ended.error_details,
      message_count: ended.message_count,
      duration_ms: ended.duration_ms,
      attempts: ended.attempts,
      finished_at: ended.finished_at,
      result: ended.result,
      result_expires_at: ended.result_expires_at,
    })
    .where('tenant_id', '=', tenantId)
    .where('id', '=', ended.id)
    .where('status', '=', 'running')
    .executeTakeFirst();
  return Number(updated.numUpdatedRows) === 1;
}

/**
 * Cancels a queued execution. `canceled` when it was queued; otherwise what it is (`running`, a finished status), or
 * undefined when this tenant has no such execution.
 */
export async function cancelExecution(
  db: Db,
  tenantId: string,
  id: string,
  now: string,
): Promise<{ canceled: boolean; execution: Execution | undefined }> {
  const { changed, execution } = await leaveQueue(db, tenantId, id, { status: 'canceled', finished_at: now });
  return { canceled: changed, execution };
}

/** Drops the answers kept past their time (the rows stay, with `result_expired`). */
export async function dropExpiredResults(db: Db, now: string): Promise<number> {
  const updated = await db
    .updateTable('executions')
    .set({ result: null })
    .where('result_expires_at', '<=', now)
    .where('result', 'is not', null)
    .executeTakeFirst();
  return Number(updated.numUpdatedRows);
}

/** How many of the tenant's executions are queued, counted up to `upTo` (enough to compare with a cap). */
export async function queuedOf(db: Db, tenantId: string, upTo: number): Promise<number> {
  // Counted where the rows are (at most `upTo` of them read), not brought over to be counted on every accept.
  const queued = db
    .selectFrom('executions')
    .select('id')
    .where('status', '=', 'queued')
    .where('tenant_id', '=', tenantId)
    .limit(upTo)
    .as('queued');
  const row = await db
    .selectFrom(queued)
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirst();
  return Number(row?.n ?? 0);
}

/** Executions not yet finished, in every tenant: how many are queued and running, and the oldest queued one's start. */
export async function unfinishedExecutions(db: Db): Promise<{ queued: number; running: number; oldestQueuedAt: string | null }> {
  const rows = await db
    .selectFrom('executions')
    .select(['status', (eb) => eb.fn.countAll<number>().as('n'), (eb) => eb.fn.min('started_at').as('oldest')])
    .where('status', 'in', ['queued', 'running'])
    .groupBy('status')
    .execute();
  const of = (status: string) => rows.find((r) => r.status === status);
  return {
    queued: Number(of('queued')?.n ?? 0),
    running: Number(of('running')?.n ?? 0),
    oldestQueuedAt: (of('queued')?.oldest as string | undefined) ?? null,
  };
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
