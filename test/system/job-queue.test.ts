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
import { EmbeddedQueue } from '../../src/queue/embedded-queue.ts';
import type { JobQueue, QueueJob } from '../../src/queue/job-queue.ts';
import { PgBossQueue } from '../../src/queue/pg-boss-queue.ts';
import { migrate, openStorage, type Storage } from '../../src/storage/database.ts';
import { createTestDatabase } from '../support/postgres.ts';
import { until } from '../support/until.ts';

const log = pino({ level: 'silent' });
const settings = { heartbeatSeconds: 10, retryLimit: 3 };

interface Setup {
  storage: Storage;
  queue: JobQueue;
  /**
   * The queues whose workers a test starts: on pg-boss two instances (two PgBossQueues on one database, as two
   * processes would have), on SQLite the one embedded queue.
   */
  instances(): Promise<JobQueue[]>;
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
    instances: async () => [queue],
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
  const others: Array<{ storage: Storage; queue: PgBossQueue }> = [];
  return {
    storage,
    queue,
    instances: async () => {
      const other = openStorage(database.url);
      const second = new PgBossQueue(database.url, other.db, log, settings);
      await second.start();
      others.push({ storage: other, queue: second });
      return [queue, second];
    },
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
      for (const other of others) {
        await other.queue.stop(1000);
        await other.storage.close();
      }
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

/**
 * Round robin by tenant (docs/async.md#fair-turns): two workers (on pg-boss, one on each of two instances) are busy
 * with tenant A's slow jobs and A has more queued; B and then C queue theirs. Each freed worker takes the next tenant's
 * job in turn (A's oldest first, as the round being served began with it), never A's whole backlog first.
 */
for (const [name, make] of [
  ['embedded queue (SQLite), one instance of two workers', embedded],
  ['pg-boss (PostgreSQL), two instances of one worker', pgBoss],
] as const) {
  describe(`${name}: tenants' jobs`, () => {
    const setups: Setup[] = [];
    after(() => Promise.all(setups.map((s) => s.close())));

    test('are taken round robin by tenant, whatever the order they were queued in', async () => {
      const setup = await make();
      setups.push(setup);
      const started: string[] = [];
      const gates: Array<() => void> = [];
      const instances = await setup.instances();
      for (const queue of instances) {
        await queue.work<{ job: string }>('executions', 2 / instances.length, async (job) => {
          started.push(job.data.job);
          await new Promise<void>((resolve) => gates.push(resolve));
          return undefined;
        });
      }
      const queue = async (tenant: string, n: number) => {
        await setup.storage.db.transaction().execute(async (trx) => {
          await setup.queue.send('executions', { job: `${tenant}${n}` }, { db: trx, fairKey: tenant });
        });
        for (const q of instances) q.committed('executions');
      };
      for (let n = 1; n <= 6; n++) await queue('A', n);
      await until(() => started.length === 2, 'both workers took one of A’s jobs');
      await queue('B', 1);
      await queue('B', 2);
      await queue('C', 1);
      // Each worker freed takes the next job; the order they are taken in is the order of service.
      for (let done = 0; done < 9; done++) {
        gates[done]();
        if (done + 2 < 9) await until(() => started.length === done + 3, `job ${done + 3} began`);
      }
      await until(async () => (await setup.unfinished()) === 0, 'every job finished');
      // A1 and A2 start together, one on each worker, in either order; from there one worker frees at a time.
      assert.deepEqual([...started.slice(0, 2)].sort(), ['A1', 'A2']);
      assert.deepEqual(started.slice(2), ['A3', 'B1', 'C1', 'A4', 'B2', 'A5', 'A6']);
    });

    test('a queue that never drained up to the highest round goes on, oldest first, without overflowing', async () => {
      const setup = await make();
      setups.push(setup);
      // A's job waits, so no round starts again from 0; A's next round is the highest.
      await setup.queue.send('executions', { job: 'A1' }, { fairKey: 'A' });
      await setup.storage.db
        .updateTable('queue_rounds')
        .set({ next_round: 2 ** 31 - 2 })
        .where('fair_key', '=', 'A')
        .execute();
      for (const job of ['A2', 'A3']) await setup.queue.send('executions', { job }, { fairKey: 'A' });
      const started: string[] = [];
      await setup.queue.work<{ job: string }>('executions', 1, async (job) => {
        started.push(job.data.job);
        return undefined;
      });
      setup.queue.committed('executions');
      await until(() => started.length === 3, 'every job ran');
      assert.deepEqual(started, ['A1', 'A2', 'A3']);
    });

    test('a tenant with nothing queued joins the round being served, neither ahead of it nor behind the backlogs', async () => {
      const setup = await make();
      setups.push(setup);
      const started: string[] = [];
      const gates: Array<() => void> = [];
      // Nothing works the queue while these are sent: the rounds alone decide the order.
      for (let n = 1; n <= 50; n++) await setup.queue.send('executions', { job: `A${n}` }, { fairKey: 'A' });
      for (let n = 1; n <= 3; n++) await setup.queue.send('executions', { job: `B${n}` }, { fairKey: 'B' });
      await setup.queue.work<{ job: string }>('executions', 1, async (job) => {
        started.push(job.data.job);
        if (job.data.job === 'Z1') await new Promise<void>((resolve) => gates.push(resolve));
        return undefined;
      });
      setup.queue.committed('executions');
      await until(() => started.length === 53, 'every job ran');
      assert.deepEqual(started.slice(0, 7), ['A1', 'B1', 'A2', 'B2', 'A3', 'B3', 'A4']);
      // Later, with the worker held: B's earlier rounds are long past, so its next jobs join the round A and C join.
      started.length = 0;
      await setup.queue.send('executions', { job: 'Z1' }, { fairKey: 'Z' });
      await until(() => gates.length === 1, 'the worker is held');
      for (const tenant of ['A', 'B', 'C']) {
        for (let n = 1; n <= 3; n++) await setup.queue.send('executions', { job: `${tenant}${n}` }, { fairKey: tenant });
      }
      gates[0]();
      await until(() => started.length === 10, 'the later jobs ran');
      assert.deepEqual(started, ['Z1', 'A1', 'B1', 'C1', 'A2', 'B2', 'C2', 'A3', 'B3', 'C3']);
    });
  });
}
