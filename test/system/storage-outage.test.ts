import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, before, describe, type TestContext, test } from 'node:test';
import pg from 'pg';
import { cliJson } from '../support/cli.ts';
import { type CountingGraphql, countingGraphql, sendCall } from '../support/counting-graphql.ts';
import { testMasterKey } from '../support/postgres.ts';
import { type PrivatePostgres, startPrivatePostgres } from '../support/private-postgres.ts';
import { type PrivateRedis, startPrivateRedis } from '../support/private-redis.ts';
import { type Env, type Json, killAll, type ServerProcess, startServer } from '../support/processes.ts';
import { type FaultClient, type FaultCounts, keyedSendLoad, sentSoFar, sentTwice } from '../support/storage-fault-harness.ts';
import { until } from '../support/until.ts';
import { startReceiver, type WebhookReceiver } from '../support/webhook-receiver.ts';

/**
 * Storage that fails under two real `interchange serve` processes (issue 29): their PostgreSQL restarted and stopped
 * under load, stopped while a keyed send is at the upstream, their Redis stopped. PostgreSQL and Redis are this file's
 * own (a temp cluster, a redis-server on a free port), so that stopping them touches no other test. Counted: processes
 * that exited, calls the upstream received twice, answers 500, successful calls without an execution record.
 */

after(killAll);

/** Ceilings for what includes storage coming back and processes catching up on a loaded machine. */
const ceilingMs = 120_000;

/** How long PostgreSQL stays stopped under load (IX_TEST_OUTAGE_MS: the fault harness's 30 s outage, run by hand). */
const outageMs = Number(process.env.IX_TEST_OUTAGE_MS ?? 5000);

let postgres: PrivatePostgres;
let redis: PrivateRedis;
let upstream: CountingGraphql;
let databaseUrl: string;
let env: Env;
let client: FaultClient;
let servers: ServerProcess[] = [];
/** The tenant's webhook endpoint, subscribed to every event: what it received is counted too. */
let receiver: WebhookReceiver;
const spoolDir = mkdtempSync(join(tmpdir(), 'ix-spool-'));

async function query<T = Json>(text: string, values: unknown[] = []): Promise<T[]> {
  const connection = new pg.Client({ connectionString: databaseUrl });
  await connection.connect();
  try {
    return (await connection.query(text, values)).rows as T[];
  } finally {
    await connection.end();
  }
}

