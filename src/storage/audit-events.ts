import type { Selectable } from 'kysely';
import type { Db } from './database.ts';
import { decodeCursor, type Page, toPage } from './pagination.ts';
import type { AuditEventsTable } from './schema.ts';

/** An audit event as the API shows it (docs/audit.md#the-event). */
export interface AuditEvent {
  id: string;
  at: string;
  action: string;
  actor: { type: string; id: string; name?: string };
  ip: string | null;
  request_id: string | null;
  target: { type: string; id: string };
  changes: string[];
}

/** The tenant of events about a person who is a member of none yet (docs/audit.md#events-about-a-person). */
export const unplacedTenant = '';

function fromRow(row: Selectable<AuditEventsTable>): AuditEvent {
  return {
    id: row.id,
    at: row.at,
    action: row.action,
    actor: { type: row.actor_type, id: row.actor_id, ...(row.actor_name !== null && { name: row.actor_name }) },
    ip: row.ip,
    request_id: row.request_id,
    target: { type: row.target_type, id: row.target_id },
    changes: JSON.parse(row.changes) as string[],
  };
}

export function toAuditRow(tenantId: string, event: AuditEvent): AuditEventsTable {
  return {
    id: event.id,
    tenant_id: tenantId,
    at: event.at,
    action: event.action,
    actor_type: event.actor.type,
    actor_id: event.actor.id,
    actor_name: event.actor.name ?? null,
    ip: event.ip,
    request_id: event.request_id,
    target_type: event.target.type,
    target_id: event.target.id,
    changes: JSON.stringify(event.changes),
  };
}

export async function insertAuditEvents(db: Db, rows: AuditEventsTable[]): Promise<void> {
  if (rows.length > 0) await db.insertInto('audit_events').values(rows).execute();
}

export interface AuditQuery {
  limit: number;
  cursor?: string;
  action?: string;
  actor_id?: string;
  target_id?: string;
  /** RFC 3339: at or after `since`, before `until`. */
  since?: string;
  until?: string;
}

/** The least id an event made at `time` or later can have: ids start with their millisecond (src/core/ids.ts). */
const idAt = (time: string) => `aud_${Date.parse(time).toString(36).padStart(9, '0')}`;

/** A tenant's events, newest first. */
export async function listAuditEvents(db: Db, tenantId: string, query: AuditQuery): Promise<Page<AuditEvent>> {
  let select = db.selectFrom('audit_events').selectAll().where('tenant_id', '=', tenantId);
  const after = decodeCursor(query.cursor);
  if (after !== undefined) select = select.where('id', '<', after);
  if (query.action !== undefined) select = select.where('action', '=', query.action);
  if (query.actor_id !== undefined) select = select.where('actor_id', '=', query.actor_id);
  if (query.target_id !== undefined) select = select.where('target_id', '=', query.target_id);
  // A time window as id bounds, so it reads the tenant's index.
  if (query.since !== undefined) select = select.where('id', '>=', idAt(query.since));
  if (query.until !== undefined) select = select.where('id', '<', idAt(query.until));
  const rows = await select
    .orderBy('id', 'desc')
    .limit(query.limit + 1)
    .execute();
  return toPage(rows.map(fromRow), query.limit, (e) => e.id);
}

/** The events about a person kept until they join a tenant, oldest first. */
export async function unplacedEventsOf(db: Db, userId: string): Promise<AuditEvent[]> {
  const rows = await db
    .selectFrom('audit_events')
    .selectAll()
    .where('tenant_id', '=', unplacedTenant)
    .where('target_type', '=', 'user')
    .where('target_id', '=', userId)
    .orderBy('id')
    .execute();
  return rows.map(fromRow);
}

export async function deleteAuditEvents(db: Db, ids: string[]): Promise<void> {
  if (ids.length > 0) await db.deleteFrom('audit_events').where('id', 'in', ids).execute();
}

/** Drops the events older than `before`; how many went. */
export async function pruneAuditEvents(db: Db, before: string): Promise<number> {
  const result = await db.deleteFrom('audit_events').where('at', '<', before).executeTakeFirst();
  return Number(result.numDeletedRows);
}
