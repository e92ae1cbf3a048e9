import type { FastifyBaseLogger } from 'fastify';
import type { Operation } from '../connectors/connector.ts';
import type { ReplyChunks } from '../core/raw-json.ts';
import type { Execution, ExecutionVia } from '../storage/execution-rows.ts';
import type { Outcome, Reply } from './reply.ts';

/** One execute request, as the route hands it over. */
export interface ExecuteCall {
  tenantId: string;
  /** The calling key, or null when a person (`userId`) calls. */
  keyId: string | null;
  userId: string | null;
  integrationId: string;
  operation: Operation;
  /** The body's fields beside `operation`. */
  fields: Record<string, unknown>;
  requestId: string;
  log: FastifyBaseLogger;
  /** The door the call came through, as its record says: `mcp` for a tool call; `api` when not given. */
  via?: ExecutionVia;
}

/** What the caller gets, and what the idempotency layer needs to know of it. */
export interface ExecuteAnswer {
  status: number;
  /** The reply body as sent, secrets redacted: text, or chunks when a large answer was read off the main thread. */
  body: string | ReplyChunks;
  /** Whether a write may have reached the upstream: such a failure is kept for replay, never given back. */
  reachedUpstream: boolean;
  /** Milliseconds spent on upstream requests, and in all (for Server-Timing). */
  upstreamMs: number;
  totalMs: number;
  /** For the request's log line and metrics: the execution's id, its connector and the error code answered. */
  executionId: string;
  connector: string;
  errorCode: string | null;
  /** Seconds for `Retry-After`, when the failure says when to come back (docs/resilience.md#circuit-breaker). */
  retryAfterSeconds?: number;
}

/** What an accepted async call answers: the queued execution, or the failure the synchronous call would have had. */
export type Acceptance = { accepted: true; executionId: string } | { accepted: false; answer: ExecuteAnswer };

/** The job of an async execution: whom it is for, and its request sealed with the master key. */
export interface ExecutionJob {
  tenant_id: string;
  execution_id: string;
  /** `SealedRequest` as JSON, AES-GCM with the master key: request fields are never stored in the clear. */
  sealed: string;
}

/** What an execution's record says of how it ended: the reply's status, code, message and details, and its time. */
export function endOf(
  outcome: Outcome,
  reply: Reply,
): Pick<
  Execution,
  'status' | 'http_status' | 'error_code' | 'error_message' | 'error_details' | 'message_count' | 'duration_ms' | 'attempts'
> {
  return {
    status: reply.status < 300 ? 'succeeded' : 'failed',
    http_status: reply.status,
    error_code: reply.errorCode,
    error_message: reply.errorMessage,
    error_details: reply.errorDetails,
    message_count: reply.messageCount,
    duration_ms: Math.round(outcome.totalMs),
    attempts: outcome.attempts,
  };
}

/** The answer the route sends for an outcome and its reply. */
export function answerOf(outcome: Outcome, reply: Reply): ExecuteAnswer {
  return {
    status: reply.status,
    body: reply.body,
    reachedUpstream: outcome.reachedUpstream,
    upstreamMs: outcome.upstreamMs,
    totalMs: outcome.totalMs,
    executionId: outcome.executionId,
    connector: outcome.connector,
    errorCode: reply.errorCode,
    retryAfterSeconds: reply.retryAfterSeconds,
  };
}
