import type { FastifyInstance } from 'fastify';
import type { ConnectorRegistry } from '../connectors/registry.ts';
import { errorCatalogue } from '../core/errors.ts';
import { entityStatuses } from '../storage/entities.ts';
import { tenantTypes } from '../storage/tenants.ts';
import { roles } from '../storage/users.ts';
import { connectorSchemas } from './openapi-connectors.ts';
import { exact, ref } from './schemas.ts';

/**
 * The shapes the API answers with, each registered once with `app.addSchema` under its `$id`: the routes' response
 * schemas `$ref` them, Fastify serializes the replies with them (a field missing here would be dropped from a reply),
 * and @fastify/swagger lists them under `components.schemas` by that `$id`.
 */

const timestamp = { type: 'string', format: 'date-time' } as const;
const maybeTimestamp = { type: ['string', 'null'], format: 'date-time' } as const;
const succeeded = { type: 'boolean', enum: [true] } as const;

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

/** `{success: true, data}` around the shared schema `data`. */
function envelope(id: string, data: object, description: string) {
  return {
    $id: id,
    description,
    ...exact({ success: succeeded, data }),
  };
}

/** A page of a list: `data` and `pagination.next_cursor`. */
function listEnvelope(id: string, item: string, description: string) {
  return {
    $id: id,
    description,
    ...exact({ success: succeeded, data: { type: 'array', items: ref(item) }, pagination: ref('Pagination') }),
  };
}

const errorSchema = {
  $id: 'Error',
  description: 'Every failure (a non-2xx status): a catalogue code, one human sentence, code-specific details.',
  type: 'object',
  required: ['success', 'error', 'request_id'],
  additionalProperties: false,
  properties: {
    success: { type: 'boolean', enum: [false] },
    error: {
      type: 'object',
      required: ['code', 'message'],
      additionalProperties: false,
      properties: {
        code: { type: 'string', enum: Object.keys(errorCatalogue) },
        message: { type: 'string' },
        details: {
          type: 'object',
          additionalProperties: true,
          description:
            'Code-specific. A validation failure lists every problem: `issues: [{path, message}]` (at most 100, then `truncated: true`).',
        },
      },
    },
    errors: { type: 'array', items: {}, description: 'The upstream GraphQL `errors` (`graphql_errors` only).' },
    request_id: { type: 'string', description: 'Equals the X-Request-Id header.' },
  },
  examples: [
    {
      success: false,
      error: {
        code: 'validation_failed',
        message: 'config.base_url: must match pattern "^[Hh][Tt][Tt][Pp][Ss]?://[^\\s]+$"',
        details: { issues: [{ path: 'config.base_url', message: 'must match pattern "^[Hh][Tt][Tt][Pp][Ss]?://[^\\s]+$"' }] },
      },
      request_id: '0f4b6a3e-5b7e-4a53-9d0a-3c9e2f1d7b21',
    },
  ],
};

const pagination = {
  $id: 'Pagination',
  ...exact({ next_cursor: { type: ['string', 'null'], description: 'Pass as `cursor` for the next page; null on the last.' } }),
};

const apiKeyProperties = {
  id: { type: 'string', examples: ['key_01jd8x2m4q7v9c3b5n6p8r0t2w'] },
  tenant_id: { type: 'string' },
  name: { type: 'string' },
  prefix: { type: 'string', description: '`ix_live_`, `ix_test_`, or a legacy `ix_prod_`/`ix_dev_`.' },
  start: { type: 'string', description: 'The first 12 characters of the key.' },
  last4: { type: 'string' },
  scopes: { type: 'array', items: { type: 'string' } },
  expires_at: maybeTimestamp,
  rate_limit_per_minute: { type: 'integer' },
  legacy: { type: 'boolean' },
  created_at: timestamp,
  revoked_at: maybeTimestamp,
  rotated_to: { type: ['string', 'null'], description: 'The id of the key this one was rotated to.' },
  created_by: {
    type: ['string', 'null'],
    description: 'The user who created the key (or its predecessor) signed in; null for a key or the CLI.',
  },
  usage: exact({ last_used_at: maybeTimestamp, last_used_ip: { type: ['string', 'null'] }, request_count: { type: 'integer' } }),
} as const;

