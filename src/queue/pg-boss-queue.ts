import type { FastifyBaseLogger } from 'fastify';
import { CompiledQuery } from 'kysely';
import { PgBoss } from 'pg-boss';
import { isStorageUnavailable } from '../storage/availability.ts';
import type { Db } from '../storage/database.ts';
import { type JobHandler, type JobQueue, type QueueName, type QueueSettings, queueNames, type SendOptions } from './job-queue.ts';

/** pg-boss's longest run of a job: the async deadline's maximum (1 h) and a margin. The deadline itself is ours. */
const expireInSeconds = 3600 + 300;

/** A Kysely transaction as pg-boss's `db` option: pg-boss's SQL runs on the transaction's connection. */
function within(db: Db) {
  return {
    executeSql: async (text: string, values: unknown[] = []) => {
      const result = await db.executeQuery(CompiledQuery.raw(text, values));
      return { rows: result.rows as unknown[] };
    },
  };
}

/**
 * The job queue on PostgreSQL: pg-boss (docs/async.md#the-queue), in its own schema `pgboss` of the same database,
 * shared by every instance. pg-boss takes each job with `FOR UPDATE SKIP LOCKED`, writes the heartbeats of running
 * jobs, and its supervisor (every `heartbeatSeconds` here) makes a job whose heartbeat stopped ready again. Workers
 * are woken by LISTEN/NOTIFY when a job is added, and otherwise poll every second.
 */
export class PgBossQueue implements JobQueue {
  readonly kind = 'pg-boss';
  readonly #boss: PgBoss;
  readonly #settings: QueueSettings;

  readonly #db: Db;

  /** `db`, the service's own connection to the same database: a deferred job is finished and sent again in its transaction. */
  constructor(databaseUrl: string, db: Db, log: FastifyBaseLogger, settings: QueueSettings) {
    this.#settings = settings;
    this.#db = db;
    this.#boss = new PgBoss({
      connectionString: databaseUrl,
      max: 4,
      useListenNotify: true,
      superviseIntervalSeconds: settings.heartbeatSeconds,
      monitorIntervalSeconds: settings.heartbeatSeconds,
      schedule: false,
      openTelemetry: { enabled: false },
    });
    // While the database is away every worker's poll fails each second: the first failure of a kind is logged, its
    // repeats once a minute (StorageHealth logs the outage itself).
    const lastLogged = new Map<string, number>();
    this.#boss.on('error', (error: Error & { code?: string }) => {
      const kind = isStorageUnavailable(error) ? `storage:${error.code ?? error.message.slice(0, 40)}` : undefined;
      const now = performance.now();
      if (kind !== undefined && now - (lastLogged.get(kind) ?? Number.NEGATIVE_INFINITY) < 60_000) return;
      if (kind !== undefined) lastLogged.set(kind, now);
      log.warn({ err: error }, 'job queue (pg-boss) error');
    });
  }

  async start(): Promise<void> {
    await this.#boss.start();
    for (const name of queueNames) {
      const options = {
        retryLimit: this.#settings.retryLimit,
        retryDelay: 1,
        retryBackoff: true,
        retryDelayMax: 300,
        heartbeatSeconds: this.#settings.heartbeatSeconds,
        expireInSeconds,
        notify: true,
      };
      // Created once; later starts bring the settings up to date.
      if (await this.#boss.getQueue(name)) await this.#boss.updateQueue(name, options);
      else await this.#boss.createQueue(name, options);
    }
  }

  async send<T extends object>(queue: QueueName, data: T, options: SendOptions = {}): Promise<string> {
    const id = await this.#boss.send(queue, data, {
      ...(options.startAfter && { startAfter: options.startAfter }),
      ...(options.db && { db: within(options.db) }),
    });
    if (id === null) throw new Error(`pg-boss did not add the job to ${queue}`);
    return id;
  }

  /** pg-boss's NOTIFY is sent in the transaction and heard when it commits, by every instance. */
  committed(_queue: QueueName): void {}

  /**
   * `concurrency` pg-boss workers of one job each. A pg-boss worker waits its polling interval after every fetch, a
   * fetch that found a job included (its burst modes need batches, or queue statistics that are seconds old): with a
   * backlog, each worker would run one job a second. So each worker is told, when its job is done, that there may be
   * more (`notifyWorker`), and fetches again at once; an empty fetch waits as usual (NOTIFY or the 1 s poll).
   */
  async work<T>(queue: QueueName, concurrency: number, handler: JobHandler<T>): Promise<void> {
    // NOTIFY wakes idle workers when a job is added; polling each second is the backstop, also while NOTIFY is on
    // (pg-boss's default then is 30 s: jobs added while every worker was busy, or due later, such as a delivery's
    // retry, would wait that long).
    const options = { batchSize: 1, localConcurrency: 1, pollingIntervalSeconds: 1, notifyPollingIntervalSeconds: 1 };
    for (let i = 0; i < concurrency; i++) {
      let workerId: string | undefined;
      workerId = await this.#boss.work<T>(queue, options, async (jobs) => {
        try {
          for (const job of jobs) {
            const result = await handler({ id: job.id, data: job.data, retryCount: job.retryCount });
            if (result) await this.#defer(queue, job, result.deferMs);
          }
        } finally {
          if (workerId !== undefined) this.#boss.notifyWorker(workerId);
        }
      });
    }
  }

  /**
   * A deferred job: pg-boss cannot put an active job back without counting a retry, so the job is finished and the
   * same data sent again to start after `deferMs`, both in one transaction: there is never none and never two. (pg-boss
   * then finds the job already finished, and leaves it so.)
   */
  async #defer<T>(queue: QueueName, job: { id: string; data: T }, deferMs: number): Promise<void> {
    await this.#db.transaction().execute(async (trx) => {
      await this.#boss.send(queue, job.data as object, { startAfter: new Date(Date.now() + deferMs), db: within(trx) });
      await this.#boss.complete(queue, job.id, null, { db: within(trx) });
    });
  }

  /** pg-boss's monitor counts each queue every `heartbeatSeconds`: read from there, not counted on every scrape. */
  async due(queue: QueueName): Promise<number> {
    return (await this.#boss.getQueue(queue))?.readyCount ?? 0;
  }

  async stop(graceMs: number): Promise<void> {
    await this.#boss.stop({ graceful: true, timeout: graceMs, close: true });
  }
}
