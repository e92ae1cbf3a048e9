import { randomUUID } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import { ApiError } from '../core/errors.ts';
import { nowIso } from '../core/ids.ts';
import { levelOf } from '../http/request-log.ts';
import { maxConcurrencyIn } from '../integrations/settings.ts';
import type { Deferral, JobQueue, QueueJob } from '../queue/job-queue.ts';
import type { QueueMetrics } from '../queue/metrics.ts';
import { integrationKey } from '../resilience/config.ts';
import type { IntegrationConcurrency } from '../resilience/integration-concurrency.ts';
import type { ResilienceMetrics } from '../resilience/metrics.ts';
import { cancelExecution, claimExecution, finishExecution, reclaimExecution } from '../storage/async-executions.ts';
import { isStorageUnavailable, type StorageHealth } from '../storage/availability.ts';
import type { Db } from '../storage/database.ts';
import type { Execution } from '../storage/execution-rows.ts';
import type { StoredIntegration } from '../storage/integrations.ts';
import { type ExecuteCall, type ExecutionJob, endOf } from './call.ts';
import { mayRunTwice } from './executor.ts';
import type { ExecutionRecorder } from './recorder.ts';
import { bodyText, type Outcome, type Reply, replyFor } from './reply.ts';
import type { IntegrationResolver } from './resolver.ts';
import { type ExecutionRunner, failedBeforeRun } from './runner.ts';
import { openedCall } from './sealed-request.ts';

/** What running and ending async executions needs, named. */
export interface AsyncRunDeps {
  db: Db;
  masterKey: Buffer;
  /** IX_ASYNC_DEADLINE_SECONDS and IX_RESULT_RETENTION_HOURS. */
  asyncDeadlineSeconds: number;
  resultRetentionHours: number;
  storageHealth: StorageHealth;
  queue: JobQueue;
  queueMetrics: QueueMetrics;
  integrationSlots: IntegrationConcurrency;
  resilience: ResilienceMetrics;
  resolver: IntegrationResolver;
  runner: ExecutionRunner;
  recorder: ExecutionRecorder;
}

/**
 * The line of an async run's end, at the level a synchronous call's request line would have (levelOf): `info`, `warn`
 * for an upstream's failure, `error` for ours. The error's message and details stay in the record (GET
 * /executions/{id}): they can hold an upstream's text. A run whose execution another run had ended meanwhile changed
 * nothing: `warn`, it says so.
 */
function logRunEnd(log: FastifyBaseLogger, finished: Execution, run: number, ended: boolean): void {
  const line = {
    connector: finished.connector,
    status: finished.status,
    http_status: finished.http_status,
    error_code: finished.error_code,
    duration_ms: finished.duration_ms,
    attempts: finished.attempts,
    run,
  };
  if (!ended) {
    log.warn(line, 'async execution run ended after another run had ended it: this outcome is not kept');
    return;
  }
  const level = levelOf(finished.http_status ?? 0, finished.error_code);
  log[level](line, `async execution ${finished.status}${finished.error_code ? ` ${finished.error_code}` : ''}`);
}

/**
 * Async executions after they were accepted (docs/async.md): run on whichever instance's worker takes the job, ended
 * with their answer kept, or canceled while queued.
 */
export class AsyncRuns {
  readonly #deps: AsyncRunDeps;

  constructor(deps: AsyncRunDeps) {
    this.#deps = deps;
  }

