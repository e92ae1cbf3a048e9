import type { FromSchema } from 'json-schema-to-ts';
import { authSchema } from '../../credentials/schemes.ts';
import { tlsSchema } from '../../egress/tls-config.ts';
import { resilienceConfigProperties } from '../../resilience/config.ts';

/** The request fields of the GraphQL connector's send and receive (docs/execute.md#graphql-connector). */

const document = { type: 'string', minLength: 1, maxLength: 1_000_000 } as const;
// Any keys, said outright: a client generated from the OpenAPI document would otherwise type it as taking none.
const variables = { type: 'object', additionalProperties: true } as const;
const operationName = { type: 'string', minLength: 1, maxLength: 256 } as const;
const variableName = { type: 'string', pattern: '^[_A-Za-z][_0-9A-Za-z]*$' } as const;

export const sendSchema = {
  type: 'object',
  required: ['mutation'],
  additionalProperties: false,
  properties: { mutation: document, variables, operation_name: operationName },
} as const;

export const receiveSchema = {
  type: 'object',
  required: ['query'],
  additionalProperties: false,
  properties: {
    query: document,
    variables,
    operation_name: operationName,
    records_path: { type: 'string', minLength: 1, maxLength: 512 },
    paginate: {
      anyOf: [
        { type: 'boolean' },
        {
          type: 'object',
          additionalProperties: false,
          properties: { max_pages: { type: 'integer', minimum: 1, maximum: 100 }, cursor_variable: variableName },
        },
      ],
    },
    cursor_variable: variableName,
  },
} as const;

export const configProperties = {
  base_url: { type: ['string', 'null'], maxLength: 2048, pattern: '^[Hh][Tt][Tt][Pp][Ss]?://[^\\s]+$' },
  // Sent as `Authorization: Bearer <token>`: visible ASCII only (RFC 6750), so it is refused here, not at run time.
  token: { type: ['string', 'null'], maxLength: 16_384, pattern: '^[\\x21-\\x7e]*$' },
  timeout_seconds: { type: ['integer', 'null'], minimum: 1, maximum: 3600 },
  // Schema-aware checking (docs/execute.md#schema-aware-checking): on unless false; the schema kept this long.
  validate_schema: { type: ['boolean', 'null'] },
  schema_ttl_seconds: { type: ['integer', 'null'], minimum: 1, maximum: 86_400 },
  auth: authSchema,
  tls: tlsSchema,
  ...resilienceConfigProperties,
} as const;

/** The fields of a send and a receive, as their schemas validated them. */
export type SendFields = FromSchema<typeof sendSchema>;
export type ReceiveFields = FromSchema<typeof receiveSchema>;
