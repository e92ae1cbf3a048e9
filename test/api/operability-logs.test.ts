import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { cliSource } from '../../src/audit/audit-log.ts';
import { createApiKey } from '../../src/auth/key-service.ts';
import { UsageRecorder } from '../../src/auth/usage-recorder.ts';
import { defineConnector } from '../../src/connectors/connector.ts';
import { builtInConnectors } from '../../src/connectors/registry.ts';
import { WsdlCache } from '../../src/connectors/soap/wsdl-cache.ts';
import { levelOf } from '../../src/http/request-log.ts';
import { migrate, openStorage } from '../../src/storage/database.ts';
import { insertTenant } from '../../src/storage/tenants.ts';
import { assertError } from '../support/assertions.ts';
import { type GraphqlServer, startGraphqlServer } from '../support/graphql-server.ts';
import { body, type Harness, harness } from '../support/harness.ts';

type Line = Record<string, unknown>;

/** A connector whose send is a bug (a TypeError): what our own failure looks like in the logs. */
const buggyConnector = defineConnector({
  id: 'buggy-1.0.0',
  configProperties: {},
  secretFields: [],
  urlFields: [],
  defaults: { timeout_seconds: 30 },
  offers: ['send', 'receive'],
  requestSchemas: { send: { type: 'object', properties: {} }, receive: { type: 'object', properties: {} } },
  connect() {
    return {
      async send() {
        throw new TypeError('a bug');
      },
      async receive() {
        return { data: { message_count: 0 }, messageCount: 0 };
      },
      async test() {
        return { data: {}, messageCount: 0 };
      },
    };
  },
});

