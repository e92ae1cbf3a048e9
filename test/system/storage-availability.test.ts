import assert from 'node:assert/strict';
import { DatabaseSync } from 'node:sqlite';
import { describe, test } from 'node:test';
import pg from 'pg';
import { isStorageUnavailable, storageUnavailable } from '../../src/storage/availability.ts';
import { migrate, openStorage } from '../../src/storage/database.ts';
import { claimExecution, insertQueuedExecution, reclaimExecution } from '../../src/storage/executions.ts';
import { claimIdempotencyKey, releaseIdempotencyKey } from '../../src/storage/idempotency.ts';
import { insertTenant } from '../../src/storage/tenants.ts';
import { pgAdminUrl } from '../support/postgres.ts';
import { freePort } from '../support/processes.ts';

/**
 * Which errors say "storage cannot be used now" (503, held writes) and which say "this statement is wrong" (a bug,
 * 500): each error here is the real one, made by SQLite or PostgreSQL, never written by hand.
 */

/** The error `work` throws. */
async function thrown(work: () => unknown): Promise<unknown> {
  try {
    await work();
  } catch (error) {
    return error;
  }
  assert.fail('expected an error');
}

describe('SQLite errors', () => {
  test('a full database (max_page_count) and a busy lock are unavailable; a syntax error and a constraint are not', async () => {
    const db = new DatabaseSync(':memory:');
    db.exec('create table t (id integer primary key, v text not null)');
    const pages = (db.prepare('pragma page_count').get() as { page_count: number }).page_count;
    db.exec(`pragma max_page_count = ${pages}`);
    const full = await thrown(() => {
      for (let i = 0; i < 10_000; i++) db.prepare('insert into t (v) values (?)').run('x'.repeat(1000));
    });
    assert.match(String(full), /full/);
    assert.equal(isStorageUnavailable(full), true);
    assert.equal(isStorageUnavailable(await thrown(() => db.exec('selec 1'))), false);
    assert.equal(isStorageUnavailable(await thrown(() => db.exec('insert into t (v) values (null)'))), false);
    db.close();
  });
});

describe('PostgreSQL errors', () => {
  test('a refused connection, a terminated session (57P01) and a cut connection are unavailable', async () => {
    const closed = new pg.Client({ connectionString: `postgres://ix@127.0.0.1:${await freePort()}/postgres` });
    assert.equal(isStorageUnavailable(await thrown(() => closed.connect())), true);

    const victim = new pg.Client({ connectionString: pgAdminUrl });
    await victim.connect();
    victim.on('error', () => {});
    const pid = (await victim.query('select pg_backend_pid() as pid')).rows[0].pid;
    const killer = new pg.Client({ connectionString: pgAdminUrl });
    await killer.connect();
    // Its failure is caught as it happens (it may come before the test looks at it).
    const dying = victim.query('select pg_sleep(30)').then(
      () => assert.fail('the statement should have been ended'),
      (error: unknown) => error,
    );
    // A role may end its own sessions: 57P01, "terminating connection due to administrator command".
    await killer.query('select pg_terminate_backend($1)', [pid]);
    // Either the server's FATAL arrives first (57P01) or the socket's end does (pg: "Connection terminated
    // unexpectedly"): both are what a restart does to a statement in flight.
    const terminated = await dying;
    const { code, message } = terminated as { code?: string; message: string };
    assert.ok(code === '57P01' || /^Connection terminated/.test(message), `${code}: ${message}`);
    assert.equal(isStorageUnavailable(terminated), true);
    // The next statement on the dead connection: pg's own words, no code.
    const after = await thrown(() => victim.query('select 1'));
    assert.equal(isStorageUnavailable(after), true, String(after));

    assert.equal(isStorageUnavailable(await thrown(() => killer.query('selec 1'))), false);
    assert.equal(isStorageUnavailable(await thrown(() => killer.query('select 1/0'))), false);
    await killer.end();
    await victim.end().catch(() => {});
  });

  test('several addresses refused (AggregateError) are unavailable; an unknown database is not', async () => {
    const port = await freePort();
    const both = await thrown(() => new pg.Client({ connectionString: `postgres://ix@localhost:${port}/postgres` }).connect());
    assert.equal(isStorageUnavailable(both), true, String(both));
    const url = new URL(pgAdminUrl);
    url.pathname = '/ix_no_such_database';
    const missing = await thrown(() => new pg.Client({ connectionString: url.href }).connect());
    assert.equal((missing as { code?: string }).code, '3D000');
    assert.equal(isStorageUnavailable(missing), false);
  });
});

