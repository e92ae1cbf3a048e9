import type { FastifyBaseLogger } from 'fastify';
import type { Config } from '../config/config.ts';
import type { ExecutionJob, ExecutionService } from '../execution/service.ts';
import { EmbeddedQueue } from '../queue/embedded-queue.ts';
import type { JobQueue } from '../queue/job-queue.ts';
import { dropExpiredResults } from '../storage/async-executions.ts';
import type { Db, Storage } from '../storage/database.ts';
import type { DeliveryJob, WebhookDeliverer } from '../webhooks/delivery.ts';

/** The durable queue of an instance, started; the workers that take its jobs; the sweep of async answers past their time. */

/** Opens and starts the queue of async executions and webhook deliveries for `storage`. */
export async function openQueue(config: Config, storage: Storage, log: FastifyBaseLogger): Promise<JobQueue> {
  // The durable queue of async executions and webhook deliveries (docs/async.md#the-queue). pg-boss (and its cron and
  // date libraries, ~6 MiB of heap) is loaded only on PostgreSQL: an instance on SQLite never runs it.
  const queueSettings = { heartbeatSeconds: config.workerHeartbeatSeconds, retryLimit: 10 };
  const queue: JobQueue =
    storage.kind === 'postgres'
      ? // pg-boss is loaded only on PostgreSQL: the embedded default does without it (as without pg and ioredis).
        new (await import('../queue/pg-boss-queue.ts')).PgBossQueue(config.databaseUrl, storage.db, log, queueSettings)
      : new EmbeddedQueue(storage.db, log, queueSettings);
  await queue.start();
  return queue;
}

/** Takes the queue's jobs on this instance: executions and webhook deliveries, each up to IX_WORKER_CONCURRENCY at once. */
export async function workQueue(
  config: Config,
  queue: JobQueue,
  executionService: ExecutionService,
  deliverer: WebhookDeliverer,
  log: FastifyBaseLogger,
): Promise<void> {
  await queue.work<ExecutionJob>('executions', config.workerConcurrency, (job) => executionService.runJob(job, log));
  await queue.work<DeliveryJob>('webhook-deliveries', config.workerConcurrency, (job) =>
    deliverer.run(job).then(() => undefined),
  );
}

/** Async answers kept past IX_RESULT_RETENTION_HOURS are dropped (GET /executions/{id} already hides them); every 10 minutes. */
export function startResultSweep(db: Db, log: FastifyBaseLogger): NodeJS.Timeout {
  return setInterval(
    () => void dropExpiredResults(db, new Date().toISOString()).catch((e) => log.warn({ err: e }, 'results sweep failed')),
    10 * 60 * 1000,
  ).unref();
}
