import type { ExpressionBuilder, UpdateObject } from 'kysely';
import type { Db } from './database.ts';
import { type Execution, fromRow, type ResultColumns, rowOf } from './execution-rows.ts';
import type { Database } from './schema.ts';

/**
 * An async execution's row through its states: stored queued, claimed for a run (again when a run's process died),
 * finished or canceled, its answer dropped past its time; and the counts of those not yet finished.
 */

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