describe('operability: one log line per request, and the metrics of executes', () => {
  let h: Harness;
  let upstream: GraphqlServer;
  let auth: { key: string; tenant: string };
  let keyId: string;
  const token = 'gql-token-Secret-5c2e9a';
  const apiKeys: string[] = [];
  const logs = new PassThrough();
  let logged = '';
  logs.on('data', (chunk) => {
    logged += String(chunk);
  });
  const lines = (): Line[] =>
    logged
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => JSON.parse(l) as Line);
  /** The lines of one request, by its X-Request-Id: every line written under a request has it as `request_id`. */
  const linesOf = (res: LightMyRequestResponse) => lines().filter((l) => l.request_id === res.headers['x-request-id']);
  const execute = (id: string, payload: object) =>
    h.call(auth, { method: 'POST', url: `/api/v1/integrations/${id}/execute`, payload });

  before(async () => {
    upstream = await startGraphqlServer({ token });
    h = await harness(
      { LOG_LEVEL: 'info', IX_AUTH_FAILURE_LIMIT: '1' },
      { connectors: (config) => [...builtInConnectors(config), buggyConnector], logStream: logs },
    );
    await h.tenant('acme');
    const made = await h.key('acme', ['*']);
    auth = { key: made.key, tenant: 'acme' };
    keyId = made.record.id;
    apiKeys.push(made.key);
    for (const [id, config] of [
      ['crm', { base_url: upstream.url, token }],
      ['locked', { base_url: upstream.url, token: 'wrong-token-Secret-77' }],
    ] as const) {
      const put = await h.call(auth, {
        method: 'PUT',
        url: `/api/v1/integrations/${id}`,
        payload: { connector: 'graphql-1.0.0', config },
      });
      assert.equal(put.statusCode, 201, put.body);
    }
    const buggy = await h.call(auth, {
      method: 'PUT',
      url: '/api/v1/integrations/buggy',
      payload: { connector: 'buggy-1.0.0', config: {} },
    });
    assert.equal(buggy.statusCode, 201, buggy.body);
  });
  after(async () => {
    await h?.close();
    await upstream?.close();
  });

  test('a successful execute: one info line at completion with every field, and no request lines besides', async () => {
    const res = await execute('crm', { operation: 'receive', query: '{ usersList { id } }', records_path: 'usersList' });
    assert.equal(res.statusCode, 200, res.body);
    const own = linesOf(res);
    assert.equal(own.length, 1, JSON.stringify(own));
    const [line] = own;
    const { time: _time, pid: _pid, hostname: _host, duration_ms: duration, upstream_ms: upstreamMs, ...rest } = line;
    assert.ok(typeof duration === 'number' && duration >= 0, `duration_ms ${duration}`);
    assert.ok(typeof upstreamMs === 'number' && upstreamMs > 0 && upstreamMs <= duration, `upstream_ms ${upstreamMs}`);
    const executionId = String(rest.execution_id);
    assert.match(executionId, /^exe_/);
    assert.deepEqual(rest, {
      level: 30,
      request_id: res.headers['x-request-id'],
      method: 'POST',
      route: '/api/v1/integrations/:id/execute',
      status: 200,
      tenant_id: 'acme',
      key_id: keyId,
      user_id: null,
      error_code: null,
      integration_id: 'crm',
      operation: 'receive',
      execution_id: executionId,
      connector: 'graphql-1.0.0',
      msg: 'POST /api/v1/integrations/:id/execute 200',
    });
    // The same execution id as the log of executions keeps.
    const recorded = body(await h.call(auth, { method: 'GET', url: `/api/v1/executions/${executionId}` })).data;
    assert.equal(recorded.request_id, res.headers['x-request-id']);
    assert.ok(!lines().some((l) => l.msg === 'incoming request' || l.msg === 'request completed'), 'Fastify’s own two lines');
  });

  test('an upstream failure is logged at warn with its code; our own bug at error; a caller’s mistake at info', async () => {
    const failed = await execute('locked', { operation: 'receive', query: '{ usersList { id } }' });
    assertError(failed, 502, 'upstream_http_error');
    const [warn] = linesOf(failed);
    assert.deepEqual([warn.level, warn.error_code, warn.status, warn.integration_id], [40, 'upstream_http_error', 502, 'locked']);

    const bug = await execute('buggy', { operation: 'send' });
    assertError(bug, 500, 'internal_error');
    const bugLines = linesOf(bug);
    // The bug's own line (with its stack) and the request's line, both at error.
    assert.ok(
      bugLines.some((l) => l.level === 50 && (l.err as { message?: string })?.message === 'a bug'),
      JSON.stringify(bugLines),
    );
    const request = bugLines.find((l) => l.route === '/api/v1/integrations/:id/execute');
    assert.deepEqual([request?.level, request?.error_code, request?.connector], [50, 'internal_error', 'buggy-1.0.0']);

    const invalid = await execute('crm', { operation: 'receive' });
    assertError(invalid, 400, 'validation_failed');
    assert.deepEqual(
      linesOf(invalid).map((l) => [l.level, l.error_code]),
      [[30, 'validation_failed']],
    );
    const missing = await execute('nope', { operation: 'receive', query: '{ usersList { id } }' });
    assertError(missing, 404, 'not_found');
    const [notFound] = linesOf(missing);
    assert.deepEqual([notFound.integration_id, notFound.operation, notFound.error_code], ['nope', 'receive', 'not_found']);
  });

  test('levels: a shutdown’s 503 is info, an unexpected 5xx is error, an upstream’s failure warn', () => {
    assert.equal(levelOf(503, 'service_unavailable'), 'info');
    assert.equal(levelOf(500, 'internal_error'), 'error');
    assert.equal(levelOf(503, null), 'error');
    assert.equal(levelOf(504, 'upstream_timeout'), 'warn');
    assert.equal(levelOf(429, 'rate_limited'), 'info');
    // A route that asks for debug (the console's static files) lowers its successes only.
    assert.equal(levelOf(200, null, 'debug'), 'debug');
    assert.equal(levelOf(304, null, 'debug'), 'debug');
    assert.equal(levelOf(404, 'not_found', 'debug'), 'info');
    assert.equal(levelOf(500, 'internal_error', 'debug'), 'error');
  });

  test('no secret reaches the logs: not the API key, not a stored token, not an upstream’s echo of it', () => {
    for (const secret of [...apiKeys, token, 'wrong-token-Secret-77']) {
      assert.ok(!logged.includes(secret), `the logs hold ${secret.slice(0, 6)}…`);
    }
  });

  test('/metrics counts executes by connector, operation and outcome, their upstream time, and refusals', async () => {
    const limited = await h.key('acme', ['*'], { rate_limit_per_minute: 1 });
    const once = { key: limited.key, tenant: 'acme' };
    assert.equal((await h.call(once, { method: 'GET', url: '/api/v1/me' })).statusCode, 200);
    const overLimit = await h.call(once, { method: 'GET', url: '/api/v1/me' });
    assertError(overLimit, 429, 'rate_limited');
    assert.equal(linesOf(overLimit)[0].refusal, 'rate_limit');
    // Last: with IX_AUTH_FAILURE_LIMIT=1 the IP guard then refuses everything from this address for a minute.
    const bad = { key: 'ix_live_0000000000000000000000000000000000000000xxxxxx', tenant: 'acme' };
    assertError(await h.call(bad, { method: 'GET', url: '/api/v1/me' }), 401, 'invalid_credentials');
    const guarded = await h.call(bad, { method: 'GET', url: '/api/v1/me' });
    assertError(guarded, 429, 'rate_limited');
    assert.equal(linesOf(guarded)[0].refusal, 'auth_failures');

    const text = (await h.call(null, { method: 'GET', url: '/metrics' })).body;
    const value = (series: string) => {
      const line = text.split('\n').find((l) => l.startsWith(`${series} `));
      assert.ok(line, `no ${series} in /metrics`);
      return Number(line.slice(series.length + 1));
    };
    assert.equal(value('ix_executes_total{connector="graphql-1.0.0",operation="receive",outcome="succeeded",error_code=""}'), 1);
    assert.equal(
      value('ix_executes_total{connector="graphql-1.0.0",operation="receive",outcome="failed",error_code="upstream_http_error"}'),
      1,
    );
    assert.equal(
      value('ix_executes_total{connector="buggy-1.0.0",operation="send",outcome="failed",error_code="internal_error"}'),
      1,
    );
    // Executes counted are the executions recorded: a request that did not fit is one; an unknown integration is none.
    assert.equal(
      value('ix_executes_total{connector="graphql-1.0.0",operation="receive",outcome="failed",error_code="validation_failed"}'),
      1,
    );
    assert.ok(!text.includes('error_code="not_found"'));
    assert.equal(value('ix_execute_upstream_duration_seconds_count{connector="graphql-1.0.0"}'), 3);
    assert.equal(value('ix_refusals_total{reason="auth_failures"}'), 1);
    assert.equal(value('ix_refusals_total{reason="rate_limit"}'), 1);
    assert.equal(value('ix_connector_cache_entries{connector="soap-1.0.0"}'), 0);
    assert.ok(value('ix_usage_flush_lag_seconds') >= 0);
  });
});

