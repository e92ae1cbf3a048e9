import { maybeTimestamp, succeeded, timestamp } from './openapi-envelopes.ts';
import { exact } from './schemas.ts';

/** Execute calls in the OpenAPI document: the executions log's record, an async call's acceptance, the reply. */

const executionFields = {
  id: { type: 'string' },
  integration_id: { type: 'string' },
  connector: { type: 'string' },
  operation: { type: 'string' },
  operation_name: {
    type: ['string', 'null'],
    description:
      'What the call named: the SOAP `method`, else the GraphQL `operation_name`, the document’s operation name or its first root field; null when none.',
  },
  mode: { type: 'string', enum: ['sync', 'async'], description: '`async` when accepted with `Prefer: respond-async`.' },
  via: {
    type: 'string',
    enum: ['api', 'mcp'],
    description: 'The door it came through: the execute endpoint (`api`) or an MCP tool call (`mcp`, docs/mcp.md).',
  },
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
  api_key_name: {
    type: ['string', 'null'],
    description: 'The name of the key that called, as it is now; null when a person called.',
  },
  user_name: {
    type: ['string', 'null'],
    description: 'The name of the person who called, as it is now; null for a key.',
  },
  request_id: { type: 'string' },
  started_at: { ...timestamp, description: 'When the call came (an async one: when it was accepted).' },
  finished_at: { ...maybeTimestamp, description: 'When it ended; null while queued or running.' },
} as const;

const executionExample = {
  id: 'exe_01jd8x7k2m9q4v6c8b1n3p5r7t',
  integration_id: 'countries',
  connector: 'graphql-1.0.0',
  operation: 'receive',
  operation_name: 'GetCountries',
  mode: 'sync',
  via: 'api',
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
  api_key_name: 'crm sync',
  user_name: null,
  request_id: '0f4b6a3e-5b7e-4a53-9d0a-3c9e2f1d7b21',
  started_at: '2026-11-21T09:31:12.345Z',
  finished_at: '2026-11-21T09:31:12.527Z',
};

export const execution = {
  $id: 'Execution',
  description: 'One execute call as the log keeps it; request bodies are never stored.',
  ...exact(executionFields),
  examples: [executionExample],
};

export const executionWithResult = {
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

export const executionAccepted = {
  $id: 'ExecutionAccepted',
  description: 'An async call accepted: its execution, queued.',
  ...exact({ execution_id: { type: 'string' }, status: { type: 'string', enum: ['queued'] } }),
};

export const executeReply = {
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
