import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { assertError } from '../support/assertions.ts';
import { type CountingGraphql, countingGraphql, receiveCall, sendCall } from '../support/counting-graphql.ts';
import { type GraphqlServer, startGraphqlServer } from '../support/graphql-server.ts';
import { type Auth, body, type Harness, harness, integrationCalls } from '../support/harness.ts';
import { until } from '../support/until.ts';

const terminal = new Set(['succeeded', 'failed', 'canceled']);

/** Async executes (docs/async.md) through one app on one storage: SQLite, or PostgreSQL + pg-boss (test:api:pg). */
describe('asynchronous executions', () => {
  let h: Harness;
  let auth: Auth;
  let graphql: GraphqlServer;
  let counting: CountingGraphql;
  const { put, execute } = integrationCalls(() => ({ h, auth }));

  const executeAsync = (id: string, payload: Record<string, unknown>, headers: Record<string, string> = {}) =>
    h.call(auth, {
      method: 'POST',
      url: `/api/v1/integrations/${id}/execute`,
      headers: { prefer: 'respond-async', ...headers },
      payload,
    });
  const read = async (executionId: string) => {
    const res = await h.call(auth, { method: 'GET', url: `/api/v1/executions/${executionId}` });
    assert.equal(res.statusCode, 200, res.body);
    return body(res).data;
  };
  const ended = (executionId: string) =>
    until(async () => {
      const e = await read(executionId);
      return terminal.has(e.status) ? e : undefined;
    }, `execution ${executionId} ended`);

  before(async () => {
    h = await harness();
    await h.tenant('acme');
    auth = await h.auth('acme', ['*']);
    graphql = await startGraphqlServer();
    counting = await countingGraphql();
    assert.equal((await put('crm', 'graphql-1.0.0', { base_url: graphql.url })).statusCode, 201);
    assert.equal((await put('erp', 'graphql-1.0.0', { base_url: counting.url })).statusCode, 201);
    assert.equal((await put('down', 'graphql-1.0.0', { base_url: 'http://127.0.0.1:9/graphql' })).statusCode, 201);
  });
  after(async () => {
    await h.close();
    await graphql.close();
    await counting.close();
  });

  test('202 Accepted with Preference-Applied and Location; the result is exactly the synchronous answer', async () => {
    const query = { operation: 'receive', query: '{ usersList { id name } }' };
    const accepted = await executeAsync('crm', query);
    assert.equal(accepted.statusCode, 202, accepted.body);
    assert.equal(accepted.headers['preference-applied'], 'respond-async');
    const { execution_id: id, status } = body(accepted).data;
    assert.deepEqual(Object.keys(body(accepted)).sort(), ['data', 'success']);
    assert.equal(status, 'queued');
    assert.equal(accepted.headers.location, `/api/v1/executions/${id}`);

    const done = await ended(id);
    const sync = await execute('crm', query);
    assert.equal(sync.statusCode, 200);
    assert.deepEqual(done.result, body(sync));
    assert.equal(done.mode, 'async');
    assert.equal(done.status, 'succeeded');
    assert.equal(done.http_status, 200);
    assert.equal(done.attempts, 1);
    assert.equal(done.result_expired, false);
    assert.equal(done.message_count, 25);
    assert.ok(done.finished_at >= done.started_at);
    assert.equal(done.request_id, accepted.headers['x-request-id']);
  });

  test('Prefer is read as RFC 7240 says: among other preferences, any case, with parameters', async () => {
    for (const prefer of ['return=minimal, respond-async', 'RESPOND-ASYNC', 'respond-async; wait=5', 'wait=10,respond-async']) {
      const res = await executeAsync('crm', { operation: 'test' }, { prefer });
      assert.equal(res.statusCode, 202, `${prefer}: ${res.body}`);
      await ended(body(res).data.execution_id);
    }
    // Another preference alone is a synchronous call.
    const sync = await execute('crm', { operation: 'test' });
    assert.equal(sync.statusCode, 200);
    const other = await h.call(auth, {
      method: 'POST',
      url: '/api/v1/integrations/crm/execute',
      headers: { prefer: 'return=minimal' },
      payload: { operation: 'test' },
    });
    assert.equal(other.statusCode, 200);
  });

  test('bad input is answered at once with the synchronous call’s 4xx, and nothing is queued', async () => {
    const before = counting.seen(-1);
    assertError(await executeAsync('nope', { operation: 'receive', query: '{ a }' }), 404, 'not_found');
    assertError(await executeAsync('crm', { operation: 'receive' }), 400, 'validation_failed');
    assertError(await executeAsync('crm', { operation: 'receive', query: '{ broken' }), 400, 'validation_failed');
    assertError(await executeAsync('crm', { operation: 'launch' }), 400, 'validation_failed');
    // Both parts of a sync are prepared before it is accepted: a bad inbound document refuses the whole call.
    const sync = {
      operation: 'sync',
      outbound: { mutation: 'mutation { createUser(name: "x") { id } }' },
      inbound: { query: '{ broken' },
    };
    const refused = assertError(await executeAsync('crm', sync), 400, 'validation_failed');
    assert.deepEqual(
      refused.details?.issues?.map((issue) => issue.path),
      ['inbound.query'],
    );
    const list = body(await h.call(auth, { method: 'GET', url: '/api/v1/executions?status=queued' })).data;
    assert.deepEqual(list, []);
    assert.equal(counting.seen(-1), before);
  });

  test('an upstream failure is the result: failed, the error body, the synchronous status', async () => {
    const res = await executeAsync('down', { operation: 'send', mutation: 'mutation { createUser(name: "x") { id } }' });
    const done = await ended(body(res).data.execution_id);
    assert.equal(done.status, 'failed');
    assert.equal(done.http_status, 502);
    assert.equal(done.error_code, 'upstream_unreachable');
    assert.equal(done.result.success, false);
    assert.equal(done.result.error.code, 'upstream_unreachable');
    assert.equal(done.result.request_id, res.headers['x-request-id']);
  });

  test('an Idempotency-Key replays the same 202: one execution, one upstream call', async () => {
    const headers = { 'idempotency-key': 'async-once' };
    const first = await executeAsync('erp', sendCall(7), headers);
    assert.equal(first.statusCode, 202);
    const second = await executeAsync('erp', sendCall(7), headers);
    assert.equal(second.statusCode, 202);
    assert.equal(second.headers['idempotent-replayed'], 'true');
    assert.equal(second.headers.location, first.headers.location);
    assert.equal(second.headers['preference-applied'], 'respond-async');
    assert.deepEqual(body(second).data, body(first).data);
    await ended(body(first).data.execution_id);
    assert.equal(counting.seen(7), 1);
  });

  test('an expired result reads null with result_expired; the record stays', async () => {
    const res = await executeAsync('crm', { operation: 'test' });
    const id = body(res).data.execution_id;
    await ended(id);
    await h.storage.db
      .updateTable('executions')
      .set({ result_expires_at: new Date(Date.now() - 1000).toISOString() })
      .where('id', '=', id)
      .execute();
    const expired = await read(id);
    assert.equal(expired.result, null);
    assert.equal(expired.result_expired, true);
    assert.equal(expired.status, 'succeeded');
  });

  test('a synchronous execution has no result fields, mode sync and one attempt', async () => {
    await execute('crm', { operation: 'test' });
    const [newest] = body(await h.call(auth, { method: 'GET', url: '/api/v1/executions?limit=1' })).data;
    const one = await read(newest.id);
    assert.equal(one.mode, 'sync');
    assert.equal(one.attempts, 1);
    assert.ok(!('result' in one) && !('result_expired' in one));
  });

  test('timeout_seconds may be up to 3600 (an async call’s), not more', async () => {
    assert.equal((await put('slow', 'graphql-1.0.0', { base_url: graphql.url, timeout_seconds: 3600 })).statusCode, 201);
    assertError(await put('slow', 'graphql-1.0.0', { base_url: graphql.url, timeout_seconds: 3601 }), 400, 'validation_failed');
  });

  test('reads run concurrently up to the worker’s concurrency; every one ends once', async () => {
    const ids = await Promise.all(
      Array.from({ length: 30 }, async (_, i) => body(await executeAsync('erp', receiveCall(1000 + i))).data.execution_id),
    );
    for (const id of ids) assert.equal((await ended(id)).status, 'succeeded');
    for (let i = 0; i < 30; i++) assert.equal(counting.seen(1000 + i), 1);
  });
});

