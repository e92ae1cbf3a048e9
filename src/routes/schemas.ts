/** JSON-schema pieces shared by the routes (they also feed the OpenAPI document). */
import type { SwaggerTransform } from '@fastify/swagger';

export const pageQuery = {
  limit: { type: 'integer', minimum: 1, maximum: 100, default: 20, description: 'Page size, at most 100.' },
  cursor: { type: 'string', maxLength: 512, description: 'next_cursor from the previous page.' },
} as const;

/** 1–128 characters, no control characters; travels as one URL-encoded path segment. */
export const objectId = { type: 'string', minLength: 1, maxLength: 128, pattern: '^[^\\u0000-\\u001f\\u007f]+$' } as const;

export const idParams = (name: string) => ({ type: 'object', required: [name], properties: { [name]: objectId } }) as const;

/** A tenant endpoint takes an API key, or a person's access token, with the tenant header. */
export const security: Array<Record<string, string[]>> = [
  { ApiKey: [], TenantId: [] },
  { Bearer: [], TenantId: [] },
];

/** An object schema with exactly these properties, every one required (a reply that always has all of them). */
export const exact = <P extends Record<string, unknown>>(properties: P) =>
  ({ type: 'object', required: Object.keys(properties), additionalProperties: false, properties }) as const;

/** A reference to a shared schema (`app.addSchema`, src/routes/openapi.ts): the document lists it under components.schemas. */
export const ref = (id: string) => ({ $ref: `${id}#` });

/** A success reply: the shared envelope `id`, with what this operation's answer means. */
export const reply = (id: string, description: string) => ({ description, ...ref(id) });

/** What each failure status means on any route; a route may say more of its own. */
const failureMeaning = {
  400: 'The request is invalid: `validation_failed` (every problem in `details.issues`), `invalid_json`, or no X-Tenant-ID (`missing_tenant`).',
  401: 'No valid credentials: `missing_credentials`, `invalid_credentials`, `expired_credentials` or `api_key_in_bearer`; with WWW-Authenticate.',
  403: 'The key or the person’s role lacks the scope this endpoint requires (`insufficient_scope`, `details.required_scope`).',
  404: '`not_found`: no such object in this tenant.',
  409: '`conflict`: the state forbids the change.',
  412: '`precondition_failed`: `If-None-Match: *` met an existing object, or `If-Match` did not name its current version (`details.etag`); nothing was changed.',
  413: '`payload_too_large`: the body is over the limit (1 MiB by default).',
  415: '`unsupported_media_type`: the body is not application/json.',
  422: 'The request cannot run as it stands.',
  429: '`rate_limited`: over the key’s limit per minute, or too many failed authentications from this address; with Retry-After.',
  500: '`internal_error`: a bug on our side, never bad input.',
  502: 'The upstream failed.',
  503: '`service_unavailable`: this instance is shutting down (retry on another), or its storage is unavailable for a moment (`details.reason: "storage"`, nothing changed or sent); retry after Retry-After.',
  504: '`upstream_timeout`: the upstream did not answer in time.',
} as const;

export type FailureStatus = keyof typeof failureMeaning;

const failureHeaders: Partial<Record<FailureStatus, Record<string, object>>> = {
  401: { 'WWW-Authenticate': { type: 'string', description: 'ApiKey realm="interchange", header="X-API-Key"' } },
  429: { 'Retry-After': { type: 'integer', description: 'Seconds to wait.' } },
  503: { 'Retry-After': { type: 'integer', description: 'Seconds to wait.' } },
};

/**
 * Every tenant endpoint can answer these, whatever it does: bad headers, credentials, scope, rate limit, a bug, shutdown
 * or storage unavailable.
 */
export const tenantFailures = [400, 401, 403, 429, 500, 503] as const;

/** What a route that reads a JSON body can answer besides. */
export const bodyFailures = [413, 415] as const;

/**
 * The failure replies of a route, each in the shared `Error` shape (which also serializes them), with what the status
 * means here: `failures([...tenantFailures, 404], { 404: 'No such key.' })`.
 */
export function failures(
  statuses: readonly FailureStatus[],
  meanings: Partial<Record<FailureStatus, string>> = {},
): Record<number, object> {
  return Object.fromEntries(
    statuses.map((status) => [
      status,
      {
        description: meanings[status] ?? failureMeaning[status],
        ...(failureHeaders[status] && { headers: failureHeaders[status] }),
        ...ref('Error'),
      },
    ]),
  );
}

/**
 * The request body as the OpenAPI document describes it, when that is finer than what the route's validator checks
 * (the connector's own schemas check the fields at run time, with their own issue paths): the validator keeps the
 * route's schema, the document shows `body`.
 */
export function documentedBody(body: object): SwaggerTransform {
  return ({ schema, url }) => ({ schema: { ...schema, body }, url });
}
