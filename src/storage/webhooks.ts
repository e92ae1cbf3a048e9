import type { Selectable } from 'kysely';
import type { Db } from './database.ts';
import { decodeCursor, type Page, toPage } from './pagination.ts';
import type { WebhookDeliveriesTable, WebhookEventsTable, WebhooksTable } from './schema.ts';

/** A webhook endpoint as stored, its secrets still sealed (src/webhooks/delivery.ts opens them). */
export interface WebhookRecord {
  id: string;
  tenant_id: string;
  url: string;
  /** Event types, or `["*"]` for all of them. */
  events: string[];
  description: string | null;
  disabled: boolean;
  failing_since: string | null;
  previous_secret_expires_at: string | null;
  created_at: string;
  updated_at: string;
  /** Sealed `whsec_…`. */
  secret: string;
  /** Sealed; null when there was no rotation, or its overlap has been ended by another. */
  previous_secret: string | null;
}

/** One delivery attempt as the API shows it. */
export interface WebhookDelivery {
  id: string;
  webhook_id: string;
  event_id: string;
  event_type: string;
  attempt: number;
  http_status: number | null;
  duration_ms: number;
  error: string | null;
  next_attempt_at: string | null;
  created_at: string;
}

/** One attempt with what the receiver answered: the start of its body (docs/limits.md#webhooks), null when none came. */
export interface WebhookDeliveryDetail extends WebhookDelivery {
  response_body: string | null;
}

export type WebhookEvent = Selectable<WebhookEventsTable>;

function fromRow(row: Selectable<WebhooksTable>): WebhookRecord {
  return {
    id: row.id,
    tenant_id: row.tenant_id,
    url: row.url,
    events: JSON.parse(row.events) as string[],
    description: row.description,
    disabled: Number(row.disabled) === 1,
    failing_since: row.failing_since,
    previous_secret_expires_at: row.previous_secret_expires_at,
    created_at: row.created_at,
    updated_at: row.updated_at,
    secret: row.secret,
    previous_secret: row.previous_secret,
  };
}

export async function insertWebhook(db: Db, record: WebhookRecord): Promise<void> {
  await db
    .insertInto('webhooks')
    .values({ ...record, events: JSON.stringify(record.events), disabled: record.disabled ? 1 : 0 })
    .execute();
}

export async function findWebhook(db: Db, tenantId: string, id: string): Promise<WebhookRecord | undefined> {
  const row = await db
    .selectFrom('webhooks')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('id', '=', id)
    .executeTakeFirst();
  return row && fromRow(row);
}

/** Oldest first: ids sort by creation time, so the cursor is the last id seen. */
export async function listWebhooks(
  db: Db,
  tenantId: string,
  options: { limit: number; cursor?: string },
): Promise<Page<WebhookRecord>> {
  let query = db.selectFrom('webhooks').selectAll().where('tenant_id', '=', tenantId);
  const after = decodeCursor(options.cursor);
  if (after !== undefined) query = query.where('id', '>', after);
  const rows = await query
    .orderBy('id')
    .limit(options.limit + 1)
    .execute();
  return toPage(rows.map(fromRow), options.limit, (w) => w.id);
}

export async function countWebhooks(db: Db, tenantId: string): Promise<number> {
  const row = await db
    .selectFrom('webhooks')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('tenant_id', '=', tenantId)
    .executeTakeFirst();
  return Number(row?.n ?? 0);
}

/** The endpoints of a tenant that are not disabled: where its events go. */
export async function enabledWebhooks(db: Db, tenantId: string): Promise<WebhookRecord[]> {
  const rows = await db.selectFrom('webhooks').selectAll().where('tenant_id', '=', tenantId).where('disabled', '=', 0).execute();
  return rows.map(fromRow);
}

/** Every tenant with at least one endpoint not disabled. */
export async function tenantsWithWebhooks(db: Db): Promise<string[]> {
  const rows = await db.selectFrom('webhooks').select('tenant_id').distinct().where('disabled', '=', 0).execute();
  return rows.map((r) => r.tenant_id);
}

export type WebhookChanges = Partial<
  Pick<WebhooksTable, 'url' | 'description' | 'secret' | 'previous_secret' | 'previous_secret_expires_at' | 'failing_since'>
> & { events?: string[]; disabled?: boolean };

export async function updateWebhook(db: Db, tenantId: string, id: string, changes: WebhookChanges, at: string): Promise<void> {
  const { events, disabled, ...rest } = changes;
  await db
    .updateTable('webhooks')
    .set({
      ...rest,
      ...(events !== undefined && { events: JSON.stringify(events) }),
      ...(disabled !== undefined && { disabled: disabled ? 1 : 0 }),
      updated_at: at,
    })
    .where('tenant_id', '=', tenantId)
    .where('id', '=', id)
    .execute();
}

/**
 * Deletes the endpoint and its attempts' history; false when this tenant has no such endpoint. Two statements: run it
 * in a transaction (src/webhooks/endpoints.ts does, with the change's audit event).
 */
export async function deleteWebhook(db: Db, tenantId: string, id: string): Promise<boolean> {
  await db.deleteFrom('webhook_deliveries').where('tenant_id', '=', tenantId).where('webhook_id', '=', id).execute();
  const deleted = await db.deleteFrom('webhooks').where('tenant_id', '=', tenantId).where('id', '=', id).executeTakeFirst();
  return Number(deleted.numDeletedRows) === 1;
}

