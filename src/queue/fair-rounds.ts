import { PostgresAdapter, sql } from 'kysely';
import type { Db } from '../storage/database.ts';
import type { QueueName } from './job-queue.ts';

/**
 * Round robin by tenant, for a queue whose workers take jobs in the order of a number, on one instance or many
 * (docs/async.md#fair-turns). Each job is given a round when it is queued; workers take the due job of the lowest
 * round first, the longest waiting first within a round. A tenant's jobs take consecutive rounds, and a tenant with
 * nothing queued joins the round being served now, at its end: a tenant's 1,000 queued calls take rounds r … r+999,
 * and another tenant's call queued after them takes round r, so it runs right after the first of the 1,000, not after
 * all of them. This is start-time fair queuing with the job as the unit; a worker is never taken from a running job,
 * so another tenant waits at most until that one job has a free worker.
 *
 * `servedRound` is the round being served now: the lowest round of the due jobs waiting (the jobs of earlier rounds
 * have been taken; when none is due, of those waiting to be due, such as runs deferred by their integration's
 * concurrency cap), or undefined when none waits: then the last round given out is the one being served. A job is
 * never given a round below it, so it only moves on.
 *
 * The tenant's row is written in the transaction that queues the job: two jobs of one tenant queued at once (by two
 * instances) wait for each other's row lock and take two rounds, never the same one.
 */
export async function roundFor(db: Db, queue: QueueName, fairKey: string, servedRound: number | undefined): Promise<number> {
  const base = servedRound ?? (await lastRound(db, queue));
  const greatest = db.getExecutor().adapter instanceof PostgresAdapter ? sql.raw('greatest') : sql.raw('max');
  const row = await db
    .insertInto('queue_rounds')
    .values({ queue, fair_key: fairKey, next_round: base + 1 })
    .onConflict((oc) =>
      oc
        .columns(['queue', 'fair_key'])
        .doUpdateSet({ next_round: sql<number>`${greatest}(queue_rounds.next_round, ${base}) + 1` }),
    )
    .returning('next_round')
    .executeTakeFirstOrThrow();
  return Number(row.next_round) - 1;
}

/** The last round given out in `queue`, to any tenant (0 before the first). */
async function lastRound(db: Db, queue: QueueName): Promise<number> {
  const row = await db
    .selectFrom('queue_rounds')
    .select((eb) => eb.fn.max('next_round').as('next'))
    .where('queue', '=', queue)
    .executeTakeFirst();
  return Math.max(0, Number(row?.next ?? 0) - 1);
}

/** The round being served: the lowest round still waiting (`null` or undefined: none waits). */
export function servedFrom(lowestWaiting: number | string | null | undefined): number | undefined {
  return lowestWaiting === null || lowestWaiting === undefined ? undefined : Number(lowestWaiting);
}
