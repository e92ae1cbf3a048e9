import type { FastifyInstance, FastifyRequest } from 'fastify';
import { requestSource } from '../audit/audit-log.ts';
import { caller } from '../auth/authenticate.ts';
import { hasScope } from '../auth/scopes.ts';
import type { AppContext } from '../context.ts';
import { ApiError } from '../core/errors.ts';
import type { EgressPolicy } from '../egress/policy.ts';
import { ok, okList } from '../http/envelope.ts';
import type { Db } from '../storage/database.ts';
import { findWebhook, listWebhooks, type WebhookRecord } from '../storage/webhooks.ts';
import {
  changeWebhook,
  createWebhook,
  maxWebhooksPerTenant,
  type NewWebhookInput,
  noSuchWebhook,
  removeWebhook,
  rotateWebhookSecret,
  subscribableEvents,
  toWebhookObject,
  type WebhookPatch,
} from '../webhooks/endpoints.ts';
import type { Webhooks } from '../webhooks/webhooks.ts';
import { bodyFailures, failures, idParams, pageQuery, reply, security, tenantFailures } from './schemas.ts';

export const tags = ['Webhooks'];
const webhookParams = idParams('id');
export const noSuchWebhookReply = { 404: 'No such webhook in this tenant.' } as const;

/**
 * Creating or changing an endpoint also needs `executions.read`: its events carry the executions of every caller of
 * the tenant, which `webhooks.write` alone does not let a key read (docs/api.md). So does reading an event as it was
 * sent (a delivery's `payload`). `doing` says what, for the refusal: "Creating or changing a webhook".
 */
export function mayReadExecutions(request: FastifyRequest, doing = 'Creating or changing a webhook'): void {
  const { scopes, role } = caller(request);
  if (hasScope(scopes, 'executions.read')) return;
  const yours = role === null ? '' : ` (your role here is ${role})`;
  throw new ApiError(
    'insufficient_scope',
    `${doing} needs the executions.read scope as well: its events carry every execution of the tenant${yours}.`,
    { required_scope: 'executions.read', granted_scopes: scopes },
  );
}

/** The endpoint `{id}` of the caller's tenant, or 404 (another tenant's too). */
export async function webhookInTenant(db: Db, request: FastifyRequest<{ Params: { id: string } }>): Promise<WebhookRecord> {
  const found = await findWebhook(db, caller(request).tenantId, request.params.id);
  if (!found) throw noSuchWebhook(request.params.id);
  return found;
}

const url = { type: 'string', minLength: 1, maxLength: 2048, pattern: '^[Hh][Tt][Tt][Pp][Ss]?://[^\\s]+$' } as const;
const events = {
  type: 'array',
  minItems: 1,
  maxItems: subscribableEvents.length - 1,
  uniqueItems: true,
  items: { type: 'string', enum: subscribableEvents },
  description: 'The event types to receive, or `["*"]` for all.',
} as const;
const description = { type: ['string', 'null'], maxLength: 500 } as const;

