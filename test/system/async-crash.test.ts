import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { cliJson } from '../support/cli.ts';
import { countingGraphql, receiveCall, sendCall } from '../support/counting-graphql.ts';
import { createTestDatabase, testMasterKey } from '../support/postgres.ts';
import { type Env, type Json, killAll, type ServerProcess, startServer, testDatabase } from '../support/processes.ts';
import { until } from '../support/until.ts';
import { startReceiver } from '../support/webhook-receiver.ts';

after(killAll);

/** Ceilings for what includes a heartbeat going stale (10 s) and a supervisor pass on a loaded machine. */
const recoveryCeilingMs = 120_000;
const terminal = new Set(['succeeded', 'failed', 'canceled']);

interface Client {
  key: string;
  tenant: string;
}

async function request(server: ServerProcess, client: Client, method: string, path: string, body?: unknown, headers = {}) {
  const res = await fetch(`${server.url}${path}`, {
    method,
    headers: {
      'x-api-key': client.key,
      'x-tenant-id': client.tenant,
      ...(body !== undefined && { 'content-type': 'application/json' }),
      ...headers,
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  }).catch((error: unknown) => {
    // A server that cannot be reached has most likely died: what it wrote last says why.
    const { exitCode, signalCode } = server.child;
    throw new Error(
      `${method} ${path}: ${(error as Error).message} (${(error as { cause?: Error }).cause?.message}); the server's exit: ${exitCode ?? signalCode ?? 'still running'}; its stderr:\n${server.stderr().slice(-4000)}`,
      { cause: error },
    );
  });
  return { status: res.status, body: (await res.json()) as Json, headers: res.headers };
}

/** Accepts `body` as an async call; returns the execution id. */
async function accept(server: ServerProcess, client: Client, body: unknown): Promise<string> {
  const res = await request(server, client, 'POST', '/api/v1/integrations/erp/execute', body, { prefer: 'respond-async' });
  assert.equal(res.status, 202, JSON.stringify(res.body));
  return res.body.data.execution_id;
}

async function execution(server: ServerProcess, client: Client, id: string): Promise<Json> {
  const res = await request(server, client, 'GET', `/api/v1/executions/${id}`);
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.body.data;
}

/**
 * Waits until every execution has ended (one list request per look: the key's rate limit is the product's, not the
 * test's); returns them by id, read one by one with their results.
 */
async function allEnded(server: ServerProcess, client: Client, ids: string[]): Promise<Map<string, Json>> {
  const ended = new Map<string, Json>();
  await until(
    async () => {
      const page = await request(server, client, 'GET', '/api/v1/executions?limit=100');
      assert.equal(page.status, 200, JSON.stringify(page.body));
      const statuses = new Map<string, string>(page.body.data.map((e: Json) => [e.id, e.status]));
      for (const id of ids) if (!ended.has(id) && terminal.has(statuses.get(id) ?? '')) ended.set(id, true);
      return ended.size === ids.length;
    },
    () => `every execution ended (${ended.size} of ${ids.length})`,
    { ceilingMs: recoveryCeilingMs, everyMs: 500 },
  );
  for (const id of ids) ended.set(id, await execution(server, client, id));
  return ended;
}

async function setUp(env: Env, upstreamUrl: string): Promise<Client> {
  await cliJson(['tenants', 'create', 'acme'], env).catch(() => undefined);
  const created = await cliJson(['keys', 'create', '--tenant', 'acme', '--scopes', '*', '--name', 'crash'], env);
  const client = { key: created.key, tenant: 'acme' };
  return { ...client, upstreamUrl } as Client & { upstreamUrl: string };
}

async function putIntegration(server: ServerProcess, client: Client, url: string) {
  const res = await request(server, client, 'PUT', '/api/v1/integrations/erp', {
    connector: 'graphql-1.0.0',
    config: { base_url: url },
  });
  assert.ok(res.status < 300, JSON.stringify(res.body));
}

const workerEnv = { IX_WORKER_CONCURRENCY: '2', IX_WORKER_HEARTBEAT_SECONDS: '10', LOG_LEVEL: 'warn' };

/**
 * SIGKILL while executions are running and queued, then a restart on the same storage: each ends exactly once, in
 * the right state. A send that was running ends upstream_outcome_unknown and its upstream saw it once; a receive that
 * was running runs again; the queued ones run once.
 */
async function killWhileRunning(env: Env) {
  const upstream = await countingGraphql();
  try {
    const first = await startServer({ ...env, ...workerEnv });
    const client = await setUp(env, upstream.url);
    await putIntegration(first, client, upstream.url);
    const heldSend = await accept(first, client, sendCall(1, true));
    const heldReceive = await accept(first, client, receiveCall(2, true));
    await until(() => upstream.holding === 2, 'both held calls reached the upstream');
    // The worker's two slots are taken: these wait in the queue.
    const queuedSend = await accept(first, client, sendCall(3));
    const queuedReceive = await accept(first, client, receiveCall(4));
    assert.equal((await execution(first, client, queuedSend)).status, 'queued');
    assert.equal((await execution(first, client, heldSend)).status, 'running');

    first.child.kill('SIGKILL');
    await until(() => first.child.exitCode !== null || first.child.signalCode !== null, 'the first server died');
    upstream.release();

    const second = await startServer({ ...env, ...workerEnv });
    try {
      const ended = await allEnded(second, client, [heldSend, heldReceive, queuedSend, queuedReceive]);
      const send1 = ended.get(heldSend);
      assert.equal(send1.status, 'failed');
      assert.equal(send1.error_code, 'upstream_outcome_unknown');
      assert.equal(send1.result.error.code, 'upstream_outcome_unknown');
      assert.equal(upstream.seen(1), 1, 'the send that was running was not sent again');

      const receive2 = ended.get(heldReceive);
      assert.equal(receive2.status, 'succeeded', JSON.stringify(receive2));
      // `attempts` are the tries of the run that ended it (docs/resilience.md#attempts); the upstream saw both runs.
      assert.equal(receive2.attempts, 1);
      assert.deepEqual(receive2.result.data.data, [{ n: 2 }]);
      assert.equal(upstream.seen(2), 2, 'the read ran again after the crash');

      for (const [id, n] of [
        [queuedSend, 3],
        [queuedReceive, 4],
      ] as const) {
        const e = ended.get(id);
        assert.equal(e.status, 'succeeded', JSON.stringify(e));
        assert.equal(e.attempts, 1);
        assert.equal(upstream.seen(n), 1, `call ${n} reached the upstream once`);
      }
      // Read again later: an ended execution stays as it ended.
      const ids = [heldSend, heldReceive, queuedSend, queuedReceive];
      const again = await allEnded(second, client, ids);
      const states = (of: Map<string, Json>) => ids.map((id) => [of.get(id).status, of.get(id).attempts]);
      assert.deepEqual(states(again), states(ended));
    } finally {
      await second.stop();
    }
  } finally {
    await upstream.close();
  }
}

describe('async executions survive a crash', () => {
  test('SQLite: killed while running and queued, each execution ends exactly once after the restart', async (t) => {
    await killWhileRunning(await testDatabase(t));
  });

  test('PostgreSQL (pg-boss): killed while running and queued, each execution ends exactly once after the restart', async (t) => {
    const database = await createTestDatabase();
    t.after(() => database.drop());
    await killWhileRunning({ DATABASE_URL: database.url, IX_MASTER_KEY: testMasterKey() });
  });

  test('PostgreSQL with two instances: every job runs once, counted at the upstream, and a dead instance’s jobs move', async (t) => {
    const database = await createTestDatabase();
    t.after(() => database.drop());
    const env = { DATABASE_URL: database.url, IX_MASTER_KEY: testMasterKey(), ...workerEnv, IX_WORKER_CONCURRENCY: '4' };
    const upstream = await countingGraphql();
    t.after(() => upstream.close());
    const [one, two] = await Promise.all([startServer(env), startServer(env)]);
    t.after(async () => {
      await one.stop().catch(() => undefined);
      await two.stop().catch(() => undefined);
    });
    const client = await setUp(env, upstream.url);
    await putIntegration(one, client, upstream.url);

    // 60 sends, accepted half by each instance, at once.
    const calls = Array.from({ length: 60 }, (_, i) => i + 100);
    const ids = await Promise.all(calls.map((n, i) => accept(i % 2 === 0 ? one : two, client, sendCall(n))));
    const ended = await allEnded(one, client, ids);
    for (const e of ended.values()) assert.equal(e.status, 'succeeded', JSON.stringify(e));
    for (const n of calls) assert.equal(upstream.seen(n), 1, `send ${n} reached the upstream once`);

    // An instance dies holding a receive; another runs it again once its heartbeat has stopped.
    const held = await accept(two, client, receiveCall(500, true));
    await until(() => upstream.holding === 1, 'the held receive reached the upstream');
    assert.equal((await execution(one, client, held)).status, 'running');
    // Which instance took it is the queue's choice; both die, and a third runs it again.
    two.child.kill('SIGKILL');
    one.child.kill('SIGKILL');
    upstream.release();
    const third = await startServer(env);
    t.after(() => third.stop().catch(() => undefined));
    const [receive] = (await allEnded(third, client, [held])).values();
    assert.equal(receive.status, 'succeeded');
    assert.equal(receive.attempts, 1, 'the tries of the run that ended it');
    assert.equal(upstream.seen(500), 2, 'the read ran again after both instances died');
  });

  test('SQLite: a webhook delivery under way at the kill is delivered after the restart, with the same webhook-id', async (t) => {
    const env = { ...(await testDatabase(t)), ...workerEnv };
    const upstream = await countingGraphql();
    t.after(() => upstream.close());
    const receiver = await startReceiver();
    t.after(() => receiver.close());
    // The first delivery hangs (the process is killed while it waits); the next is answered 204.
    receiver.answers.push('hang');
    receiver.otherwise = 204;

    const first = await startServer(env);
    const client = await setUp(env, upstream.url);
    await putIntegration(first, client, upstream.url);
    const created = await request(first, client, 'POST', '/api/v1/webhooks', { url: `${receiver.url}/hooks`, events: ['*'] });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    receiver.secrets.push(created.body.data.secret);
    const id = await accept(first, client, receiveCall(9));
    await until(() => receiver.received.length === 1, 'the first delivery reached the receiver');
    first.child.kill('SIGKILL');
    await until(() => first.child.exitCode !== null || first.child.signalCode !== null, 'the first server died');

    const second = await startServer(env);
    t.after(() => second.stop().catch(() => undefined));
    await until(() => receiver.received.length === 2, 'the delivery was made again after the restart', {
      ceilingMs: recoveryCeilingMs,
      everyMs: 200,
    });
    const [hung, delivered] = receiver.received;
    assert.equal(delivered.headers['webhook-id'], hung.headers['webhook-id'], 'the same event: the same webhook-id');
    assert.deepEqual(delivered.verifiedWith, receiver.secrets, 'verified by the standardwebhooks package');
    assert.equal(delivered.payload.type, 'execution.succeeded');
    assert.equal(delivered.payload.data.id, id);
    assert.equal(upstream.seen(9), 1, 'the execution itself ran once');
  });
});
