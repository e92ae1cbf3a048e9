import { randomUUID } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import { sql } from 'kysely';
import type { Db } from '../storage/database.ts';
import { dbTime } from '../storage/db-clock.ts';
import { roundFor, servedFrom } from './fair-rounds.ts';
import {
  type JobHandler,
  type JobQueue,
  type QueueName,
  type QueueSettings,
  retryDelayMs,
  type SendOptions,
} from './job-queue.ts';

interface JobRow {
  id: string;
  data: string;
  retry_count: number;
}

/** How often idle workers look for jobs that became due (a deferred delivery) or were added by another process. */
const pollMs = 1000;

/**
 * The job queue embedded in the process, for SQLite (docs/async.md#the-queue): its jobs live in the same database
 * file as everything else (table `ix_jobs`, created on start), so an execution's row and its job are written in one
 * transaction, and both survive a crash. SQLite runs one statement at a time, so taking a job is one
 * `UPDATE … RETURNING` and no two workers can take the same one. Workers are woken at once by a `send` from this
 * process, and otherwise look every second.
 *
 * It keeps the promises of `JobQueue` as pg-boss does: heartbeats for running jobs; a job whose heartbeat is older
 * than `heartbeatSeconds` (its process died) is made ready again with `retry_count + 1`; a handler that throws is
 * run again after a growing delay, `retryLimit` times, then the job is kept as `failed`.
 */
export class EmbeddedQueue implements JobQueue {
  readonly kind = 'embedded';
  readonly #db: Db;
  readonly #log: FastifyBaseLogger;
  readonly #settings: QueueSettings;
  readonly #wakers = new Map<QueueName, Set<() => void>>();
  /** Jobs running in this process: their heartbeats are written, and stop() waits for them. */
  readonly #running = new Map<string, Promise<void>>();
  readonly #timers: NodeJS.Timeout[] = [];
  #stopped = false;

  constructor(db: Db, log: FastifyBaseLogger, settings: QueueSettings) {
    this.#db = db;
    this.#log = log;
    this.#settings = settings;
  }