const apiKeyExample = {
  id: 'key_01jd8x2m4q7v9c3b5n6p8r0t2w',
  tenant_id: 'acme',
  name: 'crm sync',
  prefix: 'ix_live_',
  start: 'ix_live_Ab3d',
  last4: 'x9Zq',
  scopes: ['integrations.execute'],
  expires_at: null,
  rate_limit_per_minute: 600,
  legacy: false,
  created_at: '2026-11-21T09:30:00.000Z',
  revoked_at: null,
  rotated_to: null,
  created_by: null,
  usage: { last_used_at: null, last_used_ip: null, request_count: 0 },
};

const apiKey = {
  $id: 'ApiKey',
  description: 'An API key; never its secret.',
  ...exact(apiKeyProperties),
  examples: [apiKeyExample],
};

const newApiKey = {
  $id: 'NewApiKey',
  description: 'A key just created or rotated, with its secret: the only time `key` is shown.',
  ...exact({ ...apiKeyProperties, key: { type: 'string', description: 'The key itself; send it as X-API-Key.' } }),
  examples: [{ ...apiKeyExample, key: 'ix_live_4fQ8pZk2LmN7xR1vB9cT3wY6hJ0sD5gE2aK8uq1Xy' }],
};

const usageDay = {
  $id: 'ApiKeyUsageDay',
  ...exact({
    date: { type: 'string', format: 'date' },
    requests: { type: 'integer' },
    errors: { type: 'integer', description: 'Authenticated requests answered with a non-2xx status.' },
  }),
  examples: [{ date: '2026-11-21', requests: 12, errors: 1 }],
};

const tenantSummary = exact({ id: { type: 'string' }, name: { type: 'string' }, type: { type: 'string', enum: tenantTypes } });

const user = {
  $id: 'User',
  description: 'A person who signs in; never their password.',
  ...exact({ id: { type: 'string' }, email: { type: 'string' }, name: { type: 'string' }, created_at: timestamp }),
  examples: [
    { id: 'usr_01jd8x2m4q7v9c3b5n6p8r0t2w', email: 'ada@example.com', name: 'Ada', created_at: '2026-11-21T09:30:00.000Z' },
  ],
};

const me = {
  $id: 'Me',
  description: 'The caller: a key (`key`, `tenant`) or a signed-in person (`user`, `tenant`, `role`).',
  anyOf: [
    exact({ key: ref('ApiKey'), tenant: tenantSummary }),
    exact({ user: ref('User'), tenant: tenantSummary, role: { type: 'string', enum: roles } }),
  ],
};

const session = {
  $id: 'Session',
  description:
    'A signed-in session: a short-lived access token (send it as `Authorization: Bearer`, with X-Tenant-ID) and a ' +
    'refresh token (also set as the `ix_refresh` cookie), each usable once.',
  ...exact({
    access_token: { type: 'string', description: 'A JWT (EdDSA), verifiable with /.well-known/jwks.json.' },
    token_type: { type: 'string', enum: ['Bearer'] },
    expires_in: { type: 'integer', description: 'Seconds the access token lives.' },
    refresh_token: { type: 'string', description: 'Spent by its first use; a second use ends the session.' },
    user: ref('User'),
    memberships: {
      type: 'array',
      items: exact({ tenant_id: { type: 'string' }, tenant_name: { type: 'string' }, role: { type: 'string', enum: roles } }),
    },
  }),
};

