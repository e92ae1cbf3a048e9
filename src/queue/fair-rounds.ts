import { PostgresAdapter, sql } from 'kysely';
import type { Db } from '../storage/database.ts';
import type { QueueName } from './job-queue.ts';

/**
 * The highest round (pg-boss's priority is a 32-bit integer, and this is its negation). Rounds start again from 0
 * whenever nothing waits; a queue that never drains reaches it after 2,147,483,646 jobs, and from then on its jobs are
 * taken oldest first (docs/async.md#fair-turns).
 */
const lastRound = 2 ** 31 - 2;

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
 * concurrency cap), or undefined when none waits: then every tenant starts again from round 0. A job is never given
 * a round below it, so it only moves on while anything waits.
 *
 * The tenant's row is written in the transaction that queues the job: two jobs of one tenant queued at once (by two
 * instances) wait for each other's row lock and take two rounds, never the same one.
 */
export async function roundFor(db: Db, queue: QueueName, fairKey: string, servedRound: number | undefined): Promise<number> {
  // Nothing waits: every tenant starts again from round 0, so the numbers stay small wherever the queue ever drains.
  if (servedRound === undefined) {
    await db.updateTable('queue_rounds').set({ next_round: 0 }).where('queue', '=', queue).where('next_round', '>', 0).execute();
  }
  const base = Math.min(servedRound ?? 0, lastRound);
  const postgres = db.getExecutor().adapter instanceof PostgresAdapter;
  const [greatest, least] = postgres ? [sql.raw('greatest'), sql.raw('least')] : [sql.raw('max'), sql.raw('min')];
  const row = await db
    .insertInto('queue_rounds')
    .values({ queue, fair_key: fairKey, next_round: base + 1 })
    .onConflict((oc) =>
      oc.columns(['queue', 'fair_key']).doUpdateSet({
        next_round: sql<number>`${least}(${greatest}(queue_rounds.next_round, ${base}), ${lastRound}) + 1`,
      }),
    )
    .returning('next_round')
    .executeTakeFirstOrThrow();
  return Number(row.next_round) - 1;
}

/** The round being served: the lowest round still waiting (`null` or undefined: none waits). */
export function servedFrom(lowestWaiting: number | string | null | undefined): number | undefined {
  return lowestWaiting === null || lowestWaiting === undefined ? undefined : Number(lowestWaiting);
}
