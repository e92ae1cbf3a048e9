import type { Db } from '../storage/database.ts';

/** The queues Interchange works: executions accepted with `Prefer: respond-async`, and webhook deliveries. */
export type QueueName = 'executions' | 'webhook-deliveries';
export const queueNames: readonly QueueName[] = ['executions', 'webhook-deliveries'];

/** A job as its handler gets it. */
export interface QueueJob<T> {
  id: string;
  data: T;
  /**
   * How many runs of this job began before this one and did not finish: their process died (the job's heartbeat
   * stopped) or their handler threw. 0 on the first run. A handler whose work must not be done twice reads it.
   */
  retryCount: number;
}

export interface SendOptions {
  /** Not run before this time (a delivery's next attempt). */
  startAfter?: Date;
  /** The job is added within this transaction: it exists if and only if the transaction commits. */
  db?: Db;
  /**
   * Whose job this is (a tenant): jobs with a key are taken round robin by key, on every instance
   * (src/queue/fair-rounds.ts). Jobs without one take round 0.
   */
  fairKey?: string;
}

/**
 * What a handler may resolve with instead of nothing: "not now". The job is not finished: it waits `deferMs` and is
 * run again, as the same job, without counting as a retry (an async execution waiting for a free slot of its
 * integration, docs/resilience.md#concurrency).
 */
export interface Deferral {
  deferMs: number;
}

export type JobHandler<T> = (job: QueueJob<T>) => Promise<Deferral | undefined>;

/**
 * A durable job queue, the one interface over two implementations (docs/async.md#the-queue):
 * - on PostgreSQL, pg-boss, shared by every instance (src/queue/pg-boss-queue.ts);
 * - on SQLite, a queue embedded in the process, in the same database file (src/queue/embedded-queue.ts).
 *
 * Both promise the same: a job added is kept until a handler finishes it; each job runs on one worker at a time; a
 * handler that resolves finishes the job, unless it resolves with a `Deferral`: then the job waits and runs again,
 * never twice at once and never lost (on pg-boss a deferred job is finished and sent again in one transaction, so
 * its id changes; its data does not); one that throws is run again later (growing delays, a bounded number of
 * times); a job whose worker stopped beating (its process died) is run again after `heartbeatSeconds`, with its
 * `retryCount` raised. So a job runs at least once; handlers make it exactly once where that matters (the
 * execution's row is claimed in one conditional update).
 */
export interface JobQueue {
  readonly kind: 'pg-boss' | 'embedded';
  start(): Promise<void>;
  /** Adds a job; resolves when it is stored (or, with `db`, written in that transaction). Returns its id. */
  send<T extends object>(queue: QueueName, data: T, options?: SendOptions): Promise<string>;
  /** A job was added within a transaction that has now committed: this process's idle workers look at once. */
  committed(queue: QueueName): void;
  /** Runs `handler` for this queue's jobs on this instance, at most `concurrency` at once. */
  work<T>(queue: QueueName, concurrency: number, handler: JobHandler<T>): Promise<void>;
  /** How many of this queue's jobs are due and waiting to run (pg-boss: as of its last monitoring pass). */
  due(queue: QueueName): Promise<number>;
  /** Stops taking jobs and waits up to `graceMs` for the running ones; those still running are run again elsewhere. */
  stop(graceMs: number): Promise<void>;
}

/** Settings both implementations take. */
export interface QueueSettings {
  /** A running job's heartbeat is written every half of this; a job without one for this long is run again. */
  heartbeatSeconds: number;
  /** How often a handler that throws is run again before the job is given up (and logged). */
  retryLimit: number;
}

/** The delay before the `retry`th run of a job whose handler threw: 1 s, 2 s, 4 s … up to 5 min. */
export function retryDelayMs(retry: number): number {
  return Math.min(300_000, 1000 * 2 ** Math.max(0, retry - 1));
}
