import type { FastifyInstance } from 'fastify';
import type { ConnectorRegistry } from '../connectors/registry.ts';
import { entityStatuses } from '../storage/entities.ts';
import { auditEvent } from './openapi-audit.ts';
import { apiKey, jwks, me, newApiKey, session, usageDay, user } from './openapi-callers.ts';
import { connectorSchemas } from './openapi-connectors.ts';
import { envelope, errorSchema, listEnvelope, pagination, succeeded, timestamp } from './openapi-envelopes.ts';
import { executeReply, execution, executionAccepted, executionWithResult } from './openapi-executions.ts';
import { memberSchemas } from './openapi-members.ts';
import {
  deletedWebhook,
  newWebhook,
  webhook,
  webhookDelivery,
  webhookDeliveryDetail,
  webhookResend,
  webhookTest,
} from './openapi-webhooks.ts';
import { exact, ref } from './schemas.ts';

/**
 * The shapes the API answers with, each registered once with `app.addSchema` under its `$id`: the routes' response
 * schemas `$ref` them, Fastify serializes the replies with them (a field missing here would be dropped from a reply),
 * and @fastify/swagger lists them under `components.schemas` by that `$id`. Here the small ones and the list, in the
 * document's order; the others by part: openapi-envelopes.ts, openapi-callers.ts, openapi-executions.ts,
 * openapi-webhooks.ts, openapi-connectors.ts (what depends on the registered connectors).
 */

/** An upstream's schema (docs/api.md#get-apiv1integrationsidschema): SDL, or why there is none. */
const integrationSchema = {
  type: 'object',
  required: ['available', 'sdl', 'fetched_at'],
  additionalProperties: false,
  properties: {
    available: { type: 'boolean', description: 'Whether the upstream answered introspection with a usable schema.' },
    sdl: { type: ['string', 'null'], description: 'The schema in GraphQL SDL; null when none is available.' },
    reason: { type: 'string', description: 'Why no schema is available (only then).' },
    fetched_at: { ...timestamp, description: 'When the upstream was introspected.' },
  },
} as const;

/** One entry of an integration's operation catalogue (docs/catalog.md, docs/catalog.md). */
const catalogEntry = {
  $id: 'CatalogEntry',
  description: 'One operation of the upstream, typed: JSON Schema 2020-12 of what a call takes and what it answers.',
  ...exact({
    name: { type: 'string', description: 'Unique within the integration; the MCP tool is `<integration id>.<name>`.' },
    kind: {
      type: 'string',
      enum: ['read', 'write'],
      description: '`read`: runs as `receive` and changes nothing upstream; `write`: runs as `send`.',
    },
    description: {
      type: 'string',
      description: "The upstream's text (cleaned, at most 1,000 characters) or the integration's own.",
    },
    input_schema: {
      type: 'object',
      additionalProperties: true,
      description: 'The SOAP `params` or the GraphQL `variables` (and a root field’s `selection`) a call takes.',
    },
    output_schema: { type: 'object', additionalProperties: true, description: "The execute answer's `data`." },
  }),
};

const entity = {
  $id: 'Entity',
  description: 'An entity: always exactly these three fields.',
  ...exact({ entity_id: { type: 'string' }, name: { type: 'string' }, status: { type: 'string', enum: entityStatuses } }),
  examples: [{ entity_id: 'cust-1', name: 'First customer', status: 'active' }],
};

const deletedEntity = {
  $id: 'DeletedEntity',
  ...exact({ entity_id: { type: 'string' }, deleted: succeeded }),
};

const deletedIntegration = {
  $id: 'DeletedIntegration',
  ...exact({ id: { type: 'string' }, deleted: succeeded }),
};

const health = {
  $id: 'HealthReply',
  ...exact({ success: succeeded, data: exact({ status: { type: 'string', enum: ['ok'] } }) }),
  examples: [{ success: true, data: { status: 'ok' } }],
};

const readiness = {
  $id: 'ReadinessReply',
  description: 'A probe, not an API call: the same shape whether storage answers (200) or not (503).',
  ...exact({
    success: { type: 'boolean' },
    data: exact({
      status: { type: 'string', enum: ['ready', 'unavailable'] },
      storage: { type: 'string', description: 'The storage kind, `sqlite` or `postgres`.' },
    }),
  }),
  examples: [{ success: true, data: { status: 'ready', storage: 'sqlite' } }],
};

