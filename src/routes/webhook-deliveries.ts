import type { FastifyInstance, FastifyRequest } from 'fastify';
import { requestSource } from '../audit/audit-log.ts';
import { caller } from '../auth/authenticate.ts';
import { ApiError } from '../core/errors.ts';
import { ok, okList } from '../http/envelope.ts';
import type { Db } from '../storage/database.ts';
import { findDelivery, findEvent, listDeliveries, type WebhookDeliveryDetail, type WebhookRecord } from '../storage/webhooks.ts';
import type { Webhooks } from '../webhooks/webhooks.ts';
import { failures, idParams, objectId, pageQuery, reply, security, tenantFailures } from './schemas.ts';
import { mayReadExecutions, noSuchWebhookReply, tags, webhookInTenant } from './webhooks.ts';

/** An endpoint's delivery attempts (docs/api.md#endpoints-webhooks): the list, one with its payload and answer, a resend. */

const webhookParams = idParams('id');
const deliveryParams = {
  type: 'object',
  required: ['id', 'delivery_id'],
  properties: { id: objectId, delivery_id: objectId },
} as const;
const noSuchDelivery = { 404: 'No such webhook in this tenant, or no such attempt of it.' } as const;

type DeliveryRequest = FastifyRequest<{ Params: { id: string; delivery_id: string } }>;

/** The attempt `{delivery_id}` of the endpoint `{id}` of the caller's tenant, with the endpoint; or 404. */
async function deliveryInTenant(
  db: Db,
  request: DeliveryRequest,
): Promise<{ webhook: WebhookRecord; delivery: WebhookDeliveryDetail }> {
  const webhook = await webhookInTenant(db, request);
  const delivery = await findDelivery(db, webhook.tenant_id, webhook.id, request.params.delivery_id);
  if (!delivery) throw new ApiError('not_found', `No delivery ${request.params.delivery_id} of webhook ${webhook.id}.`);
  return { webhook, delivery };
}

export function registerWebhookDeliveryRoutes(app: FastifyInstance, db: Db, webhooks: Webhooks): void {
  app.get<{ Params: { id: string }; Querystring: { limit: number; cursor?: string } }>(
    '/api/v1/webhooks/:id/deliveries',
    {
      config: { scope: 'webhooks.read' },
      schema: {
        tags,
        security,
        operationId: 'listWebhookDeliveries',
        summary: 'The endpoint’s delivery attempts, newest first.',
        params: webhookParams,
        querystring: { type: 'object', additionalProperties: false, properties: pageQuery },
        response: {
          200: reply('WebhookDeliveryListReply', 'A page of attempts.'),
          ...failures([...tenantFailures, 404], noSuchWebhookReply),
        },
      },
    },
    async (request) => {
      const webhook = await webhookInTenant(db, request);
      const page = await listDeliveries(db, webhook.tenant_id, webhook.id, request.query);
      return okList(page.items, page.nextCursor);
    },
  );

  app.get<{ Params: { id: string; delivery_id: string } }>(
    '/api/v1/webhooks/:id/deliveries/:delivery_id',
    {
      config: { scope: 'webhooks.read' },
      schema: {
        tags,
        security,
        operationId: 'getWebhookDelivery',
        summary: 'One attempt, with the event’s body as sent and the start of the receiver’s answer.',
        description: 'Also needs `executions.read`: the event carries an execution record (`403 insufficient_scope` otherwise).',
        params: deliveryParams,
        response: {
          200: reply('WebhookDeliveryDetailReply', 'The attempt, its payload and the receiver’s answer.'),
          ...failures([...tenantFailures, 404], noSuchDelivery),
        },
      },
    },
    async (request) => {
      mayReadExecutions(request, 'Reading a delivery’s payload');
      const { delivery } = await deliveryInTenant(db, request);
      const event = await findEvent(db, caller(request).tenantId, delivery.event_id);
      // The event's body is kept 30 days from the event, its attempts as long from each attempt: the last ones can outlive it.
      return ok({ ...delivery, payload: event ? (JSON.parse(event.payload) as unknown) : null });
    },
  );

  app.post<{ Params: { id: string; delivery_id: string } }>(
    '/api/v1/webhooks/:id/deliveries/:delivery_id/resend',
    {
      config: { scope: 'webhooks.write' },
      schema: {
        tags,
        security,
        operationId: 'resendWebhookDelivery',
        summary: 'Send the attempt’s event again, now, to this endpoint: a new attempt with the same `webhook-id`.',
        params: deliveryParams,
        response: {
          202: {
            ...reply('WebhookResendReply', 'Queued: the new attempt is listed under `delivery_id` once it is made.'),
            headers: { Location: { type: 'string', description: '`/api/v1/webhooks/{id}/deliveries/{delivery_id}`' } },
          },
          ...failures([...tenantFailures, 404, 409], {
            ...noSuchDelivery,
            409: '`conflict`: the endpoint is disabled (enable it first), or the event is no longer kept.',
          }),
        },
      },
    },
    async (request, reply) => {
      const { webhook, delivery } = await deliveryInTenant(db, request);
      if (webhook.disabled) {
        throw new ApiError('conflict', `Webhook ${webhook.id} is disabled; enable it (PATCH disabled: false) and resend again.`);
      }
      if (!(await findEvent(db, webhook.tenant_id, delivery.event_id))) {
        throw new ApiError('conflict', `The event ${delivery.event_id} is no longer kept (30 days); it cannot be sent again.`);
      }
      const id = await webhooks.resend(webhook, delivery, requestSource(request));
      return reply
        .code(202)
        .header('location', `/api/v1/webhooks/${encodeURIComponent(webhook.id)}/deliveries/${id}`)
        .send(ok({ delivery_id: id, webhook_id: webhook.id, event_id: delivery.event_id }));
    },
  );
}