describe('the gauges’ sources', () => {
  test('the WSDL cache counts hits and misses (loads)', async () => {
    const cache = new WsdlCache<string>(10, 60_000);
    const load = async () => 'parsed';
    await cache.get('a', 'v1', load);
    await cache.get('a', 'v1', load);
    await cache.get('a', 'v2', load);
    assert.deepEqual([cache.hits, cache.loads, cache.size], [1, 2, 1]);
  });

  test('usage flush lag: the wait of the oldest count not written, 0 once written, kept while a write fails', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ix-usage-lag-'));
    const storage = openStorage(`sqlite:${join(dir, 'ix.db')}`);
    await migrate(storage);
    const tenant = await insertTenant(storage.db, { id: 'acme', name: 'Acme', type: 'production' });
    assert.ok(tenant);
    const { record } = await createApiKey(storage.db, tenant, { scopes: ['*'] }, 600, cliSource());
    const errors: unknown[] = [];
    const usage = new UsageRecorder(storage.db, { error: (fields: unknown) => errors.push(fields) } as never, 60_000);
    try {
      assert.equal(usage.lagSeconds(), 0);
      usage.record(record.id, '127.0.0.1', 200);
      const first = performance.now();
      assert.ok(usage.lagSeconds(first + 2000) >= 2 - 0.001);
      await usage.flush();
      assert.equal(usage.lagSeconds(), 0, 'written');
      usage.record(record.id, '127.0.0.1', 200);
      const second = performance.now();
      await storage.close();
      await usage.flush();
      assert.equal(errors.length, 1, 'the failed write is logged');
      assert.ok(usage.lagSeconds(second + 3000) >= 3 - 0.001, 'a failed write keeps the wait');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