export function registerWebhookRoutes(app: FastifyInstance, ctx: AppContext, webhooks: Webhooks, policy: EgressPolicy): void {
  const db = ctx.storage.db;
  const now = () => webhooks.now().toISOString();

  app.post<{ Body: NewWebhookInput }>(
    '/api/v1/webhooks',
    {
      config: { scope: 'webhooks.write' },
      schema: {
        tags,
        security,
        operationId: 'createWebhook',
        summary: 'Add an endpoint that receives events; its signing secret is returned only here.',
        body: {
          type: 'object',
          required: ['url', 'events'],
          additionalProperties: false,
          properties: { url, events, description },
          examples: [{ url: 'https://hooks.example.com/interchange', events: ['execution.failed'], description: 'alerts' }],
        },
        response: {
          201: reply('NewWebhookReply', 'The endpoint, with its secret (shown this once).'),
          ...failures([...tenantFailures, ...bodyFailures, 409, 422], {
            409: `\`conflict\`: the tenant has ${maxWebhooksPerTenant} webhooks already.`,
            422: '`egress_denied`: the URL’s host is an address the egress policy refuses.',
          }),
        },
      },
    },
    async (request, reply) => {
      mayReadExecutions(request);
      const { tenantId } = caller(request);
      const { record, secret } = await createWebhook(
        db,
        ctx.masterKey,
        policy,
        tenantId,
        request.body,
        now(),
        requestSource(request),
      );
      await webhooks.refresh();
      return reply.code(201).send(ok({ ...toWebhookObject(record), secret }));
    },
  );

  app.get<{ Querystring: { limit: number; cursor?: string } }>(
    '/api/v1/webhooks',
    {
      config: { scope: 'webhooks.read' },
      schema: {
        tags,
        security,
        operationId: 'listWebhooks',
        summary: "This tenant's webhook endpoints, oldest first.",
        querystring: { type: 'object', additionalProperties: false, properties: pageQuery },
        response: { 200: reply('WebhookListReply', 'A page of endpoints.'), ...failures(tenantFailures) },
      },
    },
    async (request) => {
      const page = await listWebhooks(db, caller(request).tenantId, request.query);
      return okList(page.items.map(toWebhookObject), page.nextCursor);
    },
  );

  app.get<{ Params: { id: string } }>(
    '/api/v1/webhooks/:id',
    {
      config: { scope: 'webhooks.read' },
      schema: {
        tags,
        security,
        operationId: 'getWebhook',
        summary: 'One webhook endpoint.',
        params: webhookParams,
        response: { 200: reply('WebhookReply', 'The endpoint.'), ...failures([...tenantFailures, 404], noSuchWebhookReply) },
      },
    },
    async (request) => ok(toWebhookObject(await webhookInTenant(db, request))),
  );

  app.patch<{ Params: { id: string }; Body: WebhookPatch }>(
    '/api/v1/webhooks/:id',
    {
      config: { scope: 'webhooks.write' },
      schema: {
        tags,
        security,
        operationId: 'updateWebhook',
        summary: 'Change an endpoint’s URL, events or description, or enable (`disabled: false`) or disable it.',
        params: webhookParams,
        body: {
          type: 'object',
          minProperties: 1,
          additionalProperties: false,
          properties: { url, events, description, disabled: { type: 'boolean' } },
          examples: [{ disabled: false }, { events: ['*'] }],
        },
        response: {
          200: reply('WebhookReply', 'The endpoint as changed (as it is, when the body changes nothing).'),
          ...failures([...tenantFailures, ...bodyFailures, 404, 422], {
            ...noSuchWebhookReply,
            422: '`egress_denied`: the URL’s host is an address the egress policy refuses.',
          }),
        },
      },
    },
    async (request) => {
      mayReadExecutions(request);
      const { tenantId } = caller(request);
      const changed = await changeWebhook(db, policy, tenantId, request.params.id, request.body, now(), requestSource(request));
      await webhooks.refresh();
      return ok(toWebhookObject(changed));
    },
  );

  app.delete<{ Params: { id: string } }>(
    '/api/v1/webhooks/:id',
    {
      config: { scope: 'webhooks.write' },
      schema: {
        tags,
        security,
        operationId: 'deleteWebhook',
        summary: 'Delete an endpoint, with its delivery history; its pending deliveries are dropped.',
        params: webhookParams,
        response: {
          200: reply('DeletedWebhookReply', 'The endpoint is deleted.'),
          ...failures([...tenantFailures, 404], noSuchWebhookReply),
        },
      },
    },
    async (request) => {
      const { tenantId } = caller(request);
      if (!(await removeWebhook(db, tenantId, request.params.id, requestSource(request)))) {
        throw noSuchWebhook(request.params.id);
      }
      await webhooks.refresh();
      return ok({ id: request.params.id, deleted: true as const });
    },
  );

  app.post<{ Params: { id: string } }>(
    '/api/v1/webhooks/:id/rotate-secret',
    {
      config: { scope: 'webhooks.write' },
      schema: {
        tags,
        security,
        operationId: 'rotateWebhookSecret',
        summary: 'A new signing secret, shown this once; the old one also signs for 24 hours.',
        params: webhookParams,
        response: {
          200: reply('NewWebhookReply', 'The endpoint, with its new secret (shown this once).'),
          ...failures([...tenantFailures, 404], noSuchWebhookReply),
        },
      },
    },
    async (request) => {
      // One instant for the change and the overlap's end: the overlap is exactly rotationOverlapMs from the rotation.
      const { tenantId } = caller(request);
      const { record, secret } = await rotateWebhookSecret(
        db,
        ctx.masterKey,
        tenantId,
        request.params.id,
        webhooks.now(),
        requestSource(request),
      );
      return ok({ ...toWebhookObject(record), secret });
    },
  );

  app.post<{ Params: { id: string } }>(
    '/api/v1/webhooks/:id/test',
    {
      config: { scope: 'webhooks.write' },
      schema: {
        tags,
        security,
        operationId: 'testWebhook',
        summary: 'Send a `webhook.test` event now; answers how its first attempt went (a failed one is retried).',
        params: webhookParams,
        response: {
          200: reply('WebhookTestReply', 'The first attempt: `delivered`, and its record.'),
          ...failures([...tenantFailures, 404, 409], {
            ...noSuchWebhookReply,
            409: '`conflict`: the endpoint is disabled; enable it first (`PATCH` with `disabled: false`).',
          }),
        },
      },
    },
    async (request) => {
      const webhook = await webhookInTenant(db, request);
      if (webhook.disabled) {
        throw new ApiError('conflict', `Webhook ${webhook.id} is disabled; enable it (PATCH disabled: false) and test again.`);
      }
      const delivery = await webhooks.test(webhook);
      if (!delivery) throw new ApiError('conflict', `Webhook ${webhook.id} was disabled or deleted meanwhile.`);
      const { response_body: _answer, ...attempt } = delivery;
      return ok({ event_id: delivery.event_id, delivered: delivery.error === null, delivery: attempt });
    },
  );
}
