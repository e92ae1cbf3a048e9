import { type AuditSource, changedPaths, inTransaction, recordChange } from '../audit/audit-log.ts';
import { ApiError } from '../core/errors.ts';
import { newId } from '../core/ids.ts';
import type { EgressPolicy } from '../egress/policy.ts';
import { executionEventTypes } from '../execution/events.ts';
import { encryptSecret } from '../secrets/cipher.ts';
import type { Db } from '../storage/database.ts';
import {
  countWebhooks,
  deleteWebhook,
  findWebhook,
  insertWebhook,
  updateWebhook,
  type WebhookChanges,
  type WebhookRecord,
} from '../storage/webhooks.ts';
import { secretContext } from './delivery.ts';
import { newWebhookSecret } from './signature.ts';
import { checkWebhookUrl } from './url.ts';

/** The types an endpoint may ask for; `*` alone asks for all of them. */
export const subscribableEvents: readonly string[] = [...executionEventTypes, '*'];

/** Endpoints one tenant may have: each event costs a job per endpoint. */
export const maxWebhooksPerTenant = 20;

export interface NewWebhookInput {
  url: string;
  events: string[];
  description?: string | null;
}

/** What PATCH may change; a field left out stays as it is. */
export interface WebhookPatch {
  url?: string;
  events?: string[];
  description?: string | null;
  disabled?: boolean;
}

/** How long a rotated-out secret keeps signing. */
export const rotationOverlapMs = 24 * 3_600_000;

/** The fields a new endpoint is given, as its `webhook.created` event names them (never the secret's value). */
const newWebhookFields = ['url', 'events', 'description'];

const target = (id: string) => ({ type: 'webhook', id });

export function noSuchWebhook(id: string): ApiError {
  return new ApiError('not_found', `No webhook ${id}.`);
}

/** `*` means every type: listed with others it reads as a mistake. */
export function checkEvents(list: readonly string[] | undefined): void {
  if (list !== undefined && list.length > 1 && list.includes('*')) {
    const message = '"*" stands for every event type and is listed alone';
    throw new ApiError('validation_failed', `events: ${message}.`, { issues: [{ path: 'events', message }] });
  }
}

/** The endpoint as the API shows it: never its secrets. */
export function toWebhookObject(webhook: WebhookRecord) {
  const { secret: _secret, previous_secret: _previous, ...shown } = webhook;
  return shown;
}

/** Seals a secret for this endpoint with the master key. */
export function sealSecret(masterKey: Buffer, tenantId: string, webhookId: string, secret: string): string {
  return encryptSecret(masterKey, secret, secretContext(tenantId, webhookId));
}

/**
 * Creates an endpoint (the API's POST /webhooks and the CLI's `webhooks create`): the URL checked against the webhook
 * egress policy, the tenant's count bounded, a new secret sealed; stored with its `webhook.created` event. Returns the
 * record and the secret, shown this once.
 */
export async function createWebhook(
  db: Db,
  masterKey: Buffer,
  policy: EgressPolicy,
  tenantId: string,
  input: NewWebhookInput,
  at: string,
  source: AuditSource,
): Promise<{ record: WebhookRecord; secret: string }> {
  checkEvents(input.events);
  const url = checkWebhookUrl(input.url, policy);
  const id = newId('whk');
  const secret = newWebhookSecret();
  const record: WebhookRecord = {
    id,
    tenant_id: tenantId,
    url,
    events: input.events,
    description: input.description ?? null,
    disabled: false,
    failing_since: null,
    previous_secret_expires_at: null,
    created_at: at,
    updated_at: at,
    secret: sealSecret(masterKey, tenantId, id, secret),
    previous_secret: null,
  };
  await inTransaction(db, async (tx) => {
    if ((await countWebhooks(tx, tenantId)) >= maxWebhooksPerTenant) {
      throw new ApiError('conflict', `This tenant has ${maxWebhooksPerTenant} webhooks already; delete one first.`);
    }
    await insertWebhook(tx, record);
    await recordChange(tx, tenantId, source, { action: 'webhook.created', target: target(id), changes: newWebhookFields });
  });
  return { record, secret };
}

/** The fields a person sets, as `webhook.updated` compares them. */
const settable = (w: Pick<WebhookRecord, 'url' | 'events' | 'description' | 'disabled'>) => ({
  url: w.url,
  events: w.events,
  description: w.description,
  disabled: w.disabled,
});

/**
 * Changes an endpoint (PATCH /webhooks/{id}): what differs from what it holds is stored with one `webhook.updated`
 * event naming the fields that changed. A patch that changes nothing writes nothing, no event either, and answers the
 * endpoint as it is. Enabling a disabled endpoint starts its run of failures over (five more days).
 */
export async function changeWebhook(
  db: Db,
  policy: EgressPolicy,
  tenantId: string,
  id: string,
  patch: WebhookPatch,
  at: string,
  source: AuditSource,
): Promise<WebhookRecord> {
  return inTransaction(db, async (tx) => {
    const before = await findWebhook(tx, tenantId, id);
    if (!before) throw noSuchWebhook(id);
    checkEvents(patch.events);
    if (patch.url !== undefined) checkWebhookUrl(patch.url, policy);
    const wanted = Object.fromEntries(Object.entries(patch).filter(([, value]) => value !== undefined));
    const changed = changedPaths(settable(before), { ...settable(before), ...wanted }, '');
    if (changed.length === 0) return before;
    const changes: WebhookChanges = Object.fromEntries(changed.map((field) => [field, wanted[field]]));
    if (changes.disabled === false) changes.failing_since = null;
    await updateWebhook(tx, tenantId, id, changes, at);
    await recordChange(tx, tenantId, source, { action: 'webhook.updated', target: target(id), changes: changed });
    return (await findWebhook(tx, tenantId, id)) as WebhookRecord;
  });
}

/** Deletes an endpoint with its history and its `webhook.deleted` event; false when the tenant has no such endpoint. */
export async function removeWebhook(db: Db, tenantId: string, id: string, source: AuditSource): Promise<boolean> {
  return inTransaction(db, async (tx) => {
    if (!(await deleteWebhook(tx, tenantId, id))) return false;
    await recordChange(tx, tenantId, source, { action: 'webhook.deleted', target: target(id), changes: [] });
    return true;
  });
}

/**
 * A new signing secret for the endpoint, with its `webhook.secret_rotated` event (`changes: ["secret"]`, never a
 * value); the old one also signs for `rotationOverlapMs` from `at`. Returns the endpoint and the secret, shown this once.
 */
export async function rotateWebhookSecret(
  db: Db,
  masterKey: Buffer,
  tenantId: string,
  id: string,
  at: Date,
  source: AuditSource,
): Promise<{ record: WebhookRecord; secret: string }> {
  const secret = newWebhookSecret();
  const record = await inTransaction(db, async (tx) => {
    const webhook = await findWebhook(tx, tenantId, id);
    if (!webhook) throw noSuchWebhook(id);
    const changes = {
      secret: sealSecret(masterKey, tenantId, id, secret),
      previous_secret: webhook.secret,
      previous_secret_expires_at: new Date(at.getTime() + rotationOverlapMs).toISOString(),
    };
    await updateWebhook(tx, tenantId, id, changes, at.toISOString());
    await recordChange(tx, tenantId, source, { action: 'webhook.secret_rotated', target: target(id), changes: ['secret'] });
    return (await findWebhook(tx, tenantId, id)) as WebhookRecord;
  });
  return { record, secret };
}
