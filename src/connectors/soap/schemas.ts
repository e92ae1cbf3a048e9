import type { FromSchema } from 'json-schema-to-ts';
import { authSchema } from '../../credentials/schemes.ts';
import { tlsSchema } from '../../egress/tls-config.ts';
import { resilienceConfigProperties } from '../../resilience/config.ts';
import { wsSecuritySchema } from './wsse/config.ts';

/** The SOAP connector's config and request fields (docs/api.md#soap-configuration, docs/execute.md#soap-send-and-receive). */

const httpUrl = { type: ['string', 'null'], maxLength: 2048, pattern: '^[Hh][Tt][Tt][Pp][Ss]?://[^\\s]+$' } as const;
const xmlName = { type: 'string', minLength: 1, maxLength: 256, pattern: '^[A-Za-z_][A-Za-z0-9_.-]*$' } as const;

export const configProperties = {
  endpoint_url: httpUrl,
  service_url: httpUrl,
  // An HTTP header name (RFC 9110 token) and a value that cannot split the header block.
  auth_header: { type: ['string', 'null'], maxLength: 256, pattern: "^[!#$%&'*+.^_`|~0-9A-Za-z-]+$" },
  auth_value: { type: ['string', 'null'], maxLength: 16_384, pattern: '^[^\\r\\n\\u0000]*$' },
  timeout_seconds: { type: ['integer', 'null'], minimum: 1, maximum: 3600 },
  namespace: { type: ['string', 'null'], maxLength: 2048 },
  soap_version: { type: ['string', 'null'], enum: ['1.1', '1.2', null] },
  auth: authSchema,
  tls: tlsSchema,
  ws_security: wsSecuritySchema,
  ...resilienceConfigProperties,
} as const;

export const callSchema = {
  type: 'object',
  required: ['method'],
  additionalProperties: false,
  properties: {
    method: xmlName,
    // Any keys (the method's parts, header blocks), said outright: a client generated from the OpenAPI document would
    // otherwise type them as taking none.
    params: { type: 'object', additionalProperties: true },
    soap_headers: { type: 'object', additionalProperties: true },
    soap_action: { type: 'string', maxLength: 2048 },
    namespace: { type: 'string', maxLength: 2048 },
    service: { type: 'string', minLength: 1, maxLength: 256 },
    port: { type: 'string', minLength: 1, maxLength: 256 },
    // WSDL mode: which overload of `method` to run, by its signature's `input`.
    input: { type: 'string', minLength: 1, maxLength: 256 },
  },
} as const;

/** The fields of a send or receive, as the schema validated them. */
export type CallFields = FromSchema<typeof callSchema>;
