import { api, apiAll } from './api.js';

/**
 * The webhooks API as the console uses it: every call the Webhooks screen makes is here, so a change of the contract
 * is a change of this file.
 */

/** The events an endpoint can subscribe to; `*` is all of them, those added later included. */
export const webhookEvents = ['execution.succeeded', 'execution.failed', 'execution.canceled'];

/** Every endpoint of the tenant (all pages). */
export function listWebhooks(tenant) {
  return apiAll('/webhooks', { tenant });
}

/** Creates an endpoint; resolves to it with its signing `secret`, which the API shows this once. */
export async function createWebhook(tenant, { url, events, description }) {
  const body = { url, events };
  if (description) body.description = description;
  return (await api('/webhooks', { method: 'POST', tenant, body })).data;
}

export async function deleteWebhook(tenant, id) {
  return (await api(`/webhooks/${encodeURIComponent(id)}`, { method: 'DELETE', tenant })).data;
}

/** The endpoint's most recent delivery attempts, newest first. */
export async function listDeliveries(tenant, id, limit = 50) {
  return (await api(`/webhooks/${encodeURIComponent(id)}/deliveries?limit=${limit}`, { tenant })).data;
}

/** Queues a test event to the endpoint; it shows in the deliveries like any other. */
export async function sendTestEvent(tenant, id) {
  return (await api(`/webhooks/${encodeURIComponent(id)}/test`, { method: 'POST', tenant, body: {} })).data;
}

/** Changes an endpoint: any of `{url, events, description, disabled}`; resolves to the endpoint as it is then. */
export async function updateWebhook(tenant, id, changes) {
  return (await api(`/webhooks/${encodeURIComponent(id)}`, { method: 'PATCH', tenant, body: changes })).data;
}

/** A new signing secret; resolves to the endpoint with its new `secret`, which the API shows this once. */
export async function rotateWebhookSecret(tenant, id) {
  return (await api(`/webhooks/${encodeURIComponent(id)}/rotate-secret`, { method: 'POST', tenant, body: {} })).data;
}

/** One attempt with the event's body as sent (`payload`) and the start of the receiver's answer (`response_body`). */
export async function getDelivery(tenant, id, deliveryId) {
  const path = `/webhooks/${encodeURIComponent(id)}/deliveries/${encodeURIComponent(deliveryId)}`;
  return (await api(path, { tenant })).data;
}

/** Sends the attempt's event again, now; resolves to `{delivery_id, event_id}` of the attempt it will be listed as. */
export async function resendDelivery(tenant, id, deliveryId) {
  const path = `/webhooks/${encodeURIComponent(id)}/deliveries/${encodeURIComponent(deliveryId)}/resend`;
  return (await api(path, { method: 'POST', tenant, body: {} })).data;
}

/**
 * What an attempt's "next attempt" means now: none followed (`none`), the retry was made (`retried`: a later attempt of
 * the same event is listed), none will be made (`dropped`: the endpoint is disabled), it is due (`due`: its time has
 * passed, a worker takes it), or when it will be (`at`). `deliveries` is the list the attempt is in, newest first.
 */
export function nextAttemptState(delivery, deliveries, webhook, now = Date.now()) {
  if (!delivery.next_attempt_at) return { kind: 'none' };
  const later = deliveries.some((d) => d.event_id === delivery.event_id && d.attempt > delivery.attempt);
  if (later) return { kind: 'retried' };
  if (webhook.disabled) return { kind: 'dropped' };
  return Date.parse(delivery.next_attempt_at) <= now ? { kind: 'due' } : { kind: 'at', at: delivery.next_attempt_at };
}