async function call(server: ServerProcess, method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(`${server.url}${path}`, {
    method,
    headers: {
      'x-api-key': client.key,
      'x-tenant-id': client.tenant,
      ...(body !== undefined && { 'content-type': 'application/json' }),
      ...headers,
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, headers: res.headers, body: (await res.json()) as Json };
}

/** An integration of its own on an upstream of its own (a held call stays held until that upstream's release). */
async function freshIntegration(id: string): Promise<CountingGraphql> {
  const own = await countingGraphql();
  const put = await call(servers[0], 'PUT', `/api/v1/integrations/${id}`, {
    connector: 'graphql-1.0.0',
    config: { base_url: own.url, validate_schema: false },
  });
  assert.ok(put.status < 300, JSON.stringify(put.body));
  return own;
}

function alive(server: ServerProcess): boolean {
  return server.child.exitCode === null && server.child.signalCode === null;
}

function assertAllAlive(): void {
  for (const [i, server] of servers.entries()) {
    assert.ok(alive(server), `instance ${i} exited (${server.child.exitCode ?? server.child.signalCode}):\n${server.stderr()}`);
  }
}

/** Waits until every call answered 200 by a run has its execution record (written behind, or once storage is back). */
async function assertRecorded(counts: FaultCounts): Promise<void> {
  const wanted = new Set(counts.succeeded.map((s) => s.requestId));
  let missing: string[] = [];
  await until(
    async () => {
      const rows = await query<{ request_id: string }>('select request_id from executions where request_id = any($1)', [
        [...wanted],
      ]);
      const found = new Set(rows.map((r) => r.request_id));
      missing = [...wanted].filter((id) => !found.has(id));
      return missing.length === 0;
    },
    () => `every successful call has its execution record (${missing.length} of ${wanted.size} missing: ${missing.slice(0, 5)})`,
    { ceilingMs, everyMs: 250 },
  );
}

/** Waits until every accepted async call has ended, and asserts each ended with the upstream's answer. */
async function assertAsyncEnded(counts: FaultCounts): Promise<void> {
  const ids = counts.accepted.map((a) => a.executionId);
  let rows: Array<{ id: string; status: string; error_code: string | null }> = [];
  await until(
    async () => {
      rows = await query('select id, status, error_code from executions where id = any($1)', [ids]);
      return rows.length === ids.length && rows.every((row) => row.status === 'succeeded' || row.status === 'failed');
    },
    () =>
      `every async call ended (${rows.filter((r) => r.status === 'succeeded' || r.status === 'failed').length} of ${ids.length})`,
    { ceilingMs, everyMs: 500 },
  );
  const failed = rows
    .filter((row) => row.status !== 'succeeded')
    .map((row) => {
      const n = counts.accepted.find((a) => a.executionId === row.id)?.n ?? -1;
      return { ...row, n, received: upstream.seen(n) };
    });
  assert.deepEqual(failed, [], 'async sends whose upstream answered 200 ended otherwise');
}

/** Waits until the webhook endpoint has received the event of every call answered 200 and every async call accepted. */
async function assertEventsDelivered(counts: FaultCounts): Promise<void> {
  const wanted = new Set([...counts.succeeded.map((s) => s.requestId), ...counts.accepted.map((a) => a.executionId)]);
  let missing: string[] = [];
  await until(
    () => {
      const seen = new Set(receiver.received.flatMap((r) => [r.payload?.data?.request_id, r.payload?.data?.id]));
      missing = [...wanted].filter((id) => !seen.has(id));
      return missing.length === 0;
    },
    () => `every call's event was delivered (${missing.length} of ${wanted.size} missing: ${missing.slice(0, 5)})`,
    { ceilingMs, everyMs: 250 },
  );
}

/**
 * Keyed sends `first…first+calls-1` through both instances on integration erp (every `asyncEvery`-th async), bounded in
 * count and in `stopAfterMs`, whichever ends first; resolves once the load is going (a hundred calls have gone out).
 */
async function loadGoing(
  first: number,
  calls: number,
  options: { stopAfterMs: number; callers?: number; asyncEvery?: number },
): Promise<{ counts: Promise<FaultCounts> }> {
  const { stopAfterMs, callers = 20, asyncEvery = 5 } = options;
  const load = keyedSendLoad({ servers, client, integration: 'erp', first, calls, callers, stopAfterMs, asyncEvery });
  await until(() => upstream.seen(first + 100) > 0, 'the load is going');
  // Wrapped: a promise returned bare from an async function would be waited for whole.
  return { counts: load };
}

/**
 * What a load through a storage fault must show, its counts written to the test's output: both instances alive, no
 * call received twice upstream, no 500, no call left without an ending answer, every success recorded, every async
 * send ended with the upstream's answer, every event delivered.
 */
async function assertLoadHeld(t: TestContext, counts: FaultCounts, first: number, calls: number): Promise<void> {
  t.diagnostic(`statuses: ${JSON.stringify(counts.statuses)}; succeeded ${counts.succeeded.length}`);
  for (const server of servers) {
    const lines = server.stdout().split('\n');
    const count = (text: string) => lines.filter((line) => line.includes(text)).length;
    t.diagnostic(`unavailable ${count('storage is unavailable')}, back ${count('storage answers again')}, lines ${lines.length}`);
  }
  assertAllAlive();
  assert.deepEqual(sentTwice(upstream, first, calls), [], 'calls the upstream received twice');
  assertNoFailureOfOurs(counts);
  await assertRecorded(counts);
  await assertAsyncEnded(counts);
  await assertEventsDelivered(counts);
  assert.deepEqual(sentTwice(upstream, first, calls), [], 'calls the upstream received twice, async included');
}

function assertNoFailureOfOurs(counts: FaultCounts): void {
  assert.equal(counts.statuses['500'] ?? 0, 0, `answers 500: ${JSON.stringify(counts.statuses)}`);
  assert.deepEqual(counts.unfinished, [], `calls that never got an ending answer: ${JSON.stringify(counts.statuses)}`);
}

describe('storage that fails under two instances', () => {
  before(async () => {
    [postgres, redis, upstream] = await Promise.all([
      startPrivatePostgres({ withStandby: true }),
      startPrivateRedis(),
      countingGraphql(),
    ]);
    const admin = new pg.Client({ connectionString: postgres.url() });
    await admin.connect();
    await admin.query('create database ix');
    await admin.end();
    databaseUrl = postgres.url('ix');
    env = {
      DATABASE_URL: databaseUrl,
      REDIS_URL: redis.url,
      IX_REDIS_PREFIX: `ix-${randomBytes(4).toString('hex')}`,
      IX_MASTER_KEY: testMasterKey(),
      IX_WORKER_HEARTBEAT_SECONDS: '10',
      // Idempotency answers storage could not take: every instance of the deployment spools to this folder.
      IX_SPOOL_DIR: spoolDir,
    };
    await cliJson(['tenants', 'create', 'acme'], env);
    const key = await cliJson(['keys', 'create', '--tenant', 'acme', '--scopes', '*', '--rate-limit', '1000000'], env);
    client = { key: key.key, tenant: 'acme' };
    receiver = await startReceiver();
    await cliJson(['webhooks', 'create', '--tenant', 'acme', '--url', `${receiver.url}/hooks`, '--events', '*'], env);
    servers = await Promise.all([startServer(env), startServer(env)]);
    const put = await call(servers[0], 'PUT', '/api/v1/integrations/erp', {
      connector: 'graphql-1.0.0',
      config: { base_url: upstream.url, validate_schema: false },
    });
    assert.ok(put.status < 300, JSON.stringify(put.body));
  });

  after(async () => {
    await Promise.all(servers.map((server) => server.stop().catch(() => undefined)));
    await upstream?.close();
    await receiver?.close();
    redis?.stop();
    postgres?.remove();
    rmSync(spoolDir, { recursive: true, force: true });
  });

  test('PostgreSQL restarted, then stopped for a while, under load: no exit, nothing sent twice, no 500, every success recorded', async (t) => {
    const first = 1_000;
    const calls = 4_000;
    // Bounded in count and in time: whichever ends first. Every 5th call is async.
    const { counts: load } = await loadGoing(first, calls, { stopAfterMs: 20_000 });
    let loadEnded = false;
    void load.then(() => {
      loadEnded = true;
    });
    postgres.restart();
    // Calls go through again after the restart (counted, not timed), then the server is stopped for a while.
    const restarted = sentSoFar(upstream, first, calls);
    await until(() => loadEnded || sentSoFar(upstream, first, calls) >= restarted + 50, 'the load goes on after the restart', {
      ceilingMs,
    });
    postgres.stop();
    await new Promise((resolve) => setTimeout(resolve, outageMs));
    postgres.start();
    await assertLoadHeld(t, await load, first, calls);
  });

  test('a failover to a promoted replica at the same address, under load: no exit, nothing sent twice, no 500', async (t) => {
    const first = 20_000;
    const calls = 3_000;
    const { counts: load } = await loadGoing(first, calls, { stopAfterMs: 10_000 });
    postgres.failover();
    await assertLoadHeld(t, await load, first, calls);
  });

  test('PostgreSQL stopped 4 s while a keyed send is at the upstream: answered once, sent once, replayed after', async (t) => {
    const n = 5_000;
    const [a, b] = servers;
    const upstream = await freshIntegration('held');
    after(() => upstream.close());
    const path = '/api/v1/integrations/held/execute';
    const sending = call(a, 'POST', path, sendCall(n, true), { 'idempotency-key': `k-${n}` });
    await until(() => upstream.holding === 1, 'the send is at the upstream');
    postgres.stop();
    upstream.release();
    const answer = await sending;
    // The upstream applied it: that is the answer, though its key cannot be completed yet.
    assert.equal(answer.status, 200, JSON.stringify(answer.body));
    await new Promise((resolve) => setTimeout(resolve, 4000));
    // While storage is away, the same key is refused before anything is sent.
    const during = await call(b, 'POST', path, sendCall(n, true), { 'idempotency-key': `k-${n}` });
    assert.equal(during.status, 503, JSON.stringify(during.body));
    assert.equal(during.body.error.code, 'service_unavailable');
    assert.equal(during.body.error.details?.reason, 'storage');
    assert.ok(Number(during.headers.get('retry-after')) >= 1, 'Retry-After');
    for (const server of servers) assert.equal((await fetch(`${server.url}/readyz`)).status, 503, 'not ready');
    postgres.start();
    // Measured, not bounded (a loaded machine): how long after the server is back each instance is ready again.
    const back = performance.now();
    const readyAfter = await Promise.all(
      servers.map(async (server) => {
        await until(async () => (await fetch(`${server.url}/readyz`)).status === 200, 'ready again', { ceilingMs, everyMs: 10 });
        return Math.round(performance.now() - back);
      }),
    );
    t.diagnostic(`ready again ${readyAfter.join(' and ')} ms after PostgreSQL answered`);
    // Retried through both instances: 409 (or 503) until the first answer is stored, then its replay; never a second send.
    for (const server of [b, a]) {
      const replay = await until(
        async () => {
          const res = await call(server, 'POST', path, sendCall(n, true), {
            'idempotency-key': `k-${n}`,
          });
          assert.ok([200, 409, 503].includes(res.status), JSON.stringify(res.body));
          return res.status === 200 ? res : undefined;
        },
        'the first answer is replayed',
        { ceilingMs, everyMs: 250 },
      );
      assert.ok(replay);
      assert.equal(replay.headers.get('idempotent-replayed'), 'true');
      assert.deepEqual(replay.body.data, answer.body.data);
    }
    assert.equal(upstream.seen(n), 1, 'the upstream received the send once');
    assertAllAlive();
  });

  test('PostgreSQL stopped 4 s while an async send is at the upstream: it ends with the upstream answer, not unknown', async () => {
    const n = 5_500;
    const upstream = await freshIntegration('held-async');
    after(() => upstream.close());
    const accepted = await call(servers[0], 'POST', '/api/v1/integrations/held-async/execute', sendCall(n, true), {
      prefer: 'respond-async',
    });
    assert.equal(accepted.status, 202, JSON.stringify(accepted.body));
    const id = accepted.body.data.execution_id;
    await until(() => upstream.holding === 1, 'the send is at the upstream', { ceilingMs });
    postgres.stop();
    upstream.release();
    await new Promise((resolve) => setTimeout(resolve, 4000));
    postgres.start();
    const ended = await until(
      async () => {
        const res = await call(servers[1], 'GET', `/api/v1/executions/${id}`);
        return res.status === 200 && ['succeeded', 'failed'].includes(res.body.data.status) ? res.body.data : undefined;
      },
      'the execution ended',
      { ceilingMs, everyMs: 250 },
    );
    assert.equal(ended.status, 'succeeded', JSON.stringify(ended));
    assert.deepEqual(ended.result.data.data, { done: n });
    assert.equal(upstream.seen(n), 1, 'the upstream received the send once');
    assertAllAlive();
  });

  test('an instance killed while it holds a keyed answer storage could not take: the next start writes it from its spool', async () => {
    const n = 5_800;
    const upstream = await freshIntegration('spooled');
    after(() => upstream.close());
    const doomed = await startServer(env);
    const path = '/api/v1/integrations/spooled/execute';
    const headers = { 'idempotency-key': `k-${n}` };
    const sending = call(doomed, 'POST', path, sendCall(n, true), headers);
    await until(() => upstream.holding === 1, 'the send is at the upstream', { ceilingMs });
    postgres.stop();
    upstream.release();
    const answer = await sending;
    assert.equal(answer.status, 200, JSON.stringify(answer.body));
    assert.equal(readdirSync(spoolDir).length, 1, 'the answer is spooled');
    doomed.child.kill('SIGKILL');
    await until(() => !alive(doomed), 'the instance died');
    postgres.start();
    // The key stays claimed: the others answer 409 (never a second send) until a start writes the spooled answer.
    const meanwhile = await until(
      async () => {
        const res = await call(servers[0], 'POST', path, sendCall(n, true), headers);
        return res.status === 503 ? undefined : res;
      },
      'storage answers',
      { ceilingMs, everyMs: 250 },
    );
    assert.equal(meanwhile?.status, 409, JSON.stringify(meanwhile?.body));
    const next = await startServer(env);
    try {
      assert.deepEqual(readdirSync(spoolDir), [], 'the spool was written and removed');
      const replay = await call(servers[1], 'POST', path, sendCall(n, true), headers);
      assert.equal(replay.status, 200, JSON.stringify(replay.body));
      assert.equal(replay.headers.get('idempotent-replayed'), 'true');
      assert.deepEqual(replay.body.data, answer.body.data);
      assert.equal(upstream.seen(n), 1, 'the upstream received the send once');
    } finally {
      await next.stop();
    }
  });

  test('an instance whose clock is 310 s ahead (more than the execute deadline) does not take a live claim for dead', async () => {
    const ahead = await startServer({
      ...env,
      NODE_OPTIONS: `--import ${resolve(import.meta.dirname, '../support/clock-ahead.ts')}`,
      IX_TEST_CLOCK_OFFSET_MS: String(310_000),
    });
    const upstream = await freshIntegration('clock');
    const path = '/api/v1/integrations/clock/execute';
    try {
      const n = 6_000;
      const headers = { 'idempotency-key': `k-${n}` };
      const first = call(servers[0], 'POST', path, sendCall(n, true), headers);
      await until(() => upstream.holding === 1, 'the send is at the upstream');
      // The first call was claimed by the database's clock, and is judged by it.
      const again = await call(ahead, 'POST', path, sendCall(n, true), headers);
      assert.equal(again.status, 409, JSON.stringify(again.body));
      assert.equal(again.body.error.code, 'conflict');
      upstream.release();
      const answer = await first;
      assert.equal(answer.status, 200, JSON.stringify(answer.body));
      const replay = await call(ahead, 'POST', path, sendCall(n, true), headers);
      assert.equal(replay.status, 200, JSON.stringify(replay.body));
      assert.equal(replay.headers.get('idempotent-replayed'), 'true');
      assert.equal(upstream.seen(n), 1, 'the upstream received the send once');
    } finally {
      await ahead.stop();
      await upstream.close();
    }
  });

  test('Redis stopped under load and started again: no exit, no 500, nothing sent twice', async (t) => {
    const first = 10_000;
    const calls = 2_000;
    const { counts: load } = await loadGoing(first, calls, { stopAfterMs: 8_000, callers: 10, asyncEvery: 0 });
    redis.stop();
    await new Promise((resolve) => setTimeout(resolve, 3000));
    await redis.start();
    const counts = await load;
    t.diagnostic(`statuses: ${JSON.stringify(counts.statuses)}`);
    assertAllAlive();
    assertNoFailureOfOurs(counts);
    assert.deepEqual(sentTwice(upstream, first, calls), [], 'calls the upstream received twice');
    await assertRecorded(counts);
  });
});
