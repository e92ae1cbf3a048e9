import type { Selectable } from 'kysely';
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

/**
 * Records executes, in one statement. `error_message` can carry upstream text (a GraphQL error, a fault string), which
 * may hold a NUL that PostgreSQL's text refuses: it is stored as U+FFFD, the same on both databases, so the call is
 * recorded. `error_details` is stored as JSON text (where a NUL is the escape `\u0000`, which both keep).
 */
export async function insertExecutions(db: Db, rows: ReadonlyArray<{ tenantId: string; execution: Execution }>): Promise<void> {
  if (rows.length === 0) return;
  await db
    .insertInto('executions')
    .values(
      rows.map(({ tenantId, execution }) => ({
        tenant_id: tenantId,
        ...execution,
        error_message: execution.error_message?.replaceAll('\u0000', '\ufffd') ?? null,
        error_details: execution.error_details === null ? null : JSON.stringify(execution.error_details),
      })),
    )
    .execute();
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
