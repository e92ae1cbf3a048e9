import { errorCatalogue } from '../core/errors.ts';
import { exact, ref } from './schemas.ts';

/** What every reply of the OpenAPI document shares: the success envelope, a page's cursor, the failure. */

export const timestamp = { type: 'string', format: 'date-time' } as const;
export const maybeTimestamp = { type: ['string', 'null'], format: 'date-time' } as const;
export const succeeded = { type: 'boolean', enum: [true] } as const;

/** `{success: true, data}` around the shared schema `data`. */
export function envelope(id: string, data: object, description: string) {
  return {
    $id: id,
    description,
    ...exact({ success: succeeded, data }),
  };
}

/** A page of a list: `data` and `pagination.next_cursor`. */
export function listEnvelope(id: string, item: string, description: string) {
  return {
    $id: id,
    description,
    ...exact({ success: succeeded, data: { type: 'array', items: ref(item) }, pagination: ref('Pagination') }),
  };
}

export const errorSchema = {
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

export const pagination = {
  $id: 'Pagination',
  ...exact({ next_cursor: { type: ['string', 'null'], description: 'Pass as `cursor` for the next page; null on the last.' } }),
};
