import { api } from './api.js';

/** The executions API as the console uses it (docs/api.md#endpoints-executions). */

/** Statuses of an execution that will still change: the console keeps such ones up to date. */
export const activeStatuses = ['queued', 'running'];
export const isActive = (execution) => activeStatuses.includes(execution.status);

/** One page of the log, newest first: `{success, data, pagination}`. */
export function listExecutions(tenant, { integration, status, limit }, cursor) {
  const q = new URLSearchParams({ limit: String(limit) });
  if (integration) q.set('integration_id', integration);
  if (status) q.set('status', status);
  if (cursor) q.set('cursor', cursor);
  return api(`/executions?${q}`, { tenant });
}

/** One execution; an async one with its `result` (or `result_expired`). */
export async function getExecution(tenant, id) {
  return (await api(`/executions/${encodeURIComponent(id)}`, { tenant })).data;
}

/** Cancels a queued execution and resolves to it; one that started meanwhile throws ApiFailure `conflict` (409). */
export async function cancelExecution(tenant, id) {
  return (await api(`/executions/${encodeURIComponent(id)}/cancel`, { method: 'POST', tenant, body: {} })).data;
}
