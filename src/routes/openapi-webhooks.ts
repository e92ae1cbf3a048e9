import { maybeTimestamp, succeeded, timestamp } from './openapi-envelopes.ts';
import { exact, ref } from './schemas.ts';

/** Webhook endpoints in the OpenAPI document: an endpoint (with its secret once), a delivery attempt, a test. */

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

export const webhook = {
  $id: 'Webhook',
  description: 'A webhook endpoint; never its secret.',
  ...exact(webhookProperties),
  examples: [webhookExample],
};

export const newWebhook = {
  $id: 'NewWebhook',
  description: 'An endpoint just created, or its secret just rotated: the only time `secret` is shown.',
  ...exact({
    ...webhookProperties,
    secret: { type: 'string', description: '`whsec_` and base64 of 32 bytes: verify signatures with it.' },
  }),
  examples: [{ ...webhookExample, secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw8xMQ5oLBQo4=' }],
};

const deliveryProperties = {
  id: { type: 'string' },
  webhook_id: { type: 'string' },
  event_id: { type: 'string', description: 'The `webhook-id` header: the same on every attempt of the event.' },
  event_type: { type: 'string' },
  attempt: { type: 'integer', description: '1 for the first attempt; a resend is numbered after the last one made.' },
  http_status: { type: ['integer', 'null'], description: 'The receiver’s status; null when no answer came.' },
  duration_ms: { type: 'integer' },
  error: { type: ['string', 'null'], description: 'Why the attempt failed; null when it was delivered.' },
  next_attempt_at: {
    ...maybeTimestamp,
    description: 'When the next attempt was due after this one failed; null when none followed.',
  },
  created_at: timestamp,
} as const;

const deliveryExample = {
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
};

export const webhookDelivery = {
  $id: 'WebhookDelivery',
  description: 'One delivery attempt of one event to one endpoint.',
  ...exact(deliveryProperties),
  examples: [deliveryExample],
};

export const webhookDeliveryDetail = {
  $id: 'WebhookDeliveryDetail',
  description: 'One attempt, with what was sent and the start of what the receiver answered.',
  ...exact({
    ...deliveryProperties,
    payload: {
      type: ['object', 'null'],
      additionalProperties: true,
      description: 'The event’s body as sent (`{type, timestamp, data}`), parsed; null once the event is no longer kept.',
    },
    response_body: {
      type: ['string', 'null'],
      description:
        'The start of the receiver’s answer: at most 4 KiB of it as UTF-8 text, control characters as U+FFFD; null when no answer came.',
    },
  }),
  examples: [
    {
      ...deliveryExample,
      payload: { type: 'execution.failed', timestamp: '2026-11-21T09:31:12.300Z', data: { id: 'exe_01jd8xa49z…' } },
      response_body: '{"error":"database unavailable"}',
    },
  ],
};

export const webhookResend = {
  $id: 'WebhookResend',
  description: 'A resend, queued: its attempt is recorded as `delivery_id` once made.',
  ...exact({
    delivery_id: { type: 'string', description: 'The id the new attempt is listed with.' },
    webhook_id: { type: 'string' },
    event_id: { type: 'string', description: 'The event sent again: the `webhook-id` header, as on every attempt.' },
  }),
  examples: [
    {
      delivery_id: 'dlv_01jd8xq7c2e4g6j8l0n2p4r6t8',
      webhook_id: 'whk_01jd8x9a3c5e7g9j1l3n5p7r9t',
      event_id: 'evt_01jd8xa4a1c3e5g7j9l1n3p5r7',
    },
  ],
};

export const webhookTest = {
  $id: 'WebhookTest',
  description: 'The test event’s first attempt.',
  ...exact({
    event_id: { type: 'string' },
    delivered: { type: 'boolean', description: 'The receiver answered a 2xx in time.' },
    delivery: ref('WebhookDelivery'),
  }),
};

export const deletedWebhook = {
  $id: 'DeletedWebhook',
  ...exact({ id: { type: 'string' }, deleted: succeeded }),
};