/** An instance with IX_WORKER=false serves HTTP only: what it accepts stays queued until a worker takes it. */
describe('cancel, and an instance that only serves HTTP', () => {
  let h: Harness;
  let auth: Auth;
  let reader: Auth;
  let counting: CountingGraphql;
  const { put } = integrationCalls(() => ({ h, auth }));
  const cancel = (id: string, as = auth) => h.call(as, { method: 'POST', url: `/api/v1/executions/${id}/cancel` });

  before(async () => {
    h = await harness({ IX_WORKER: 'false' });
    await h.tenant('acme');
    await h.tenant('globex');
    auth = await h.auth('acme', ['*']);
    reader = await h.auth('acme', ['executions.read']);
    counting = await countingGraphql();
    assert.equal((await put('erp', 'graphql-1.0.0', { base_url: counting.url })).statusCode, 201);
  });
  after(async () => {
    await h.close();
    await counting.close();
  });

  const accept = async (n: number) => {
    const res = await h.call(auth, {
      method: 'POST',
      url: '/api/v1/integrations/erp/execute',
      headers: { prefer: 'respond-async' },
      payload: sendCall(n),
    });
    assert.equal(res.statusCode, 202, res.body);
    return body(res).data.execution_id as string;
  };

  test('a queued execution is canceled: 200 with the record; it never runs; a second cancel is 409', async () => {
    const id = await accept(1);
    const queued = body(await h.call(auth, { method: 'GET', url: `/api/v1/executions/${id}` })).data;
    assert.equal(queued.status, 'queued');
    assert.equal(queued.attempts, 0);
    assert.equal(queued.http_status, null);
    assert.equal(queued.result, null);

    const res = await cancel(id);
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(body(res).data.status, 'canceled');
    assert.ok(body(res).data.finished_at);
    const again = await cancel(id);
    assertError(again, 409, 'conflict');
    assert.equal(body(again).error.details.status, 'canceled');
    assert.equal(counting.seen(1), 0);
  });

  test('a running execution cannot be canceled (409); unknown and another tenant’s are 404; the scope is integrations.execute', async () => {
    const id = await accept(2);
    await h.storage.db.updateTable('executions').set({ status: 'running' }).where('id', '=', id).execute();
    const running = await cancel(id);
    assertError(running, 409, 'conflict');
    assert.equal(body(running).error.details.status, 'running');
    assertError(await cancel('exe_nope'), 404, 'not_found');
    const globex = await h.auth('globex', ['*']);
    assertError(await cancel(id, globex), 404, 'not_found');
    assertError(await cancel(id, reader), 403, 'insufficient_scope');
  });
});