  /**
   * Runs the job of an async execution (a worker of the queue calls it), exactly once in effect:
   * - it claims the execution (`queued` → `running`) in one conditional update: a canceled or finished one is left;
   * - one found `running` was cut short by its process dying: it runs again if it can have changed nothing upstream
   *   (`receive`, `test`, a batch of receives, a sync without outbound part); otherwise it ends
   *   `upstream_outcome_unknown`, and a `send` is never sent twice;
   * - its answer is kept as `result` for IX_RESULT_RETENTION_HOURS, and its event goes to the webhooks.
   * A run logs one line when it starts and one when it ends, each with the execution's ids and the accepting request's
   * `request_id` (so do the lines written within it); a run deferred or not made, one line at `debug`.
   * It throws only when storage fails, and the queue runs it again.
   */
  async runJob(job: QueueJob<ExecutionJob>, appLog: FastifyBaseLogger): Promise<Deferral | undefined> {
    const { integrationSlots, resilience, resolver } = this.#deps;
    const call = openedCall(this.#deps.masterKey, job.data, appLog);
    const stored = await resolver.find(call.tenantId, call.integrationId);
    // The integration's max_concurrency: a run that finds its slots taken waits in the queue (deferred, not claimed), so
    // it holds no worker that another integration's executions could use (docs/resilience.md#concurrency).
    const limit = stored && maxConcurrencyIn(stored.config);
    const release = limit ? integrationSlots.tryAcquire(integrationKey(call.tenantId, call.integrationId), limit) : undefined;
    if (stored && limit && !release) {
      resilience.concurrencyFull(stored.connector, 'deferred');
      const deferMs = 250 + Math.floor(Math.random() * 750);
      call.log.debug(
        { max_concurrency: limit, defer_ms: deferMs },
        'async execution deferred: its integration is at max_concurrency',
      );
      return { deferMs };
    }
    try {
      await this.#runClaimed(call, job.data.execution_id, stored);
    } finally {
      release?.();
    }
    return undefined;
  }

  /** Cancels a queued execution (docs/async.md#cancel); a running or finished one is `409 conflict`. */
  async cancel(tenantId: string, executionId: string): Promise<Execution> {
    const { db, queue, recorder } = this.#deps;
    let delivering = false;
    const { canceled, execution } = await db.transaction().execute(async (trx) => {
      const ended = await cancelExecution(trx, tenantId, executionId, nowIso());
      if (ended.canceled && ended.execution) delivering = await recorder.storeEvent(trx, tenantId, ended.execution, () => null);
      return ended;
    });
    if (delivering) queue.committed('webhook-deliveries');
    if (!execution) throw new ApiError('not_found', `No execution ${executionId}.`);
    if (!canceled) {
      const message = `Execution ${executionId} is ${execution.status}; only a queued execution can be canceled.`;
      throw new ApiError('conflict', message, { status: execution.status });
    }
    return execution;
  }

  /** runJob's part after a slot of the integration was had: the claim, the run, its end. */
  async #runClaimed(call: ExecuteCall, executionId: string, stored: StoredIntegration | undefined): Promise<void> {
    const { tenantId } = call;
    const { db } = this.#deps;
    // The run's own token: a claim whose answer storage lost is asked again with it, and found to be this run's.
    const token = randomUUID();
    const claim = await this.#whenStored(() => claimExecution(db, tenantId, executionId, token));
    const execution = claim.execution;
    if (!execution) return;
    // The run's number: 1, or more when runs before it were cut short.
    let run = claim.runs;
    if (claim.claimed) {
      this.#deps.queueMetrics.executionStarted((Date.now() - Date.parse(execution.started_at)) / 1000);
    } else {
      if (execution.status !== 'running') {
        call.log.debug({ status: execution.status }, `async execution not run: it is ${execution.status} already`);
        return;
      }
      if (!mayRunTwice(call.operation, call.fields)) {
        // `attempts`: the runs begun, the last of them cut short while its request may have been on its way.
        const unknown = new ApiError('upstream_outcome_unknown', undefined, { attempts: claim.runs });
        // Its earlier run may have written: the record says so (reachedUpstream), as that run would have.
        const outcome = {
          ...failedBeforeRun(executionId, execution.connector, unknown),
          reachedUpstream: true,
          attempts: claim.runs,
        };
        // Only the end's line: this ends the run that was cut short, whose start was logged by the process that died.
        await this.#finish(call, execution, outcome, replyFor(outcome, call.requestId, call.log), run);
        return;
      }
      if (!(await this.#whenStored(() => reclaimExecution(db, tenantId, executionId, claim.runs, token)))) {
        call.log.debug('async execution not run: another worker runs it again');
        return;
      }
      run = claim.runs + 1;
    }
    call.log.info({ connector: execution.connector, run }, 'async execution started');
    const deleted = `No integration ${call.integrationId}: it was deleted after the call was accepted.`;
    const outcome = stored
      ? await this.#deps.runner.run(call, stored, executionId, this.#deps.asyncDeadlineSeconds)
      : failedBeforeRun(executionId, execution.connector, new ApiError('not_found', deleted));
    await this.#finish(call, execution, outcome, replyFor(outcome, call.requestId, call.log), run);
  }

  /** Ends an async execution (run `run`): its end and its event stored, and the end's log line. */
  async #finish(call: ExecuteCall, execution: Execution, outcome: Outcome, reply: Reply, run: number): Promise<void> {
    const { db, queue, recorder, resultRetentionHours } = this.#deps;
    const text = bodyText(reply.body);
    const finishedAt = new Date();
    const finished: Execution = { ...execution, ...endOf(outcome, reply), finished_at: finishedAt.toISOString() };
    const expiresAt = new Date(finishedAt.getTime() + resultRetentionHours * 3_600_000).toISOString();
    // The end and its event in one transaction: a crash between them cannot lose the event. Storage that cannot take
    // them now is waited for, the answer held by this run: the execution ends with the answer the upstream gave, not
    // as unknown (docs/async.md#when-storage-fails).
    let delivering = false;
    let ended = false;
    await this.#whenStored(() =>
      db.transaction().execute(async (trx) => {
        ended = await finishExecution(trx, call.tenantId, finished, { result: text, result_expires_at: expiresAt });
        delivering = ended && (await recorder.storeEvent(trx, call.tenantId, finished, () => JSON.parse(text)));
      }),
    );
    if (delivering) queue.committed('webhook-deliveries');
    logRunEnd(call.log, finished, run, ended);
  }

  /**
   * Runs `write` until storage takes it: a storage error waits for storage's return (StorageHealth) and tries again;
   * any other error, or the app closing, is thrown (the job then runs again). For an async run's own writes, which
   * are safe to repeat: its claim (with its token) and its end (conditional on `running`).
   */
  async #whenStored<T>(write: () => Promise<T>): Promise<T> {
    const health = this.#deps.storageHealth;
    for (;;) {
      try {
        return await write();
      } catch (error) {
        if (!isStorageUnavailable(error) || health.closed) throw error;
        health.failed(error);
        await health.returned();
      }
    }
  }
}
