import type { FastifyBaseLogger } from 'fastify';
import { CompiledQuery, sql } from 'kysely';
import { PgBoss } from 'pg-boss';
import { isStorageUnavailable } from '../storage/availability.ts';
import type { Db } from '../storage/database.ts';
import { roundFor, servedFrom } from './fair-rounds.ts';
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

  /**
   * A job with a `fairKey` takes its round (src/queue/fair-rounds.ts) as pg-boss's priority, negated: pg-boss fetches
   * the highest priority first and the oldest within it, so every instance's workers take the lowest round first.
   */
  async send<T extends object>(queue: QueueName, data: T, options: SendOptions = {}): Promise<string> {
    const db = options.db ?? this.#db;
    const round =
      options.fairKey === undefined ? 0 : await roundFor(db, queue, options.fairKey, await this.#servedRound(db, queue));
    const id = await this.#boss.send(queue, data, {
      priority: -round,
      ...(options.startAfter && { startAfter: options.startAfter }),
      ...(options.db && { db: within(options.db) }),
    });
    if (id === null) throw new Error(`pg-boss did not add the job to ${queue}`);
    return id;
  }

  /**
   * The round being served: read from pg-boss's job table (its index job_i11 is on name, priority desc, created_on,
   * start_after, for the jobs not yet active), the lowest round waiting, due jobs first.
   */
  async #servedRound(db: Db, queue: QueueName): Promise<number | undefined> {
    const { rows } = await sql<{ due: number | null; any: number | null }>`select
        (select -priority from pgboss.job where name = ${queue} and state < 'active' and not blocked
          and start_after <= now() order by priority desc, created_on limit 1) as due,
        (select -max(priority) from pgboss.job where name = ${queue} and state < 'active' and not blocked) as any`.execute(db);
    return servedFrom(rows[0]?.due ?? rows[0]?.any);
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
    const options = {
      batchSize: 1,
      localConcurrency: 1,
      pollingIntervalSeconds: 1,
      notifyPollingIntervalSeconds: 1,
      // A deferred job is sent again with its priority (its fair round).
      includeMetadata: true as const,
    };
    for (let i = 0; i < concurrency; i++) {
      let workerId: string | undefined;
      workerId = await this.#boss.work<T, unknown, typeof options>(queue, options, async (jobs) => {
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
  async #defer<T>(queue: QueueName, job: { id: string; data: T; priority: number }, deferMs: number): Promise<void> {
    await this.#db.transaction().execute(async (trx) => {
      const startAfter = new Date(Date.now() + deferMs);
      await this.#boss.send(queue, job.data as object, { startAfter, priority: job.priority, db: within(trx) });
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
