import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { cliJson } from '../support/cli.ts';
import { createTestDatabase, dropRedisKeys, redisTestUrl, testMasterKey } from '../support/postgres.ts';
import { type Env, type Json, killAll, type ServerProcess, startServer } from '../support/processes.ts';
import { ok, type ScriptedUpstream, scriptedUpstream } from '../support/scripted-upstream.ts';
import { type CountingGraphqlServer, startYogaServer } from '../support/yoga-server.ts';

/**
 * What instances share about an integration's upstream, two `interchange serve` processes on one PostgreSQL database
 * and one Redis: its circuit breaker (docs/resilience.md#circuit-breaker), failures seen by either counting together;
 * and the end of its kept GraphQL schema when the integration changes (docs/execute.md#schema-aware-checking).
 */

after(killAll);

const prefix = `ixtest-breaker-${randomBytes(6).toString('hex')}`;
const tenant = 'acme';

describe('two instances share what they know of an integration’s upstream', () => {
  let database: { url: string; drop(): Promise<void> };
  let env: Env;
  let a: ServerProcess;
  let b: ServerProcess;
  let key: string;
  let upstream: ScriptedUpstream;
  let failing = true;

  before(async () => {
    database = await createTestDatabase();
    env = { DATABASE_URL: database.url, REDIS_URL: redisTestUrl, IX_REDIS_PREFIX: prefix, IX_MASTER_KEY: testMasterKey() };
    await cliJson(['tenants', 'create', tenant], env);
    upstream = await scriptedUpstream(() => (failing ? 'unavailable' : ok));
    let created: Json;
    [a, b, created] = await Promise.all([
      startServer(env),
      startServer(env),
      cliJson(['keys', 'create', '--tenant', tenant, '--scopes', 'integrations.*', '--rate-limit', '100000'], env),
    ]);
    key = created.key;
  });

  after(async () => {
    await Promise.all([a?.stop(), b?.stop(), upstream?.close()]);
    await dropRedisKeys(prefix);
    await database?.drop();
  });

  async function call(server: ServerProcess, method: string, path: string, payload?: unknown) {
    const res = await fetch(`${server.url}/api/v1${path}`, {
      method,
      headers: { 'x-api-key': key, 'x-tenant-id': tenant, ...(payload !== undefined && { 'content-type': 'application/json' }) },
      body: payload === undefined ? undefined : JSON.stringify(payload),
    });
    return { status: res.status, headers: res.headers, body: (await res.json()) as Json };
  }
  const receive = (server: ServerProcess) =>
    call(server, 'POST', '/integrations/crm/execute', { operation: 'receive', query: '{ ok }' });

  test('a change through A drops the GraphQL schema B keeps, within a second of the change', async () => {
    const yoga: CountingGraphqlServer = await startYogaServer();
    try {
      const put = await call(a, 'PUT', '/integrations/shop', { connector: 'graphql-1.0.0', config: { base_url: yoga.url } });
      assert.equal(put.status, 201, JSON.stringify(put.body));
      const query = (server: ServerProcess) =>
        call(server, 'POST', '/integrations/shop/execute', { operation: 'receive', query: '{ serverTime }' });
      assert.equal((await query(b)).status, 200);
      assert.equal((await query(b)).status, 200);
      assert.equal(yoga.introspections, 1, 'B read the schema once and kept it');
      const patched = await call(a, 'PATCH', '/integrations/shop', { config: { schema_ttl_seconds: 900 } });
      assert.equal(patched.status, 200, JSON.stringify(patched.body));
      // Integrations are read anew within 1 s on every instance (README: Scale out): waited from the change's answer.
      await new Promise((resolve) => setTimeout(resolve, 1010));
      assert.equal((await query(b)).status, 200);
      assert.equal(yoga.introspections, 2, 'B read it again after the change');
    } finally {
      await yoga.close();
    }
  });

  test('failures through A and B open it for both; a change through B closes it for A', async () => {
    const put = await call(a, 'PUT', '/integrations/crm', {
      connector: 'graphql-1.0.0',
      // The scripted upstream is no GraphQL server: no introspection before the calls.
      config: { base_url: upstream.url, retry: { max_attempts: 1 }, validate_schema: false },
    });
    assert.equal(put.status, 201, JSON.stringify(put.body));

    // Five failed calls, alternating: neither instance saw five of them alone.
    for (const server of [a, b, a, b, a]) {
      const res = await receive(server);
      assert.equal(res.status, 502, JSON.stringify(res.body));
      assert.equal(res.body.error.code, 'upstream_http_error');
    }
    assert.equal(upstream.requests, 5);

    for (const server of [a, b]) {
      const res = await receive(server);
      assert.equal(res.status, 503, JSON.stringify(res.body));
      assert.equal(res.body.error.code, 'upstream_circuit_open');
      const retryAfter = Number(res.headers.get('retry-after'));
      assert.ok(retryAfter >= 1 && retryAfter <= 30, `Retry-After ${retryAfter}`);
      assert.equal((await call(server, 'GET', '/integrations/crm')).body.data.circuit, 'open');
    }
    assert.equal(upstream.requests, 5, 'neither instance sent anything while it was open');

    // `test` goes through on either and reports the shared state.
    const tested = await call(b, 'POST', '/integrations/crm/execute', { operation: 'test' });
    assert.equal(tested.body.error?.details?.circuit ?? tested.body.data?.details?.circuit, 'open');

    // Changing the integration through B closes the breaker that A sees too.
    failing = false;
    const patched = await call(b, 'PATCH', '/integrations/crm', { config: { timeout_seconds: 20 } });
    assert.equal(patched.status, 200, JSON.stringify(patched.body));
    assert.equal((await call(a, 'GET', '/integrations/crm')).body.data.circuit, 'closed');
    assert.equal((await receive(a)).status, 200);
  });
});
