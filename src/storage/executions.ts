import type { Selectable } from 'kysely';
import { newId } from '../core/ids.ts';
import type { Db } from './database.ts';
import { type ExecutionShown, type ExecutionWithResult, fromRow } from './execution-rows.ts';
import { decodeCursor, type Page, toPage } from './pagination.ts';
import type { ExecutionsTable } from './schema.ts';

// Tests and benchmarks reach these through this module, where they were first.
export { claimExecution, insertQueuedExecution, reclaimExecution } from './async-executions.ts';
export { ExecutionInserts, insertExecutions } from './execution-inserts.ts';
export type { Execution, ExecutionShown } from './execution-rows.ts';

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
 * The tenant's executions with the names of their callers, read as they are now: a key's (of this tenant only) or a
 * person's. Both are joined by primary key: one indexed lookup per row shown, on SQLite and PostgreSQL alike.
 */
function shownExecutions(db: Db, tenantId: string) {
  return db
    .selectFrom('executions')
    .leftJoin('api_keys', (join) =>
      join.onRef('api_keys.id', '=', 'executions.api_key_id').onRef('api_keys.tenant_id', '=', 'executions.tenant_id'),
    )
    .leftJoin('users', 'users.id', 'executions.user_id')
    .selectAll('executions')
    .select(['api_keys.name as api_key_name', 'users.name as user_name'])
    .where('executions.tenant_id', '=', tenantId);
}

type ShownRow = Selectable<ExecutionsTable> & { api_key_name: string | null; user_name: string | null };

function shownFromRow({ api_key_name, user_name, ...row }: ShownRow): ExecutionShown {
  return { ...fromRow(row), api_key_name, user_name };
}

const findRow = (db: Db, tenantId: string, id: string) =>
  shownExecutions(db, tenantId).where('executions.id', '=', id).executeTakeFirst();

/** One execution as the API shows it, without an async one's answer (a cancel answers this). */
export async function findShownExecution(db: Db, tenantId: string, id: string): Promise<ExecutionShown | undefined> {
  const row = await findRow(db, tenantId, id);
  return row && shownFromRow(row);
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
  const row = await findRow(db, tenantId, id);
  if (!row) return undefined;
  const execution = shownFromRow(row);
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
): Promise<Page<ExecutionShown>> {
  let query = shownExecutions(db, tenantId);
  if (options.integration_id !== undefined) query = query.where('executions.integration_id', '=', options.integration_id);
  if (options.status !== undefined) query = query.where('executions.status', '=', options.status);
  const before = decodeCursor(options.cursor);
  if (before !== undefined) query = query.where('executions.id', '<', before);
  const rows = await query
    .orderBy('executions.id', 'desc')
    .limit(options.limit + 1)
    .execute();
  return toPage(rows.map(shownFromRow), options.limit, (e) => e.id);
}
