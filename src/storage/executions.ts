import type { Selectable } from 'kysely';
import { newId } from '../ids.ts';
import type { Db } from './database.ts';
import { decodeCursor, type Page, toPage } from './pagination.ts';
import type { ExecutionsTable } from './schema.ts';

export type ExecutionStatus = 'queued' | 'running' | 'succeeded' | 'failed' | 'canceled';
export const finishedStatuses: readonly ExecutionStatus[] = ['succeeded', 'failed', 'canceled'];

/** One execute call as the log shows it; request bodies are never stored, an async one's answer is (`result`). */
export type Execution = Omit<
  ExecutionsTable,
  'tenant_id' | 'status' | 'error_details' | 'http_status' | 'mode' | 'result' | 'result_expires_at'
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
  const { tenant_id: _tenant, result: _result, result_expires_at: _expires, ...rest } = row;
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

/** The columns as stored: a NUL in upstream text as U+FFFD, details as JSON text, no status yet as 0. */
function toRow(tenantId: string, execution: Execution, result: ResultColumns = { result: null, result_expires_at: null }) {
  return {
    tenant_id: tenantId,
    ...execution,
    http_status: execution.http_status ?? 0,
    error_message: execution.error_message?.replaceAll('\u0000', '\ufffd') ?? null,
    error_details: execution.error_details === null ? null : JSON.stringify(execution.error_details),
    ...result,
  };
}

/**
 * Records executes, in one statement. `error_message` can carry upstream text (a GraphQL error, a fault string), which
 * may hold a NUL that PostgreSQL's text refuses: it is stored as U+FFFD, the same on both databases, so the call is
 * recorded. `error_details` is stored as JSON text (where a NUL is the escape `\u0000`, which both keep).
 */
export async function insertExecutions(db: Db, rows: ReadonlyArray<{ tenantId: string; execution: Execution }>): Promise<void> {
  if (rows.length === 0) return;
  await db
    .insertInto('executions')
    .values(rows.map(({ tenantId, execution }) => toRow(tenantId, execution)))
    .execute();
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
  await db.insertInto('executions').values(toRow(tenantId, execution)).execute();
}

/**
 * Claims a queued execution for a run: `queued` becomes `running` and `attempts` grows, in one conditional update, so
 * of two workers given the same job only one runs it. Returns the row as it is after the attempt (claimed or not).
 */
export async function claimExecution(
  db: Db,
  tenantId: string,
  id: string,
): Promise<{ claimed: boolean; execution: Execution | undefined }> {
  const updated = await db
    .updateTable('executions')
    .set((eb) => ({ status: 'running', attempts: eb('attempts', '+', 1) }))
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
  return { claimed: Number(updated.numUpdatedRows) === 1, execution: row && fromRow(row) };
}

/**
 * Runs a running execution again (its earlier run's process died): `attempts` grows, only while it is still
 * `running` with the attempts it was read with, so two workers that find it do not both run it.
 */
export async function reclaimExecution(db: Db, tenantId: string, id: string, attempts: number): Promise<boolean> {
  const updated = await db
    .updateTable('executions')
    .set({ attempts: attempts + 1 })
    .where('tenant_id', '=', tenantId)
    .where('id', '=', id)
    .where('status', '=', 'running')
    .where('attempts', '=', attempts)
    .executeTakeFirst();
  return Number(updated.numUpdatedRows) === 1;
}

/** Ends a running execution with its outcome and answer; false when it was not running (nothing changed). */
export async function finishExecution(db: Db, tenantId: string, execution: Execution, result: ResultColumns): Promise<boolean> {
  const { id, status, http_status, error_code, error_message, error_details, message_count, duration_ms, finished_at } = toRow(
    tenantId,
    execution,
    result,
  );
  const updated = await db
    .updateTable('executions')
    .set({ status, http_status, error_code, error_message, error_details, message_count, duration_ms, finished_at, ...result })
    .where('tenant_id', '=', tenantId)
    .where('id', '=', id)
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
  const updated = await db
    .updateTable('executions')
    .set({ status: 'canceled', finished_at: now })
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
  return { canceled: Number(updated.numUpdatedRows) === 1, execution: row && fromRow(row) };
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