/** Every shared schema, the connectors' included: what `registerSharedSchemas` adds, in the document's order. */
export function sharedSchemas(registry: ConnectorRegistry): object[] {
  const connectors = connectorSchemas(registry);
  return [
    errorSchema,
    pagination,
    apiKey,
    newApiKey,
    usageDay,
    user,
    me,
    session,
    jwks,
    entity,
    deletedEntity,
    ...connectors.integrations,
    deletedIntegration,
    execution,
    executionWithResult,
    executionAccepted,
    webhook,
    newWebhook,
    webhookDelivery,
    webhookDeliveryDetail,
    webhookResend,
    webhookTest,
    deletedWebhook,
    ...connectors.requests,
    executeReply,
    envelope('ApiKeyReply', ref('ApiKey'), 'One API key.'),
    envelope('NewApiKeyReply', ref('NewApiKey'), 'A new key, with its secret.'),
    listEnvelope('ApiKeyListReply', 'ApiKey', 'A page of API keys.'),
    envelope(
      'ApiKeyUsageReply',
      { type: 'array', items: ref('ApiKeyUsageDay') },
      'Requests and errors per UTC day, oldest first.',
    ),
    envelope('MeReply', ref('Me'), 'The caller and its tenant.'),
    envelope('SessionReply', ref('Session'), 'The tokens of a signed-in session.'),
    envelope('SignedOutReply', exact({ signed_out: succeeded }), 'The session is ended.'),
    ...memberSchemas,
    envelope('EntityReply', ref('Entity'), 'One entity.'),
    listEnvelope('EntityListReply', 'Entity', 'A page of entities.'),
    envelope('DeletedEntityReply', ref('DeletedEntity'), 'The entity is deleted.'),
    envelope('IntegrationReply', ref('Integration'), 'One integration.'),
    listEnvelope('IntegrationListReply', 'Integration', 'A page of integrations.'),
    envelope('DeletedIntegrationReply', ref('DeletedIntegration'), 'The integration is deleted.'),
    catalogEntry,
    listEnvelope('CatalogEntryListReply', 'CatalogEntry', "A page of the integration's operations, in catalogue order."),
    envelope('IntegrationSchemaReply', integrationSchema, "The upstream's schema, as the connector knows it."),
    envelope('ExecutionReply', ref('ExecutionWithResult'), 'One execute call.'),
    envelope('ExecutionCanceledReply', ref('Execution'), 'The execution, canceled.'),
    envelope('ExecutionAcceptedReply', ref('ExecutionAccepted'), 'Accepted: the execution is queued.'),
    listEnvelope('ExecutionListReply', 'Execution', 'A page of execute calls, newest first.'),
    envelope('WebhookReply', ref('Webhook'), 'One webhook endpoint.'),
    envelope('NewWebhookReply', ref('NewWebhook'), 'An endpoint with its secret.'),
    listEnvelope('WebhookListReply', 'Webhook', 'A page of webhook endpoints.'),
    envelope('DeletedWebhookReply', ref('DeletedWebhook'), 'The endpoint is deleted.'),
    listEnvelope('WebhookDeliveryListReply', 'WebhookDelivery', 'A page of delivery attempts, newest first.'),
    envelope('WebhookDeliveryDetailReply', ref('WebhookDeliveryDetail'), 'One delivery attempt, with payload and answer.'),
    envelope('WebhookResendReply', ref('WebhookResend'), 'A resend, queued.'),
    envelope('WebhookTestReply', ref('WebhookTest'), 'The test event’s first attempt.'),
    auditEvent,
    listEnvelope('AuditEventListReply', 'AuditEvent', 'A page of audit events, newest first.'),
    health,
    readiness,
  ];
}

/** Registers the shared schemas; before the routes, which `$ref` them. */
export function registerSharedSchemas(app: FastifyInstance, registry: ConnectorRegistry): void {
  for (const schema of sharedSchemas(registry)) app.addSchema(schema);
}

/**
 * @fastify/swagger names a shared schema `def-<n>` unless told otherwise: here it keeps its `$id`, so the document's
 * `#/components/schemas/ApiKey` is what a generated client calls the type.
 */
export const refResolver = {
  buildLocalReference(json: Record<string, unknown>, _baseUri: unknown, _fragment: string, i: number): string {
    return typeof json.$id === 'string' ? json.$id : `def-${i}`;
  },
};
