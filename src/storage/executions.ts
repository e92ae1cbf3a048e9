import { newId } from '../core/ids.ts';
import type { Db } from './database.ts';
import { type Execution, type ExecutionWithResult, fromRow } from './execution-rows.ts';
import { decodeCursor, type Page, toPage } from './pagination.ts';

// Tests and benchmarks reach these through this module, where they were first.
export { claimExecution, insertQueuedExecution, reclaimExecution } from './async-executions.ts';
export { ExecutionInserts, insertExecutions } from './execution-inserts.ts';
export type { Execution } from './execution-rows.ts';

/** The executions log's ids, and what its reads show: one execution, or a page of them. */

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
