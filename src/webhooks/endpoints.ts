import { ApiError } from '../core/errors.ts';
import { newId } from '../core/ids.ts';
import type { EgressPolicy } from '../egress/policy.ts';
import { executionEventTypes } from '../execution/events.ts';
import { encryptSecret } from '../secrets/cipher.ts';
import type { Db } from '../storage/database.ts';
import { countWebhooks, insertWebhook, type WebhookRecord } from '../storage/webhooks.ts';
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
 * egress policy, the tenant's count bounded, a new secret sealed. Returns the record and the secret, shown this once.
 */
export async function createWebhook(
  db: Db,
  masterKey: Buffer,
  policy: EgressPolicy,
  tenantId: string,
  input: NewWebhookInput,
  at: string,
): Promise<{ record: WebhookRecord; secret: string }> {
  checkEvents(input.events);
  const url = checkWebhookUrl(input.url, policy);
  if ((await countWebhooks(db, tenantId)) >= maxWebhooksPerTenant) {
    throw new ApiError('conflict', `This tenant has ${maxWebhooksPerTenant} webhooks already; delete one first.`);
  }
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
  await insertWebhook(db, record);
  return { record, secret };
}
