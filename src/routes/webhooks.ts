import type { FastifyInstance, FastifyRequest } from 'fastify';
import { caller } from '../auth/authenticate.ts';
import { hasScope } from '../auth/scopes.ts';
import type { AppContext } from '../context.ts';
import { ApiError } from '../core/errors.ts';
import type { EgressPolicy } from '../egress/policy.ts';
import { ok, okList } from '../http/envelope.ts';
import {
  deleteWebhook,
  findWebhook,
  listDeliveries,
  listWebhooks,
  updateWebhook,
  type WebhookChanges,
  type WebhookRecord,
} from '../storage/webhooks.ts';
import {
  checkEvents,
  createWebhook,
  maxWebhooksPerTenant,
  type NewWebhookInput,
  sealSecret,
  subscribableEvents,
  toWebhookObject,
} from '../webhooks/endpoints.ts';
import { newWebhookSecret } from '../webhooks/signature.ts';
import { checkWebhookUrl } from '../webhooks/url.ts';
import type { Webhooks } from '../webhooks/webhooks.ts';
import { bodyFailures, failures, idParams, pageQuery, reply, security, tenantFailures } from './schemas.ts';

const tags = ['Webhooks'];
const webhookParams = idParams('id');
const noSuchWebhook = { 404: 'No such webhook in this tenant.' } as const;

/** How long a rotated-out secret keeps signing. */
const rotationOverlapMs = 24 * 3_600_000;

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

interface PatchBody {
  url?: string;
  events?: string[];
  description?: string | null;
  disabled?: boolean;
}

export function registerWebhookRoutes(app: FastifyInstance, ctx: AppContext, webhooks: Webhooks, policy: EgressPolicy): void {
  const db = ctx.storage.db;
  const now = () => webhooks.now().toISOString();

  /**
   * Creating or changing an endpoint also needs `executions.read`: its events carry the executions of every caller of
   * the tenant, which `webhooks.write` alone does not let a key read (docs/api.md).
   */
  function mayReadExecutions(request: FastifyRequest): void {
    const { scopes, role } = caller(request);
    if (hasScope(scopes, 'executions.read')) return;
    const yours = role === null ? '' : ` (your role here is ${role})`;
    throw new ApiError(
      'insufficient_scope',
      `Creating or changing a webhook needs the executions.read scope as well as webhooks.write: its events carry every execution of the tenant${yours}.`,
      { required_scope: 'executions.read', granted_scopes: scopes },
    );
  }

  async function webhookInTenant(request: FastifyRequest<{ Params: { id: string } }>): Promise<WebhookRecord> {
    const found = await findWebhook(db, caller(request).tenantId, request.params.id);
    if (!found) throw new ApiError('not_found', `No webhook ${request.params.id}.`);
    return found;
  }

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
      const { record, secret } = await createWebhook(db, ctx.masterKey, policy, tenantId, request.body, now());
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
        response: { 200: reply('WebhookReply', 'The endpoint.'), ...failures([...tenantFailures, 404], noSuchWebhook) },
      },
    },
    async (request) => ok(toWebhookObject(await webhookInTenant(request))),
  );

  app.patch<{ Params: { id: string }; Body: PatchBody }>(
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
          200: reply('WebhookReply', 'The endpoint as changed.'),
          ...failures([...tenantFailures, ...bodyFailures, 404, 422], {
            ...noSuchWebhook,
            422: '`egress_denied`: the URL’s host is an address the egress policy refuses.',
          }),
        },
      },
    },
    async (request) => {
      mayReadExecutions(request);
      const webhook = await webhookInTenant(request);
      const { url: newUrl, events: newEvents, description: newDescription, disabled } = request.body;
      checkEvents(newEvents);
      const changes: WebhookChanges = {};
      if (newUrl !== undefined) changes.url = checkWebhookUrl(newUrl, policy);
      if (newEvents !== undefined) changes.events = newEvents;
      if (newDescription !== undefined) changes.description = newDescription;
      if (disabled !== undefined) {
        changes.disabled = disabled;
        // Enabled again: its run of failures starts over, and it gets five more days.
        if (!disabled) changes.failing_since = null;
      }
      await updateWebhook(db, webhook.tenant_id, webhook.id, changes, now());
      await webhooks.refresh();
      return ok(toWebhookObject(await webhookInTenant(request)));
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
          ...failures([...tenantFailures, 404], noSuchWebhook),
        },
      },
    },
    async (request) => {
      const { tenantId } = caller(request);
      if (!(await deleteWebhook(db, tenantId, request.params.id))) {
        throw new ApiError('not_found', `No webhook ${request.params.id}.`);
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
          ...failures([...tenantFailures, 404], noSuchWebhook),
        },
      },
    },
    async (request) => {
      const webhook = await webhookInTenant(request);
      const secret = newWebhookSecret();
      // One instant for the change and the overlap's end: the overlap is exactly rotationOverlapMs from the rotation.
      const at = webhooks.now();
      await updateWebhook(
        db,
        webhook.tenant_id,
        webhook.id,
        {
          secret: sealSecret(ctx.masterKey, webhook.tenant_id, webhook.id, secret),
          previous_secret: webhook.secret,
          previous_secret_expires_at: new Date(at.getTime() + rotationOverlapMs).toISOString(),
        },
        at.toISOString(),
      );
      return ok({ ...toWebhookObject(await webhookInTenant(request)), secret });
    },
  );

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
          ...failures([...tenantFailures, 404], noSuchWebhook),
        },
      },
    },
    async (request) => {
      const webhook = await webhookInTenant(request);
      const page = await listDeliveries(db, webhook.tenant_id, webhook.id, request.query);
      return okList(page.items, page.nextCursor);
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
            ...noSuchWebhook,
            409: '`conflict`: the endpoint is disabled; enable it first (`PATCH` with `disabled: false`).',
          }),
        },
      },
    },
    async (request) => {
      const webhook = await webhookInTenant(request);
      if (webhook.disabled) {
        throw new ApiError('conflict', `Webhook ${webhook.id} is disabled; enable it (PATCH disabled: false) and test again.`);
      }
      const delivery = await webhooks.test(webhook);
      if (!delivery) throw new ApiError('conflict', `Webhook ${webhook.id} was disabled or deleted meanwhile.`);
      return ok({ event_id: delivery.event_id, delivered: delivery.error === null, delivery });
    },
  );
}
