import type { Selectable } from 'kysely';
import type { ExecutionsTable } from './schema.ts';

/** An execution as the log shows it, and as its row in `executions` stores it. */

export type ExecutionVia = 'api' | 'mcp';

export type ExecutionStatus = 'queued' | 'running' | 'succeeded' | 'failed' | 'canceled';
export const finishedStatuses: readonly ExecutionStatus[] = ['succeeded', 'failed', 'canceled'];

/** One execute call as the log shows it; request bodies are never stored, an async one's answer is (`result`). */
export type Execution = Omit<
  ExecutionsTable,
  | 'tenant_id'
  | 'status'
  | 'error_details'
  | 'http_status'
  | 'mode'
  | 'via'
  | 'result'
  | 'result_expires_at'
  | 'runs'
  | 'claim_token'
> & {
  mode: 'sync' | 'async';
  /** The door it came through: the execute endpoint (`api`) or an MCP tool call (`mcp`). */
  via: ExecutionVia;
  status: ExecutionStatus;
  /** The status the caller got (sync), or the one the synchronous call would have answered (async); null until then. */
  http_status: number | null;
  /** A failure's `details` as the caller got them; null for a success or a failure without details. */
  error_details: Record<string, unknown> | null;
};

/**
 * An execution as the API shows it: the record with the names of its caller as they are now (the key's or the
 * person's; null for the other, or one no longer there). Read when shown, never stored with the record.
 */
export type ExecutionShown = Execution & { api_key_name: string | null; user_name: string | null };

/** An async execution as GET /executions/{id} shows it: with the answer, or `result_expired` once it is dropped. */
export type ExecutionWithResult = ExecutionShown & { result?: unknown; result_expired?: boolean };

/** What an execution's row holds beside the record: its answer, and when that is dropped. */
export interface ResultColumns {
  result: string | null;
  result_expires_at: string | null;
}

export function fromRow(row: Selectable<ExecutionsTable>): Execution {
  const { tenant_id: _tenant, result: _result, result_expires_at: _expires, runs: _runs, claim_token: _token, ...rest } = row;
  const httpStatus = Number(rest.http_status);
  return {
    ...rest,
    mode: rest.mode as Execution['mode'],
    via: rest.via as ExecutionVia,
    status: rest.status as ExecutionStatus,
    http_status: httpStatus === 0 ? null : httpStatus,
    message_count: Number(rest.message_count),
    duration_ms: Number(rest.duration_ms),
    attempts: Number(rest.attempts),
    error_details: rest.error_details === null ? null : (JSON.parse(rest.error_details) as Record<string, unknown>),
  };
}

/** Every column of a row, in the order an insert binds their values. */
export const columns = [
  'id',
  'tenant_id',
  'integration_id',
  'connector',
  'operation',
  'operation_name',
  'status',
  'http_status',
  'error_code',
  'error_message',
  'error_details',
  'message_count',
  'duration_ms',
  'api_key_id',
  'user_id',
  'request_id',
  'started_at',
  'mode',
  'via',
  'attempts',
  'runs',
  'finished_at',
  'result',
  'result_expires_at',
] as const satisfies ReadonlyArray<keyof ExecutionsTable>;

/**
 * The row as stored, its keys in `columns` order and none undefined, with `kept` (an async call's answer) or none.
 * Every write of a row goes through here (the log's batches, a queued execution, its end). `error_message` can carry upstream text (a
 * GraphQL error, a fault string), which may hold a NUL that PostgreSQL's text refuses: it is stored as U+FFFD, the
 * same on both databases, so the call is recorded. Half a surrogate pair is stored as U+FFFD too, as binding it did
 * already: PostgreSQL's jsonb would refuse its escape and fail the whole batch. `error_details` is stored as JSON text
 * (where a NUL is the escape `\u0000`, which both keep).
 */
export function rowOf(tenantId: string, execution: Execution, kept: ResultColumns = noResult): ExecutionsTable {
  return {
    id: execution.id,
    tenant_id: tenantId,
    integration_id: execution.integration_id,
    connector: execution.connector,
    operation: execution.operation,
    operation_name: execution.operation_name ?? null,
    status: execution.status,
    http_status: execution.http_status ?? 0,
    error_code: execution.error_code ?? null,
    error_message: execution.error_message?.replaceAll('\u0000', '\ufffd').toWellFormed() ?? null,
    error_details: execution.error_details === null ? null : JSON.stringify(execution.error_details),
    message_count: execution.message_count,
    duration_ms: execution.duration_ms,
    api_key_id: execution.api_key_id ?? null,
    user_id: execution.user_id ?? null,
    request_id: execution.request_id,
    started_at: execution.started_at,
    mode: execution.mode,
    via: execution.via,
    attempts: execution.attempts,
    // Every row is inserted before any run: queued, or a synchronous call's (claimExecution counts the runs).
    runs: 0,
    claim_token: null,
    finished_at: execution.finished_at,
    result: kept.result,
    result_expires_at: kept.result_expires_at,
  };
}

/** A row without an answer kept: every synchronous call's, and an async one's until it ends. */
const noResult: ResultColumns = { result: null, result_expires_at: null };