const jwks = {
  $id: 'JwkSet',
  description: 'The public keys that verify access tokens (RFC 7517): the current one and those retired within the last hour.',
  type: 'object',
  required: ['keys'],
  additionalProperties: false,
  properties: {
    keys: {
      type: 'array',
      items: {
        type: 'object',
        required: ['kty', 'kid', 'alg', 'use'],
        additionalProperties: false,
        properties: {
          kty: { type: 'string' },
          crv: { type: 'string' },
          x: { type: 'string' },
          kid: { type: 'string' },
          alg: { type: 'string' },
          use: { type: 'string' },
        },
      },
    },
  },
  examples: [
    {
      keys: [
        {
          kty: 'OKP',
          crv: 'Ed25519',
          x: '11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo',
          kid: 'sig_01jd8x2m4q7v9c3b5n6p8r0t2w',
          alg: 'EdDSA',
          use: 'sig',
        },
      ],
    },
  ],
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

const executionFields = {
  id: { type: 'string' },
  integration_id: { type: 'string' },
  connector: { type: 'string' },
  operation: { type: 'string' },
  mode: { type: 'string', enum: ['sync', 'async'], description: '`async` when accepted with `Prefer: respond-async`.' },
  status: { type: 'string', enum: ['queued', 'running', 'succeeded', 'failed', 'canceled'] },
  http_status: {
    type: ['integer', 'null'],
    description: 'The status the caller got (sync), or the synchronous call would have (async); null until it finished.',
  },
  error_code: { type: ['string', 'null'] },
  error_message: { type: ['string', 'null'], description: 'The message the caller got, secrets redacted.' },
  error_details: {
    type: ['object', 'null'],
    additionalProperties: true,
    description: 'A failure’s `details` as the caller got them (secrets redacted); null for a success.',
  },
  message_count: { type: 'integer' },
  duration_ms: { type: 'integer', description: 'How long its run took (0 until it ran).' },
  attempts: {
    type: 'integer',
    description:
      'Tries of the upstream: the first and every retry (docs/resilience.md#attempts); 0 until an async execution ended.',
  },
  api_key_id: { type: ['string', 'null'], description: 'The key that called; null when a person did.' },
  user_id: { type: ['string', 'null'], description: 'The signed-in person who called; null for a key.' },
  request_id: { type: 'string' },
  started_at: { ...timestamp, description: 'When the call came (an async one: when it was accepted).' },
  finished_at: { ...maybeTimestamp, description: 'When it ended; null while queued or running.' },
} as const;

const executionExample = {
  id: 'exe_01jd8x7k2m9q4v6c8b1n3p5r7t',
  integration_id: 'countries',
  connector: 'graphql-1.0.0',
  operation: 'receive',
  mode: 'sync',
  status: 'succeeded',
  http_status: 200,
  error_code: null,
  error_message: null,
  error_details: null,
  message_count: 50,
  duration_ms: 182,
  attempts: 1,
  api_key_id: 'key_01jd8x2m4q7v9c3b5n6p8r0t2w',
  user_id: null,
  request_id: '0f4b6a3e-5b7e-4a53-9d0a-3c9e2f1d7b21',
  started_at: '2026-11-21T09:31:12.345Z',
  finished_at: '2026-11-21T09:31:12.527Z',
};

const execution = {
  $id: 'Execution',
  description: 'One execute call as the log keeps it; request bodies are never stored.',
  ...exact(executionFields),
  examples: [executionExample],
};

const executionWithResult = {
  $id: 'ExecutionWithResult',
  description:
    'One execute call. An async one adds `result` (exactly the body the synchronous call would have answered; null until ' +
    'it finished) and `result_expired` (true once it was kept IX_RESULT_RETENTION_HOURS and dropped).',
  type: 'object',
  required: Object.keys(executionFields),
  additionalProperties: false,
  properties: {
    ...executionFields,
    result: { description: 'The answer as JSON: `{success, data, errors?}` or `{success: false, error, request_id}`.' },
    result_expired: { type: 'boolean' },
  },
  examples: [
    {
      ...executionExample,
      mode: 'async',
      result: { success: true, data: { message_count: 50, data: [], total_size: 50 } },
      result_expired: false,
    },
  ],
};

const executionAccepted = {
  $id: 'ExecutionAccepted',
  description: 'An async call accepted: its execution, queued.',
  ...exact({ execution_id: { type: 'string' }, status: { type: 'string', enum: ['queued'] } }),
};

const executeReply = {
  $id: 'ExecuteReply',
  description:
    'What the operation produced. `data` is the connector’s: send `{message_count, data, response}` (GraphQL) or the ' +
    'method’s fields (SOAP); receive `{message_count, data: [records], total_size}`; sync `{message_count, outbound, ' +
    'inbound}`; batch `{message_count, succeeded, failed, skipped, results}`; test `{message, details}`.',
  type: 'object',
  required: ['success', 'data'],
  additionalProperties: false,
  properties: {
    success: succeeded,
    data: { type: 'object', additionalProperties: true },
    errors: { type: 'array', items: {}, description: 'GraphQL errors that came with partial data.' },
  },
  examples: [
    {
      success: true,
      data: {
        message_count: 2,
        data: [
          { id: '1', name: 'Ann' },
          { id: '2', name: 'Bob' },
        ],
        total_size: 2,
      },
    },
    {
      success: true,
      data: {
        message_count: 1,
        succeeded: 1,
        failed: 1,
        skipped: 0,
        results: [
          { index: 0, operation: 'send', success: true, data: { AddResult: 5 } },
          { index: 1, operation: 'send', success: false, error: { code: 'soap_fault', message: 'Division by zero.' } },
        ],
      },
    },
  ],
};

const webhookProperties = {
  id: { type: 'string', examples: ['whk_01jd8x9a3c5e7g9j1l3n5p7r9t'] },
  tenant_id: { type: 'string' },
  url: { type: 'string', description: 'Where events are POSTed.' },
  events: { type: 'array', items: { type: 'string' }, description: 'The event types it receives; `["*"]`: all of them.' },
  description: { type: ['string', 'null'] },
  disabled: { type: 'boolean', description: 'True once it failed for 5 days (or was disabled by PATCH): nothing is sent to it.' },
  failing_since: { ...maybeTimestamp, description: 'When its current run of failed attempts began; null while it answers.' },
  previous_secret_expires_at: {
    ...maybeTimestamp,
    description: 'After a rotation: until when the previous secret also signs (a second signature).',
  },
  created_at: timestamp,
  updated_at: timestamp,
} as const;

const webhookExample = {
  id: 'whk_01jd8x9a3c5e7g9j1l3n5p7r9t',
  tenant_id: 'acme',
  url: 'https://hooks.example.com/interchange',
  events: ['execution.succeeded', 'execution.failed'],
  description: 'order sync alerts',
  disabled: false,
  failing_since: null,
  previous_secret_expires_at: null,
  created_at: '2026-11-21T09:30:00.000Z',
  updated_at: '2026-11-21T09:30:00.000Z',
};

const webhook = {
  $id: 'Webhook',
  description: 'A webhook endpoint; never its secret.',
  ...exact(webhookProperties),
  examples: [webhookExample],
};

const newWebhook = {
  $id: 'NewWebhook',
  description: 'An endpoint just created, or its secret just rotated: the only time `secret` is shown.',
  ...exact({
    ...webhookProperties,
    secret: { type: 'string', description: '`whsec_` and base64 of 32 bytes: verify signatures with it.' },
  }),
  examples: [{ ...webhookExample, secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw8xMQ5oLBQo4=' }],
};

const webhookDelivery = {
  $id: 'WebhookDelivery',
  description: 'One delivery attempt of one event to one endpoint.',
  ...exact({
    id: { type: 'string' },
    webhook_id: { type: 'string' },
    event_id: { type: 'string', description: 'The `webhook-id` header: the same on every attempt of the event.' },
    event_type: { type: 'string' },
    attempt: { type: 'integer', description: '1 for the first attempt.' },
    http_status: { type: ['integer', 'null'], description: 'The receiver’s status; null when no answer came.' },
    duration_ms: { type: 'integer' },
    error: { type: ['string', 'null'], description: 'Why the attempt failed; null when it was delivered.' },
    next_attempt_at: { ...maybeTimestamp, description: 'When the next attempt is due; null when none follows.' },
    created_at: timestamp,
  }),
  examples: [
    {
      id: 'dlv_01jd8xa4b6d8f0h2k4m6p8r0t2',
      webhook_id: 'whk_01jd8x9a3c5e7g9j1l3n5p7r9t',
      event_id: 'evt_01jd8xa4a1c3e5g7j9l1n3p5r7',
      event_type: 'execution.failed',
      attempt: 1,
      http_status: 500,
      duration_ms: 42,
      error: 'The receiver answered HTTP 500.',
      next_attempt_at: '2026-11-21T09:31:17.345Z',
      created_at: '2026-11-21T09:31:12.345Z',
    },
  ],
};

const webhookTest = {
  $id: 'WebhookTest',
  description: 'The test event’s first attempt.',
  ...exact({
    event_id: { type: 'string' },
    delivered: { type: 'boolean', description: 'The receiver answered a 2xx in time.' },
    delivery: ref('WebhookDelivery'),
  }),
};

const deletedWebhook = {
  $id: 'DeletedWebhook',
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
    envelope('EntityReply', ref('Entity'), 'One entity.'),
    listEnvelope('EntityListReply', 'Entity', 'A page of entities.'),
    envelope('DeletedEntityReply', ref('DeletedEntity'), 'The entity is deleted.'),
    envelope('IntegrationReply', ref('Integration'), 'One integration.'),
    listEnvelope('IntegrationListReply', 'Integration', 'A page of integrations.'),
    envelope('DeletedIntegrationReply', ref('DeletedIntegration'), 'The integration is deleted.'),
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
    envelope('WebhookTestReply', ref('WebhookTest'), 'The test event’s first attempt.'),
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
