import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type CountingGraphql, countingGraphql, receiveCall } from '../support/counting-graphql.ts';
import { type Auth, body, type Harness, harness, integrationCalls } from '../support/harness.ts';
import { until } from '../support/until.ts';
import { startReceiver, type WebhookReceiver } from '../support/webhook-receiver.ts';

/** The async deadline and the queue's metrics (docs/async.md#results, docs/async.md#metrics). */
describe('async executions: their deadline and the queue’s metrics', () => {
  let h: Harness;
  let auth: Auth;
  let counting: CountingGraphql;
  let receiver: WebhookReceiver;
  const { put } = integrationCalls(() => ({ h, auth }));

  const accept = async (payload: Record<string, unknown>) => {
    const res = await h.call(auth, {
      method: 'POST',
      url: '/api/v1/integrations/erp/execute',
      headers: { prefer: 'respond-async' },
      payload,
    });
    assert.equal(res.statusCode, 202, res.body);
    return body(res).data.execution_id as string;
  };
  const ended = (id: string) =>
    until(async () => {
      const e = body(await h.call(auth, { method: 'GET', url: `/api/v1/executions/${id}` })).data;
      return ['succeeded', 'failed', 'canceled'].includes(e.status) ? e : undefined;
    }, `execution ${id} ended`);
  const metric = async (pattern: RegExp) => {
    const text = (await h.call(null, { method: 'GET', url: '/metrics' })).body;
    const line = text.split('\n').find((l) => pattern.test(l));
    return line === undefined ? undefined : Number(line.split(' ').at(-1));
  };

  before(async () => {
    // One second for the whole async execution, however long the integration's timeout_seconds.
    h = await harness({ IX_ASYNC_DEADLINE_SECONDS: '1' });
    await h.tenant('acme');
    auth = await h.auth('acme', ['*']);
    counting = await countingGraphql();
    receiver = await startReceiver();
    assert.equal((await put('erp', 'graphql-1.0.0', { base_url: counting.url, timeout_seconds: 3600 })).statusCode, 201);
  });
  after(async () => {
    counting.release();
    await h.close();
    await counting.close();
    await receiver.close();
  });

  test('an async execution runs within IX_ASYNC_DEADLINE_SECONDS: 504 upstream_timeout, scope execute, in its result', async () => {
    const done = await ended(await accept(receiveCall(1, true)));
    assert.equal(done.status, 'failed');
    assert.equal(done.http_status, 504);
    assert.equal(done.result.error.code, 'upstream_timeout');
    assert.equal(done.result.error.details.scope, 'execute');
  });

  test('/metrics: the execution start age, the queue depth by queue, and deliveries by outcome', async () => {
    const created = await h.call(auth, {
      method: 'POST',
      url: '/api/v1/webhooks',
      payload: { url: `${receiver.url}/hooks`, events: ['execution.succeeded'] },
    });
    assert.equal(created.statusCode, 201, created.body);
    const startsBefore = (await metric(/^ix_execution_start_age_seconds_count/)) ?? 0;
    const done = await ended(await accept(receiveCall(2)));
    assert.equal(done.status, 'succeeded');
    assert.equal(await metric(/^ix_execution_start_age_seconds_count/), startsBefore + 1);
    assert.equal(await metric(/^ix_queue_depth\{queue="executions"\}/), 0);
    assert.notEqual(await metric(/^ix_queue_depth\{queue="webhook-deliveries"\}/), undefined);
    await until(() => receiver.received.length === 1, 'the succeeded event was delivered');
    await until(async () => (await metric(/^ix_webhook_deliveries_total\{outcome="delivered"\}/)) === 1, 'one delivery counted');
  });
});

