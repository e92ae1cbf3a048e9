import { ApiError } from '../core/errors.ts';
import { nowIso } from '../core/ids.ts';
import type { JobQueue } from '../queue/job-queue.ts';
import { SecretMatcher } from '../secrets/secret-matcher.ts';
import { insertQueuedExecution, queuedOf } from '../storage/async-executions.ts';
import { isStorageUnavailable, type StorageHealth, storageUnavailable } from '../storage/availability.ts';
import type { Db } from '../storage/database.ts';
import { findExecution, newExecutionId } from '../storage/executions.ts';
import type { BoundRun } from './bound-run.ts';
import { type Acceptance, answerOf, type ExecuteCall } from './call.ts';
import { checkWithConnection } from './executor.ts';
import { operationNameOf } from './operation-name.ts';
import type { ExecutionRecorder } from './recorder.ts';
import { replyFor } from './reply.ts';
import type { IntegrationResolver } from './resolver.ts';
import { type ExecutionRunner, failedBeforeRun } from './runner.ts';
import { sealedJob } from './sealed-request.ts';

/** What accepting an async call needs, named. */
export interface AcceptDeps {
  db: Db;
  masterKey: Buffer;
  /** IX_TENANT_QUEUED_MAX and IX_EXECUTE_DEADLINE_SECONDS (the checks of an accepted call are bounded as a call's). */
  tenantQueuedMax: number;
  executeDeadlineSeconds: number;
  storageHealth: StorageHealth;
  queue: JobQueue;
  resolver: IntegrationResolver;
  runner: ExecutionRunner;
  recorder: ExecutionRecorder;
}

/**
 * An async call (docs/async.md#accepting-a-call): checked as the synchronous call would be (its failure is answered
 * now, and recorded), then stored as `queued` with its job in one transaction: both or neither.
 */
export async function acceptCall(deps: AcceptDeps, call: ExecuteCall): Promise<Acceptance> {
  if (!deps.storageHealth.available) throw storageUnavailable();
  const stored = await deps.resolver.lookUp(call.tenantId, call.integrationId);
  // One tenant's backlog is bounded, so that it cannot fill the queue every tenant's calls wait in (docs/limits.md).
  const cap = deps.tenantQueuedMax;
  if ((await queuedOf(deps.db, call.tenantId, cap)) >= cap) {
    throw new ApiError(
      'rate_limited',
      `This tenant already has ${cap} async executions queued (IX_TENANT_QUEUED_MAX); retry when some have run.`,
      { reason: 'queue', limit: cap },
      { retryAfterSeconds: 5 },
    );
  }
  const executionId = newExecutionId();
  const startedAt = nowIso();
  const started = performance.now();
  const budget = deps.runner.budget(call.tenantId, deps.executeDeadlineSeconds, started);
  let bound: BoundRun | undefined;
  try {
    bound = deps.resolver.bind(deps.resolver.resolve(stored, call), budget);
    bound.accepting = true;
    await checkWithConnection(bound.definition, bound.connection, call.operation, call.fields);
  } catch (thrown) {
    const outcome = failedBeforeRun(executionId, stored.connector, thrown, {
      upstreamMs: budget.stats.upstreamMs,
      totalMs: performance.now() - started,
      secrets: bound?.redaction() ?? SecretMatcher.none,
    });
    const reply = replyFor(outcome, call.requestId, call.log);
    deps.recorder.record(call, outcome, reply, startedAt, 'async');
    return { accepted: false, answer: answerOf(outcome, reply) };
  }
  const job = sealedJob(deps.masterKey, call, executionId);
  try {
    await deps.db.transaction().execute(async (trx) => {
      await insertQueuedExecution(trx, call.tenantId, {
        id: executionId,
        integration_id: stored.id,
        connector: stored.connector,
        operation: call.operation,
        operation_name: operationNameOf(call.fields),
        mode: 'async',
        via: call.via ?? 'api',
        status: 'queued',
        http_status: null,
        error_code: null,
        error_message: null,
        error_details: null,
        message_count: 0,
        duration_ms: 0,
        attempts: 0,
        api_key_id: call.keyId,
        user_id: call.userId,
        request_id: call.requestId,
        started_at: startedAt,
        finished_at: null,
      });
      await deps.queue.send('executions', job, { db: trx, fairKey: call.tenantId });
    });
  } catch (error) {
    // Storage failed at the commit, whose answer may be all that was lost: whether the execution is stored says if the
    // call was queued. Queued, it is answered 202 as if nothing had failed (a retry with its Idempotency-Key replays
    // that, never queues it twice); not queued, the storage error is the answer, and the key goes back.
    if (!isStorageUnavailable(error) || !(await storedAfterAll(deps, call.tenantId, executionId))) throw error;
  }
  deps.queue.committed('executions');
  return { accepted: true, executionId };
}

/** Whether the execution is stored, asked once storage answers again (a storage error waits for its return). */
async function storedAfterAll(deps: AcceptDeps, tenantId: string, executionId: string): Promise<boolean> {
  const health = deps.storageHealth;
  for (;;) {
    try {
      return (await findExecution(deps.db, tenantId, executionId)) !== undefined;
    } catch (error) {
      if (!isStorageUnavailable(error) || health.closed) throw error;
      health.failed(error);
      await health.returned();
    }
  }
}