  async start(): Promise<void> {
    await sql`create table if not exists ix_jobs (
      id text primary key,
      queue text not null,
      data text not null,
      state text not null,
      retry_count integer not null default 0,
      start_after text not null,
      heartbeat_at text,
      created_at text not null,
      last_error text,
      round integer not null default 0
    )`.execute(this.#db);
    // Files from before fair rounds: their jobs take round 0, ahead of any queued since.
    const { rows: roundColumn } = await sql`select 1 from pragma_table_info('ix_jobs') where name = 'round'`.execute(this.#db);
    if (roundColumn.length === 0) await sql`alter table ix_jobs add column round integer not null default 0`.execute(this.#db);
    await sql`drop index if exists ix_jobs_ready`.execute(this.#db);
    await sql`create index if not exists ix_jobs_turns on ix_jobs (queue, state, round, start_after)`.execute(this.#db);
    const beatMs = (this.#settings.heartbeatSeconds * 1000) / 2;
    this.#timers.push(setInterval(() => void this.#beat().catch((e) => this.#warn(e, 'heartbeat')), beatMs).unref());
    await this.#recover();
    this.#timers.push(setInterval(() => void this.#recover().catch((e) => this.#warn(e, 'recovery')), beatMs).unref());
  }

  async send<T extends object>(queue: QueueName, data: T, options: SendOptions = {}): Promise<string> {
    const id = randomUUID();
    const now = new Date().toISOString();
    const startAfter = options.startAfter?.toISOString() ?? now;
    const db = options.db ?? this.#db;
    const round =
      options.fairKey === undefined ? 0 : await roundFor(db, queue, options.fairKey, await this.#servedRound(db, queue));
    await sql`insert into ix_jobs (id, queue, data, state, retry_count, start_after, created_at, round)
      values (${id}, ${queue}, ${JSON.stringify(data)}, 'created', 0, ${startAfter}, ${now}, ${round})`.execute(db);
    // Within a transaction, the job is not there to take until it commits: the sender calls committed() then.
    if (!options.db) this.committed(queue);
    return id;
  }

  committed(queue: QueueName): void {
    for (const wake of this.#wakers.get(queue) ?? []) wake();
  }

  async work<T>(queue: QueueName, concurrency: number, handler: JobHandler<T>): Promise<void> {
    for (let i = 0; i < concurrency; i++) void this.#worker(queue, handler);
  }

  async due(queue: QueueName): Promise<number> {
    const now = new Date().toISOString();
    const { rows } = await sql<{ n: number }>`select count(*) as n from ix_jobs
      where queue = ${queue} and state = 'created' and start_after <= ${now}`.execute(this.#db);
    return Number(rows[0]?.n ?? 0);
  }

  async stop(graceMs: number): Promise<void> {
    this.#stopped = true;
    for (const timer of this.#timers) clearInterval(timer);
    for (const wakers of this.#wakers.values()) for (const wake of wakers) wake();
    const grace = new Promise<void>((resolve) => setTimeout(resolve, graceMs).unref());
    await Promise.race([Promise.allSettled(this.#running.values()), grace]);
  }

  /** One worker: takes a job, runs it, takes the next; waits for a wake-up or the next look when there is none. */
  async #worker<T>(queue: QueueName, handler: JobHandler<T>): Promise<void> {
    while (!this.#stopped) {
      let job: JobRow | undefined;
      try {
        job = await this.#take(queue);
      } catch (error) {
        this.#warn(error, 'take');
      }
      if (!job) {
        await this.#idle(queue);
        continue;
      }
      const running = this.#run(job, handler);
      this.#running.set(job.id, running);
      await running;
      this.#running.delete(job.id);
    }
  }

  #idle(queue: QueueName): Promise<void> {
    return new Promise((resolve) => {
      const wakers = this.#wakers.get(queue) ?? new Set<() => void>();
      this.#wakers.set(queue, wakers);
      const wake = () => {
        clearTimeout(timer);
        wakers.delete(wake);
        resolve();
      };
      const timer = setTimeout(wake, pollMs);
      wakers.add(wake);
    });
  }

  /** The due job of the lowest round (round robin by tenant, src/queue/fair-rounds.ts), the longest due first within it. */
  async #take(queue: QueueName): Promise<JobRow | undefined> {
    const now = new Date().toISOString();
    const { rows } = await sql<JobRow>`update ix_jobs set state = 'active', heartbeat_at = ${dbTime(this.#db)}
      where id = (select id from ix_jobs where queue = ${queue} and state = 'created' and start_after <= ${now}
                  order by round, start_after, created_at limit 1)
      returning id, data, retry_count`.execute(this.#db);
    return rows[0];
  }

  /** The round being served (src/queue/fair-rounds.ts): the lowest round waiting, due jobs first. */
  async #servedRound(db: Db, queue: QueueName): Promise<number | undefined> {
    const now = new Date().toISOString();
    const { rows } = await sql<{ due: number | null; any: number | null }>`select
        min(case when start_after <= ${now} then round end) as due, min(round) as any
      from ix_jobs where queue = ${queue} and state = 'created'`.execute(db);
    return servedFrom(rows[0]?.due ?? rows[0]?.any);
  }

  async #run<T>(job: JobRow, handler: JobHandler<T>): Promise<void> {
    try {
      const result = await handler({ id: job.id, data: JSON.parse(job.data) as T, retryCount: Number(job.retry_count) });
      if (result) {
        // Deferred: waiting again, the same job, its retries untouched.
        const startAfter = new Date(Date.now() + result.deferMs).toISOString();
        await sql`update ix_jobs set state = 'created', start_after = ${startAfter} where id = ${job.id}`.execute(this.#db);
      } else {
        await sql`delete from ix_jobs where id = ${job.id}`.execute(this.#db);
      }
    } catch (error) {
      const retry = Number(job.retry_count) + 1;
      const giveUp = retry > this.#settings.retryLimit;
      this.#log[giveUp ? 'error' : 'warn'](
        { err: error, job_id: job.id },
        giveUp ? 'a job failed for good' : 'a job failed; it runs again',
      );
      const startAfter = new Date(Date.now() + retryDelayMs(retry)).toISOString();
      await sql`update ix_jobs set state = ${giveUp ? 'failed' : 'created'}, retry_count = ${retry},
          start_after = ${startAfter}, last_error = ${String((error as Error)?.message ?? error)}
        where id = ${job.id}`
        .execute(this.#db)
        .catch((e) => this.#warn(e, 'settle'));
    }
  }

  /** Writes the heartbeat of every job this process is running. */
  async #beat(): Promise<void> {
    const ids = [...this.#running.keys()];
    if (ids.length === 0) return;
    await sql`update ix_jobs set heartbeat_at = ${dbTime(this.#db)}
      where id in (select value from json_each(${JSON.stringify(ids)}))`.execute(this.#db);
  }

  /**
   * Makes ready again every running job whose heartbeat stopped: its process died. Heartbeats are written and judged by
   * the database's clock (dbTime), so a process whose own clock runs ahead does not take a live job for a dead one.
   */
  async #recover(): Promise<void> {
    const stale = dbTime(this.#db, -this.#settings.heartbeatSeconds * 1000);
    const { rows } = await sql<{ id: string }>`update ix_jobs set state = 'created', retry_count = retry_count + 1
      where state = 'active' and heartbeat_at < ${stale} returning id`.execute(this.#db);
    if (rows.length > 0) {
      this.#log.warn({ jobs: rows.length }, 'jobs whose worker stopped are ready again');
      for (const wakers of this.#wakers.values()) for (const wake of wakers) wake();
    }
  }

  #warn(error: unknown, what: string): void {
    if (!this.#stopped) this.#log.warn({ err: error }, `job queue: ${what} failed`);
  }
}
