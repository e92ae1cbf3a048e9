import { api } from './api.js';

/**
 * The webhooks API as the console uses it: every call the Webhooks screen makes is here, so a change of the contract
 * is a change of this file.
 */

/** The events an endpoint can subscribe to; `*` is all of them, those added later included. */
export const webhookEvents = ['execution.succeeded', 'execution.failed', 'execution.canceled'];

/** Every endpoint of the tenant (all pages). */
export async function listWebhooks(tenant) {
  const all = [];
  let cursor = null;
  do {
    const page = await api(`/webhooks?limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, { tenant });
    all.push(...page.data);
    cursor = page.pagination?.next_cursor ?? null;
  } while (cursor && all.length < 1000);
  return all;
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
