import type { FastifyBaseLogger } from 'fastify';
import type { ConnectorResult } from '../connectors/connector.ts';
import { ApiError, errorBody } from '../core/errors.ts';
import { type ReplyChunks, serializeReply } from '../core/raw-json.ts';
import { toApiError } from '../http/error-handler.ts';
import { redactReply } from '../secrets/redact.ts';
import type { SecretMatcher } from '../secrets/secret-matcher.ts';

/**
 * What running an execution came to, before it is anyone's answer: the connector's result or what was thrown, whether
 * a write reached the upstream, the timings. The execution service makes it and knows nothing of HTTP; `replyFor`
 * makes it the answer of a synchronous call, the `result` of an async one and the one in a webhook's payload alike.
 */
export interface Outcome {
  executionId: string;
  connector: string;
  /** The connector's result; undefined when the run failed (`thrown`). */
  result: ConnectorResult | undefined;
  thrown: unknown;
  /** Whether a write may have reached the upstream. */
  reachedUpstream: boolean;
  /** Tries of the upstream: the first and every retry (docs/resilience.md); a failure from upstream says it in `details.attempts`. */
  attempts: number;
  /** Milliseconds spent on upstream requests, and in all. */
  upstreamMs: number;
  totalMs: number;
  /** What the answer must be redacted of: the integration's secrets and the access tokens issued in this run. */
  secrets: SecretMatcher;
}

/** The answer an outcome is, as sent: the status and the body (text, or chunks for a large answer), and its parts. */
export interface Reply {
  status: number;
  body: string | ReplyChunks;
  messageCount: number;
  errorCode: string | null;
  errorMessage: string | null;
  errorDetails: Record<string, unknown> | null;
  /** Seconds for `Retry-After` (an open circuit breaker, a full integration), or undefined. */
  retryAfterSeconds?: number;
}

function successBody(result: ConnectorResult) {
  return { success: true as const, data: result.data, ...(result.errors && { errors: result.errors }) };
}

/** The failures an upstream answered or caused: their details say how many tries they took (`attempts`). */
const upstreamFailures: ReadonlySet<string> = new Set([
  'upstream_http_error',
  'upstream_unreachable',
  'upstream_timeout',
  'upstream_invalid_response',
  'upstream_response_too_large',
  'upstream_auth_failed',
  'graphql_errors',
  'soap_fault',
]);

/**
 * The failure answer of `thrown`; a bug becomes internal_error (logged), never its own message. A failure from
 * upstream carries `details.attempts` (given `attempts`), unless it says its own.
 */
export function failureReply(
  thrown: unknown,
  requestId: string,
  secrets: SecretMatcher,
  log: FastifyBaseLogger,
  attempts?: number,
): Reply {
  let error = toApiError(thrown);
  if (!error) {
    log.error({ err: thrown }, 'execute failed with an unexpected error');
    error = new ApiError('internal_error');
  }
  const details =
    attempts !== undefined && upstreamFailures.has(error.code) && error.details?.attempts === undefined
      ? { ...error.details, attempts }
      : error.details;
  const body = errorBody(error.code, error.message, requestId, details, error.upstreamErrors);
  const { value, text } = redactReply(body, secrets);
  return {
    status: error.status,
    body: text,
    messageCount: 0,
    errorCode: error.code,
    errorMessage: value.error.message,
    errorDetails: value.error.details ?? null,
    retryAfterSeconds: error.retryAfterSeconds,
  };
}

/**
 * The answer of an outcome in the one shape (docs/execute.md#the-answer), secrets redacted. A result that cannot be
 * written is the execution's failure, answered as such.
 */
export function replyFor(outcome: Outcome, requestId: string, log: FastifyBaseLogger): Reply {
  if (outcome.result === undefined) return failureReply(outcome.thrown, requestId, outcome.secrets, log, outcome.attempts);
  try {
    const { value, text } = redactReply(successBody(outcome.result), outcome.secrets);
    const body = serializeReply(value, text) ?? text;
    return {
      status: 200,
      body,
      messageCount: outcome.result.messageCount,
      errorCode: null,
      errorMessage: null,
      errorDetails: null,
    };
  } catch (thrown) {
    return failureReply(thrown, requestId, outcome.secrets, log);
  }
}

/** A reply's body as one text (an async result, a replay, a webhook payload keep it so). */
export function bodyText(body: string | ReplyChunks): string {
  return typeof body === 'string' ? body : Buffer.concat(body.chunks, body.byteLength).toString('utf8');
}
