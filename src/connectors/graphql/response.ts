import { ApiError } from '../../core/errors.ts';
import { isJsonObject } from '../../core/json-object.ts';
import { bodyExcerpt } from '../../transport/excerpt.ts';
import { headerNamed } from '../../transport/headers.ts';
import { jsonBoundExceeded } from '../../transport/json-bounds.ts';

/** A usable GraphQL answer: data, and the upstream's `errors` when the success is partial. */
export interface GraphqlAnswer {
  data: Record<string, unknown>;
  /** Present (non-empty) only for a partial success; the caller puts it at the response's top level. */
  errors?: unknown[];
}

/**
 * Normalises an upstream GraphQL HTTP answer (already gunzipped) into data or an ApiError
 * (docs/execute.md#graphql-errors), without any I/O.
 *
 * - 2xx with a data object: the data, with `errors` beside it when there are any (partial success).
 * - `errors` with null or absent data: `graphql_errors`, message = the first error's message,
 *   the upstream's errors in `upstreamErrors` (the failure body's top-level `errors`).
 * - 401/403: `upstream_http_error` pointing at the token, whatever the body (§5 makes no
 *   exception); GraphQL errors in that body are kept in `details.errors`.
 * - Other non-2xx: `graphql_errors` when the body is a GraphQL errors body (a non-empty array of
 *   `{message: string}`, whatever the content type), else `upstream_http_error` with
 *   `details.upstream_status` and `details.body_excerpt`. A non-2xx is never a success, even
 *   with data: the GraphQL-over-HTTP spec only allows non-null data with a 2xx.
 * - A 2xx body that is not a JSON object, has a non-object `data`, or neither data nor errors:
 *   `upstream_invalid_response` with `details.body_excerpt`.
 * - On a 2xx, a non-array `errors` (some APIs send a string) is wrapped as one error.
 * - Whatever the status, JSON beyond the bounds of docs/limits.md#upstreams (nesting deeper than 256 levels,
 *   more than a million objects and arrays; see json-bounds.ts) is `upstream_invalid_response`
 *   naming the bound, checked before parsing, so nothing of it is kept, not even the data of a
 *   partial success.
 *
 * @example readGraphqlResponse(200, {}, Buffer.from('{"data":{"a":1}}')) // { data: { a: 1 } }
 */
export function readGraphqlResponse(status: number, headers: Record<string, string>, body: Buffer): GraphqlAnswer {
  const text = jsonText(body);
  const exceeded = jsonBoundExceeded(text);
  if (exceeded !== undefined) throw invalidResponse(`${exceeded}, which is refused`, status, headers, body);
  const parsed = parseJsonObject(text);
  if (status === 401 || status === 403) {
    const errors = parsed === undefined ? undefined : specErrorsOf(parsed.errors);
    throw new ApiError(
      'upstream_http_error',
      `The upstream GraphQL service refused the request (HTTP ${status}); check the integration's token and its permissions.`,
      { upstream_status: status, body_excerpt: bodyExcerpt(body), ...(errors === undefined ? {} : { errors }) },
    );
  }
  if (status < 200 || status > 299) {
    const errors = parsed === undefined ? undefined : specErrorsOf(parsed.errors);
    if (errors !== undefined) throw graphqlErrors(errors, { upstream_status: status });
    throw new ApiError('upstream_http_error', `The upstream GraphQL service answered HTTP ${status}.`, {
      upstream_status: status,
      body_excerpt: bodyExcerpt(body),
    });
  }
  if (parsed === undefined) throw invalidResponse('is not a JSON object', status, headers, body);
  const { data } = parsed;
  const errors = anyErrorsOf(parsed.errors);
  if (isJsonObject(data)) return errors === undefined ? { data } : { data, errors };
  if (data !== null && data !== undefined) throw invalidResponse('has a `data` that is not an object', status, headers, body);
  if (errors !== undefined) throw graphqlErrors(errors, {});
  throw invalidResponse('has neither `data` nor `errors`', status, headers, body);
}

/** The first error's message, else the catalogue's sentence. */
function graphqlErrors(errors: unknown[], details: Record<string, unknown>): ApiError {
  const first = errors[0];
  const message =
    isJsonObject(first) && typeof first.message === 'string' && first.message.trim() !== '' ? first.message : undefined;
  const shown = Object.keys(details).length > 0 ? details : undefined;
  return new ApiError('graphql_errors', message, shown, { upstreamErrors: errors });
}

/** Errors as the GraphQL spec shapes them; anything else (e.g. a proxy's `{"errors": "Not Found"}`) is not a GraphQL answer. */
function specErrorsOf(value: unknown): unknown[] | undefined {
  if (!Array.isArray(value) || value.length === 0) return undefined;
  return value.every((error) => isJsonObject(error) && typeof error.message === 'string') ? value : undefined;
}

/** Errors from a 2xx GraphQL answer, leniently: a lone string or object becomes a one-item list. */
function anyErrorsOf(value: unknown): unknown[] | undefined {
  if (value === null || value === undefined) return undefined;
  if (Array.isArray(value)) return value.length === 0 ? undefined : value;
  return [isJsonObject(value) ? value : { message: String(value) }];
}

function invalidResponse(what: string, status: number, headers: Record<string, string>, body: Buffer): ApiError {
  const contentType = headerNamed(headers, 'content-type');
  return new ApiError('upstream_invalid_response', `The upstream GraphQL answer ${what}.`, {
    upstream_status: status,
    ...(contentType === undefined ? {} : { content_type: contentType }),
    body_excerpt: bodyExcerpt(body),
  });
}

/** The body as UTF-8 text, without a byte-order mark. */
function jsonText(body: Buffer): string {
  const text = body.toString('utf8');
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
}

function parseJsonObject(text: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return isJsonObject(value) ? value : undefined;
  } catch {
    return undefined;
  }
}