test('the answer: 503 service_unavailable, reason storage, with Retry-After', () => {
  const refused = storageUnavailable();
  assert.equal(refused.status, 503);
  assert.equal(refused.code, 'service_unavailable');
  assert.deepEqual(refused.details, { reason: 'storage' });
  assert.ok((refused.retryAfterSeconds ?? 0) >= 1);
});

describe('an async run asks for its claim again when the answer was lost', () => {
  test('the same token finds the claim its own; another token finds it taken; a reclaim repeated with its token holds', async () => {
    const storage = openStorage('sqlite::memory:');
    try {
      await migrate(storage);
      await insertTenant(storage.db, { id: 'acme', name: 'acme', type: 'production' });
      const queued = {
        id: 'exe_claims',
        integration_id: 'erp',
        connector: 'graphql-1.0.0',
        operation: 'send',
        mode: 'async' as const,
        operation_name: null,
        via: 'api' as const,
        status: 'queued' as const,
        http_status: null,
        error_code: null,
        error_message: null,
        error_details: null,
        message_count: 0,
        duration_ms: 0,
        attempts: 0,
        api_key_id: null,
        user_id: null,
        request_id: 'r',
        started_at: new Date().toISOString(),
        finished_at: null,
      };
      await insertQueuedExecution(storage.db, 'acme', queued);
      const first = await claimExecution(storage.db, 'acme', queued.id, 'token-a');
      assert.deepEqual([first.claimed, first.runs], [true, 1]);
      // Its answer lost, the run asks again: still its own, runs unchanged.
      const again = await claimExecution(storage.db, 'acme', queued.id, 'token-a');
      assert.deepEqual([again.claimed, again.runs, again.execution?.status], [true, 1, 'running']);
      // Another run (its job given out again) finds it taken: a run cut short, as before.
      const other = await claimExecution(storage.db, 'acme', queued.id, 'token-b');
      assert.deepEqual([other.claimed, other.runs], [false, 1]);
      assert.equal(await reclaimExecution(storage.db, 'acme', queued.id, 1, 'token-b'), true);
      assert.equal(await reclaimExecution(storage.db, 'acme', queued.id, 1, 'token-b'), true, 'asked again with its token');
      assert.equal(await reclaimExecution(storage.db, 'acme', queued.id, 1, 'token-c'), false, 'a third run does not');
    } finally {
      await storage.close();
    }
  });
});

describe('an Idempotency-Key claim is given back only by its own token', () => {
  test('a request unsure whether its claim was written gives back its own, never another’s', async () => {
    const storage = openStorage('sqlite::memory:');
    try {
      await migrate(storage);
      const claimed = await claimIdempotencyKey(storage.db, 'acme', 'k', 'f', 300_000, 'token-a');
      assert.equal(claimed.kind, 'claimed');
      // Another request's give-back (its own claim never written) leaves this claim taken.
      await releaseIdempotencyKey(storage.db, 'acme', 'k', 'token-b');
      assert.equal((await claimIdempotencyKey(storage.db, 'acme', 'k', 'f', 300_000, 'token-c')).kind, 'in_progress');
      await releaseIdempotencyKey(storage.db, 'acme', 'k', 'token-a');
      assert.equal((await claimIdempotencyKey(storage.db, 'acme', 'k', 'f', 300_000, 'token-d')).kind, 'claimed');
    } finally {
      await storage.close();
    }
  });
});