/** One tenant's backlog is capped (docs/limits.md): IX_TENANT_QUEUED_MAX, counted across instances in storage. */
describe('a tenant may have at most IX_TENANT_QUEUED_MAX async executions queued', () => {
  let h: Harness;
  let acme: Auth;
  let globex: Auth;
  let counting: CountingGraphql;

  before(async () => {
    // No worker: what is accepted stays queued.
    h = await harness({ IX_TENANT_QUEUED_MAX: '3', IX_WORKER: 'false' });
    await h.tenant('acme');
    await h.tenant('globex');
    acme = await h.auth('acme', ['*']);
    globex = await h.auth('globex', ['*']);
    counting = await countingGraphql();
    for (const auth of [acme, globex]) {
      const res = await h.call(auth, {
        method: 'PUT',
        url: '/api/v1/integrations/erp',
        payload: { connector: 'graphql-1.0.0', config: { base_url: counting.url, validate_schema: false } },
      });
      assert.equal(res.statusCode, 201, res.body);
    }
  });
  after(async () => {
    await h.close();
    await counting.close();
  });

  const accept = (auth: Auth, n: number) =>
    h.call(auth, {
      method: 'POST',
      url: '/api/v1/integrations/erp/execute',
      headers: { prefer: 'respond-async' },
      payload: receiveCall(n),
    });

  test('the 4th is 429 rate_limited, reason queue, with Retry-After; nothing queued or recorded; another tenant is not held back', async () => {
    for (let n = 1; n <= 3; n++) assert.equal((await accept(acme, n)).statusCode, 202);
    const refused = await accept(acme, 4);
    const error = body(refused).error;
    assert.equal(refused.statusCode, 429, refused.body);
    assert.deepEqual([error.code, error.details], ['rate_limited', { reason: 'queue', limit: 3 }]);
    assert.equal(refused.headers['retry-after'], '5');
    await h.app.executionLog.flush();
    const listed = body(await h.call(acme, { method: 'GET', url: '/api/v1/executions?limit=100' })).data;
    assert.equal(listed.length, 3, 'the refused call left no execution');
    assert.equal((await accept(globex, 1)).statusCode, 202, 'globex has its own 3');
    // Canceling one frees a place.
    const queued = listed[0].id;
    assert.equal((await h.call(acme, { method: 'POST', url: `/api/v1/executions/${queued}/cancel` })).statusCode, 200);
    assert.equal((await accept(acme, 5)).statusCode, 202);
  });
});

/**
 * Workers serve tenants round robin (docs/async.md#fair-turns): one tenant's backlog of slow calls delays another
 * tenant's execution by at most one call per worker, not by the whole backlog. Every call here is held by the upstream
 * until the test ends one, so the order in which calls reach it is the order in which workers took them.
 */
describe('tenants with queued async executions are served round robin', () => {
  let h: Harness;
  let counting: CountingGraphql;
  const auths = new Map<string, Auth>();

  before(async () => {
    h = await harness({ IX_WORKER_CONCURRENCY: '2' });
    counting = await countingGraphql();
    for (const tenant of ['acme', 'globex', 'initech']) {
      await h.tenant(tenant);
      const auth = await h.auth(tenant, ['*']);
      auths.set(tenant, auth);
      const res = await h.call(auth, {
        method: 'PUT',
        url: '/api/v1/integrations/erp',
        payload: {
          connector: 'graphql-1.0.0',
          config: { base_url: counting.url, validate_schema: false, timeout_seconds: 3600 },
        },
      });
      assert.equal(res.statusCode, 201, res.body);
    }
  });
  after(async () => {
    counting.release();
    await h.close();
    await counting.close();
  });

  const accept = async (tenant: string, n: number) => {
    const res = await h.call(auths.get(tenant) as Auth, {
      method: 'POST',
      url: '/api/v1/integrations/erp/execute',
      headers: { prefer: 'respond-async' },
      payload: receiveCall(n, true),
    });
    assert.equal(res.statusCode, 202, res.body);
  };

  test('acme’s six slow calls hold both workers; globex’s and initech’s each wait one call, not six', async () => {
    for (let n = 1; n <= 6; n++) await accept('acme', n);
    await until(() => counting.holding === 2, 'both workers run one of acme’s calls');
    await accept('globex', 101);
    await accept('globex', 102);
    await accept('initech', 201);
    for (let arrived = 2; arrived < 9; arrived++) {
      counting.releaseOldest();
      await until(() => counting.arrivals.length === arrived + 1, `call ${arrived + 1} reached the upstream`);
    }
    // The first two started together, one on each worker: either may reach the upstream first.
    assert.deepEqual([...counting.arrivals.slice(0, 2)].sort(), [1, 2]);
    assert.deepEqual(counting.arrivals.slice(2), [3, 101, 201, 4, 102, 5, 6]);
  });
});
