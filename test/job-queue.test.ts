/**
 * A handler's "not now" (a Deferral) on both job queues: the job runs again later with the same data, is not counted
 * as a retry, is never run twice at once, and exactly one job is left waiting in between (on pg-boss the deferral
 * finishes the job and sends it again in one transaction).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { sql } from 'kysely';
import pino from 'pino';
import { EmbeddedQueue } from '../src/queue/embedded-queue.ts';
import type { JobQueue, QueueJob } from '../src/queue/job-queue.ts';
import { PgBossQueue } from '../src/queue/pg-boss-queue.ts';
import { migrate, openStorage, type Storage } from '../src/storage/database.ts';
import { createTestDatabase } from './helpers/postgres.ts';
import { until } from './helpers/until.ts';

const log = pino({ level: 'silent' });
const settings = { heartbeatSeconds: 10, retryLimit: 3 };

interface Setup {
  storage: Storage;
  queue: JobQueue;
  /** Jobs of the executions queue not finished: waiting or running. */
  unfinished(): Promise<number>;
  close(): Promise<void>;
}

async function embedded(): Promise<Setup> {
  const dir = mkdtempSync(join(tmpdir(), 'ix-queue-'));
  const storage = openStorage(`sqlite:${join(dir, 'ix.db')}`);
  await migrate(storage);
  const queue = new EmbeddedQueue(storage.db, log, settings);
  await queue.start();
  return {
    storage,
    queue,
    unfinished: async () =>
      Number(
        (
          await sql<{
            n: number;
          }>`select count(*) as n from ix_jobs where queue = 'executions' and state in ('created', 'active')`.execute(storage.db)
        ).rows[0].n,
      ),
    close: async () => {
      await queue.stop(1000);
      await storage.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function pgBoss(): Promise<Setup> {
  const database = await createTestDatabase();
  const storage = openStorage(database.url);
  await migrate(storage);
  const queue = new PgBossQueue(database.url, storage.db, log, settings);
  await queue.start();
  return {
    storage,
    queue,
    unfinished: async () =>
      Number(
        (
          await sql<{
            n: string;
          }>`select count(*) as n from pgboss.job where name = 'executions' and state in ('created', 'retry', 'active')`.execute(
            storage.db,
          )
        ).rows[0].n,
      ),
    close: async () => {
      await queue.stop(1000);
      await storage.close();
      await database.drop();
    },
  };
}

for (const [name, make] of [
  ['embedded queue (SQLite)', embedded],
  ['pg-boss (PostgreSQL)', pgBoss],
] as const) {
  describe(`${name}: a deferred job`, () => {
    const setups: Setup[] = [];
    after(() => Promise.all(setups.map((s) => s.close())));

    test('runs again with the same data, not as a retry, one at a time, and then finishes', async () => {
      const setup = await make();
      setups.push(setup);
      const runs: Array<QueueJob<{ n: number }>> = [];
      let running = 0;
      let overlapped = false;
      // Each run waits until the test lets it end, so the test counts the jobs while one is running.
      const gates: Array<() => void> = [];
      await setup.queue.work<{ n: number }>('executions', 4, async (job) => {
        running += 1;
        overlapped ||= running > 1;
        runs.push(job);
        await new Promise<void>((resolve) => gates.push(resolve));
        running -= 1;
        return runs.length < 3 ? { deferMs: 50 } : undefined;
      });
      await setup.queue.send('executions', { n: 7 });
      setup.queue.committed('executions');
      const counts: number[] = [];
      for (let run = 1; run <= 3; run++) {
        await until(() => gates.length === run, `run ${run} began`);
        counts.push(await setup.unfinished());
        gates[run - 1]();
      }
      await until(async () => (await setup.unfinished()) === 0, 'the job finished');
      // While each run went on, its job was the only one: the deferral lost none and added none.
      assert.deepEqual(counts, [1, 1, 1]);
      assert.deepEqual(
        runs.map((job) => job.data),
        [{ n: 7 }, { n: 7 }, { n: 7 }],
      );
      assert.deepEqual(
        runs.map((job) => job.retryCount),
        [0, 0, 0],
      );
      assert.equal(overlapped, false);
      // It finished for good: nothing more runs.
      await new Promise((resolve) => setTimeout(resolve, 300));
      assert.equal(runs.length, 3);
    });
  });
}
