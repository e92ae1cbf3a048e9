import assert from 'node:assert/strict';
import type { LightMyRequestResponse } from 'fastify';
import { ApiError } from '../../src/core/errors.ts';
import { body } from './harness.ts';

export const wwwAuthenticate = 'ApiKey realm="interchange", header="X-API-Key"';
export const rateLimitHeaders = ['ratelimit-limit', 'ratelimit-remaining', 'ratelimit-reset', 'ratelimit-policy', 'ratelimit'];

export interface ErrorPayload {
  code: string;
  message: string;
  details?: { issues?: Array<{ path: string; message: string }>; [name: string]: unknown };
}

/**
 * Asserts the failure body of docs/api.md#answers (`request_id` equal to the X-Request-Id header), the status and the
 * code; every 401 carries WWW-Authenticate and no RateLimit headers. Returns the `error` object.
 */
export function assertError(res: LightMyRequestResponse, status: number, code: string): ErrorPayload {
  assert.equal(res.statusCode, status, res.body);
  const parsed = body(res);
  assert.deepEqual(Object.keys(parsed).sort(), ['error', 'request_id', 'success']);
  assert.equal(parsed.success, false);
  assert.equal(parsed.error.code, code);
  assert.equal(typeof parsed.error.message, 'string');
  assert.ok(parsed.error.message.length > 0);
  assert.ok(Object.keys(parsed.error).every((k) => ['code', 'message', 'details'].includes(k)));
  assert.equal(typeof parsed.request_id, 'string');
  assert.ok(parsed.request_id.length > 0);
  assert.equal(parsed.request_id, res.headers['x-request-id']);
  if (status === 401) {
    assert.equal(res.headers['www-authenticate'], wwwAuthenticate);
    for (const name of rateLimitHeaders) assert.equal(res.headers[name], undefined, `a 401 carries ${name}`);
  } else {
    assert.equal(res.headers['www-authenticate'], undefined);
  }
  return parsed.error;
}

/** Asserts a 200 success body (`{success: true, data}`) and returns its `data`. */
// biome-ignore lint/suspicious/noExplicitAny: tests read response bodies by shape and assert on the values.
export function assertOk(res: LightMyRequestResponse): any {
  assert.equal(res.statusCode, 200, res.body);
  assert.equal(body(res).success, true);
  return body(res).data;
}

/** Asserts the five RateLimit headers of docs/api.md#per-key-and-per-person for a key with `limit` and `remaining` requests left. */
export function assertRateLimitHeaders(res: LightMyRequestResponse, limit: number, remaining: number): void {
  assert.equal(res.headers['ratelimit-limit'], String(limit));
  assert.equal(res.headers['ratelimit-remaining'], String(remaining));
  const reset = Number(res.headers['ratelimit-reset']);
  assert.ok(Number.isInteger(reset) && reset >= 1 && reset <= 60, `ratelimit-reset ${reset}`);
  assert.equal(res.headers['ratelimit-policy'], `"default";q=${limit};w=60`);
  assert.equal(res.headers.ratelimit, `"default";r=${remaining};t=${reset}`);
}

/** The issue paths of a validation_failed answer, sorted. */
export function issuePaths(res: LightMyRequestResponse): string[] {
  const error = assertError(res, 400, 'validation_failed');
  const issues = error.details?.issues;
  assert.ok(Array.isArray(issues) && issues.length > 0);
  return issues.map((i) => i.path).sort();
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Asserts `fn` throws an ApiError with `code` and returns it for more checks. */
export function apiError(fn: () => unknown, code: string): ApiError {
  try {
    fn();
  } catch (error) {
    assert.ok(error instanceof ApiError, `expected an ApiError, got ${error}`);
    assert.equal(error.code, code, error.message);
    return error;
  }
  assert.fail(`expected ${code}, nothing was thrown`);
}

/**
 * The failure body of docs/execute.md#graphql-errors for a GraphQL `graphql_errors` answer: the usual keys plus the
 * upstream's top-level `errors`, request_id = X-Request-Id.
 */
export function assertGraphqlErrors(res: LightMyRequestResponse, errors: unknown[]): ErrorPayload {
  assert.equal(res.statusCode, 502, res.body);
  const parsed = body(res);
  assert.deepEqual(Object.keys(parsed).sort(), ['error', 'errors', 'request_id', 'success']);
  assert.equal(parsed.success, false);
  assert.equal(parsed.error.code, 'graphql_errors');
  assert.equal(parsed.request_id, res.headers['x-request-id']);
  assert.deepEqual(parsed.errors, errors);
  return parsed.error;
}