/**
 * The endpoint's run of failures goes on: `failing_since` is set to `at` unless a run had begun already. Returns when
 * the run began.
 */
export async function markFailing(db: Db, id: string, at: string): Promise<string> {
  await db.updateTable('webhooks').set({ failing_since: at }).where('id', '=', id).where('failing_since', 'is', null).execute();
  const row = await db.selectFrom('webhooks').select('failing_since').where('id', '=', id).executeTakeFirst();
  return row?.failing_since ?? at;
}

/** The endpoint answered: its run of failures, if any, is over. */
export async function markAnswering(db: Db, id: string): Promise<void> {
  await db
    .updateTable('webhooks')
    .set({ failing_since: null })
    .where('id', '=', id)
    .where('failing_since', 'is not', null)
    .execute();
}

/** Disables the endpoint; false when it was disabled (or deleted) already, so nothing changed. */
export async function disableWebhook(db: Db, id: string, at: string): Promise<boolean> {
  const result = await db
    .updateTable('webhooks')
    .set({ disabled: 1, updated_at: at })
    .where('id', '=', id)
    .where('disabled', '=', 0)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

export async function insertEvent(db: Db, event: WebhookEvent): Promise<void> {
  await db.insertInto('webhook_events').values(event).execute();
}

export async function findEvent(db: Db, tenantId: string, id: string): Promise<WebhookEvent | undefined> {
  return db.selectFrom('webhook_events').selectAll().where('tenant_id', '=', tenantId).where('id', '=', id).executeTakeFirst();
}

export async function insertDelivery(db: Db, tenantId: string, delivery: WebhookDeliveryDetail): Promise<void> {
  await db
    .insertInto('webhook_deliveries')
    .values({ ...delivery, tenant_id: tenantId, http_status: delivery.http_status ?? 0 })
    .execute();
}

/** The columns of an attempt as the list shows it: not the receiver's answer, which only the detail reads. */
const deliveryColumns = [
  'id',
  'webhook_id',
  'event_id',
  'event_type',
  'attempt',
  'http_status',
  'duration_ms',
  'error',
  'next_attempt_at',
  'created_at',
] as const;

function deliveryOf<R extends Omit<Selectable<WebhookDeliveriesTable>, 'tenant_id' | 'response_body'>>(row: R) {
  return {
    ...row,
    attempt: Number(row.attempt),
    http_status: Number(row.http_status) === 0 ? null : Number(row.http_status),
    duration_ms: Number(row.duration_ms),
  };
}

/** An endpoint's attempts, newest first. */
export async function listDeliveries(
  db: Db,
  tenantId: string,
  webhookId: string,
  options: { limit: number; cursor?: string },
): Promise<Page<WebhookDelivery>> {
  let query = db
    .selectFrom('webhook_deliveries')
    .select(deliveryColumns)
    .where('tenant_id', '=', tenantId)
    .where('webhook_id', '=', webhookId);
  const before = decodeCursor(options.cursor);
  if (before !== undefined) query = query.where('id', '<', before);
  const rows = await query
    .orderBy('id', 'desc')
    .limit(options.limit + 1)
    .execute();
  return toPage(rows.map(deliveryOf), options.limit, (d) => d.id);
}

/** One attempt of this tenant's endpoint, with the receiver's answer; undefined when there is none by that id. */
export async function findDelivery(
  db: Db,
  tenantId: string,
  webhookId: string,
  id: string,
): Promise<WebhookDeliveryDetail | undefined> {
  const row = await db
    .selectFrom('webhook_deliveries')
    .select([...deliveryColumns, 'response_body'])
    .where('tenant_id', '=', tenantId)
    .where('webhook_id', '=', webhookId)
    .where('id', '=', id)
    .executeTakeFirst();
  return row && { ...deliveryOf(row), response_body: row.response_body };
}

/** Whether an attempt with this id was recorded (a resend's job run twice finds its attempt made). */
export async function deliveryRecorded(db: Db, id: string): Promise<boolean> {
  return (await db.selectFrom('webhook_deliveries').select('id').where('id', '=', id).executeTakeFirst()) !== undefined;
}

/** The highest attempt number of the event at the endpoint so far; 0 when none was made. */
export async function lastAttemptNumber(db: Db, webhookId: string, eventId: string): Promise<number> {
  const row = await db
    .selectFrom('webhook_deliveries')
    .select((eb) => eb.fn.max('attempt').as('n'))
    .where('webhook_id', '=', webhookId)
    .where('event_id', '=', eventId)
    .executeTakeFirst();
  return Number(row?.n ?? 0);
}

/** Drops events and attempts older than `before` (their retries ended long ago); returns how many rows went. */
export async function pruneWebhookHistory(db: Db, before: string): Promise<number> {
  const deliveries = await db.deleteFrom('webhook_deliveries').where('created_at', '<', before).executeTakeFirst();
  const events = await db.deleteFrom('webhook_events').where('created_at', '<', before).executeTakeFirst();
  return Number(deliveries.numDeletedRows) + Number(events.numDeletedRows);
}
