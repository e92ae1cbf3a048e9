import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { assertError, assertOk } from '../support/assertions.ts';
import { type Auth, body, type Harness, harness, noSchemaCheck } from '../support/harness.ts';
import { dropRedisKeys, onPostgres, redisTestUrl } from '../support/postgres.ts';
import {
  type Answer,
  type Behaviour,
  failNThenSucceed,
  ok as graphqlOk,
  reservedPort,
  type Script,
  type ScriptedUpstream,
  scriptedUpstream,
} from '../support/scripted-upstream.ts';
import { until } from '../support/until.ts';

/**
 * docs/resilience.md end to end: execute calls of both connectors, synchronous and async, against upstreams that fail
 * in scripted ways and count what reached them (test/support/scripted-upstream.ts). Waits between tries are the
 * settings at their smallest (1 ms) unless a case is about the wait itself; the breaker's clock is the test's.
 */

const NS = 'http://example.com/resilience';
const soapOk: Answer = {
  status: 200,
  headers: { 'content-type': 'text/xml; charset=utf-8' },
  body:
    '<?xml version="1.0" encoding="utf-8"?><soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/">' +
    `<soap:Body><EchoResponse xmlns="${NS}"><ok>true</ok></EchoResponse></soap:Body></soap:Envelope>`,
};

/** What differs between the connectors: their config, a read, a write and a good answer. */
interface ConnectorCase {
  readonly connector: string;
  readonly config: (url: string) => Record<string, unknown>;
  readonly receive: Record<string, unknown>;
  readonly send: Record<string, unknown>;
  readonly ok: Answer;
}

const connectors: readonly ConnectorCase[] = [
  {
    connector: 'graphql-1.0.0',
    // The scripted upstream plays one behaviour per connection: no introspection may take one (noSchemaCheck).
    config: (url) => ({ base_url: url, ...noSchemaCheck }),
    receive: { operation: 'receive', query: '{ ok }' },
    send: { operation: 'send', mutation: 'mutation { write }' },
    ok: graphqlOk,
  },
  {
    connector: 'soap-1.0.0',
    config: (url) => ({ endpoint_url: `${url}/service`, namespace: NS }),
    receive: { operation: 'receive', method: 'Echo', params: { x: 1 } },
    send: { operation: 'send', method: 'Echo', params: { x: 1 } },
    ok: soapOk,
  },
];

/** Retries at their quickest: every wait at most 1 ms. */
const quick = { max_attempts: 3, base_delay_ms: 1, max_delay_ms: 1 };

let clock = Date.parse('2026-11-27T12:00:00Z');
let h: Harness;
let auth: Auth;
const upstreams: Array<{ close(): Promise<void> }> = [];
let serial = 0;

// On PostgreSQL (npm run test:api:pg) the breakers live in Redis, as a deployment with REDIS_URL keeps them.
const redisPrefix = `ixtest-resilience-${process.pid}`;
const env: Record<string, string> = onPostgres() ? { REDIS_URL: redisTestUrl, IX_REDIS_PREFIX: redisPrefix } : {};

before(async () => {
  // Only the breaker's clock is the test's: it moves when a case moves it.
  h = await harness(env, { breakers: { now: () => clock } });
  await h.tenant('acme');
  auth = await h.auth('acme', ['integrations.*', 'executions.read']);
});
after(async () => {
  await Promise.all(upstreams.map((upstream) => upstream.close()));
  await h.close();
  if (onPostgres()) await dropRedisKeys(redisPrefix);
});

async function upstream(script: Script): Promise<ScriptedUpstream> {
  const started = await scriptedUpstream(script);
  upstreams.push(started);
  return started;
}

/** A new integration of `c` at `url`, with `extra` config; its id. */
async function integration(c: ConnectorCase, url: string, extra: Record<string, unknown> = {}): Promise<string> {
  const id = `int-${++serial}`;
  const res = await h.call(auth, {
    method: 'PUT',
    url: `/api/v1/integrations/${id}`,
    payload: { connector: c.connector, config: { ...c.config(url), ...extra } },
  });
  assert.equal(res.statusCode, 201, res.body);
  return id;
}

function execute(id: string, payload: Record<string, unknown>, headers: Record<string, string> = {}) {
  return h.call(auth, { method: 'POST', url: `/api/v1/integrations/${id}/execute`, payload, headers });
}

/** The newest execution record of an integration. */
async function latestRecord(id: string) {
  const res = await h.call(auth, { method: 'GET', url: `/api/v1/executions?integration_id=${id}&limit=1` });
  assert.equal(res.statusCode, 200, res.body);
  return body(res).data[0];
}

async function circuitOf(id: string): Promise<string> {
  const res = await h.call(auth, { method: 'GET', url: `/api/v1/integrations/${id}` });
  return assertOk(res).circuit;
}

/** The value of one sample of the Prometheus text, 0 when absent. */
async function metric(name: string, labels: Record<string, string>): Promise<number> {
  const text = (await h.app.inject({ method: 'GET', url: '/metrics' })).body;
  const wanted = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`)) continue;
    const inner = line.slice(name.length + 1, line.indexOf('}'));
    const parts = inner.split(',');
    if (wanted.every((w) => parts.includes(w))) return Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return 0;
}

function details(res: LightMyRequestResponse) {
  return body(res).error.details;
}

for (const c of connectors) {
  describe(`${c.connector}: what is retried`, () => {
    test('a receive after 503, 503: three attempts, the third answered; the record says 3', async () => {
      const up = await upstream(failNThenSucceed(2, 'unavailable', c.ok));
      const id = await integration(c, up.url, { retry: quick });
      const retried = await metric('ix_upstream_retries_total', { connector: c.connector, failure: 'unavailable' });
      assert.equal((await execute(id, c.receive)).statusCode, 200);
      assert.equal(up.requests, 3);
      assert.equal((await latestRecord(id)).attempts, 3);
      assert.equal(await metric('ix_upstream_retries_total', { connector: c.connector, failure: 'unavailable' }), retried + 2);
    });

    test('a receive that keeps failing: max_attempts tries, then the last failure with details.attempts', async () => {
      const up = await upstream(['unavailable']);
      const id = await integration(c, up.url, { retry: { ...quick, max_attempts: 4 } });
      const res = await execute(id, c.receive);
      assertError(res, 502, 'upstream_http_error');
      assert.equal(details(res).upstream_status, 503);
      assert.equal(details(res).attempts, 4);
      assert.equal(up.requests, 4);
      const record = await latestRecord(id);
      assert.deepEqual([record.attempts, record.error_code], [4, 'upstream_http_error']);
    });

    test('a receive told 429 with Retry-After: 1 waits at least that second, far beyond its 1 ms backoff', async () => {
      const up = await upstream(failNThenSucceed(1, 'throttled', c.ok));
      const id = await integration(c, up.url, { retry: quick });
      const started = performance.now();
      assert.equal((await execute(id, c.receive)).statusCode, 200);
      assert.ok(performance.now() - started >= 990, 'Retry-After was honoured');
      assert.equal(up.requests, 2);
    });

    test('a receive whose upstream resets after reading is tried again; a send is not, and arrived once', async () => {
      const up = await upstream(['reset-after-read']);
      const id = await integration(c, up.url, { retry: quick });
      const read = await execute(id, c.receive);
      assertError(read, 502, 'upstream_unreachable');
      assert.deepEqual(details(read), { cause: 'reset', attempts: 3 });
      assert.equal(up.requests, 3);
      const write = await execute(id, c.send);
      assertError(write, 502, 'upstream_unreachable');
      assert.deepEqual(details(write), { cause: 'reset', attempts: 1 });
      assert.equal(up.requests, 4, 'the send reached the upstream once');
    });

    test('a send answered 503 or 429 is never tried again: the request arrived', async () => {
      for (const failure of ['unavailable', 'throttled'] as const) {
        const up = await upstream(failNThenSucceed(1, failure, c.ok));
        const id = await integration(c, up.url, { retry: quick });
        const res = await execute(id, c.send);
        assertError(res, 502, 'upstream_http_error');
        assert.equal(details(res).attempts, 1);
        assert.equal(up.requests, 1, failure);
      }
    });

    test('a send to a port that refuses, then opens: tried again, and it arrives exactly once', async () => {
      const later = await reservedPort();
      // Waits of up to 200, 400, 800… ms between tries: time for the test to open the port after the first refusal.
      const id = await integration(c, later.url, { retry: { max_attempts: 10, base_delay_ms: 200, max_delay_ms: 2000 } });
      const labels = { connector: c.connector, failure: 'refused' };
      const refusedBefore = await metric('ix_upstream_retries_total', labels);
      const sending = execute(id, c.send);
      await until(async () => (await metric('ix_upstream_retries_total', labels)) > refusedBefore, 'a refused try');
      const up = await later.open([c.ok]);
      upstreams.push(up);
      const res = await sending;
      assert.equal(res.statusCode, 200, res.body);
      assert.equal(up.requests, 1, 'the write reached the upstream once');
      const refused = (await metric('ix_upstream_retries_total', labels)) - refusedBefore;
      assert.equal((await latestRecord(id)).attempts, refused + 1);
    });

    test('a hang past timeout_seconds: a receive is tried again, a send is not', async () => {
      const up = await upstream(failNThenSucceed(1, 'hang', c.ok));
      const id = await integration(c, up.url, { retry: quick, timeout_seconds: 1 });
      assert.equal((await execute(id, c.receive)).statusCode, 200);
      assert.equal(up.requests, 2);
      const hanging = await upstream(['hang']);
      const writeId = await integration(c, hanging.url, { retry: quick, timeout_seconds: 1 });
      const res = await execute(writeId, c.send);
      assertError(res, 504, 'upstream_timeout');
      assert.equal(details(res).attempts, 1);
      assert.equal(hanging.requests, 1);
    });

    test('max_attempts 1 never retries', async () => {
      const up = await upstream(failNThenSucceed(1, 'unavailable', c.ok));
      const id = await integration(c, up.url, { retry: { max_attempts: 1 } });
      assertError(await execute(id, c.receive), 502, 'upstream_http_error');
      assert.equal(up.requests, 1);
    });

    test('sync: its outbound part is a write, its inbound part a read, each tried on its own', async () => {
      // outbound: 200; inbound: 503, then 200.
      const up = await upstream((n) => (n === 1 ? 'unavailable' : c.ok));
      const id = await integration(c, up.url, { retry: quick });
      const { operation: _o, ...outbound } = c.send;
      const { operation: _i, ...inbound } = c.receive;
      const res = await execute(id, { operation: 'sync', outbound, inbound });
      assert.equal(res.statusCode, 200, res.body);
      assert.equal(up.requests, 3);
      assert.equal((await latestRecord(id)).attempts, 2);

      // outbound answered 503: not retried, the inbound part never runs.
      const failing = await upstream(failNThenSucceed(1, 'unavailable', c.ok));
      const writeId = await integration(c, failing.url, { retry: quick });
      const refused = await execute(writeId, { operation: 'sync', outbound, inbound });
      assertError(refused, 502, 'upstream_http_error');
      assert.equal(details(refused).attempts, 1);
      assert.equal(failing.requests, 1);
    });

    test('batch: each entry is tried on its own, a receive entry again after a 503, a send entry never', async () => {
      // entry 1 (receive): 503, then 200; entry 2 (send): 503.
      const up = await upstream((n) => (n === 1 ? c.ok : 'unavailable'));
      const id = await integration(c, up.url, { retry: quick });
      const { operation: _o, ...send } = c.send;
      const { operation: _i, ...receive } = c.receive;
      const res = await execute(id, {
        operation: 'batch',
        operations: [
          { operation: 'receive', data: receive },
          { operation: 'send', data: send },
        ],
      });
      assert.equal(up.requests, 3, 'the receive twice, the send once');
      const results = body(res).data.results;
      assert.equal(results[0].success, true, JSON.stringify(results[0]));
      assert.equal(results[1].success, false, JSON.stringify(results[1]));
      assert.equal(results[1].error.code, 'upstream_http_error');
      assert.equal((await latestRecord(id)).attempts, 2);
    });

    test('async: a receive is retried as a synchronous one is, and its record and result say 3 attempts', async () => {
      const up = await upstream(failNThenSucceed(2, 'unavailable', c.ok));
      const id = await integration(c, up.url, { retry: quick });
      const accepted = await execute(id, c.receive, { prefer: 'respond-async' });
      assert.equal(accepted.statusCode, 202, accepted.body);
      const executionId = body(accepted).data.execution_id;
      const record = await until(async () => {
        const res = await h.call(auth, { method: 'GET', url: `/api/v1/executions/${executionId}` });
        const data = body(res).data;
        return data.status === 'succeeded' || data.status === 'failed' ? data : undefined;
      }, 'the async execution ended');
      assert.deepEqual([record.status, record.attempts], ['succeeded', 3]);
      assert.equal(up.requests, 3);
    });
  });

  describe(`${c.connector}: the circuit breaker`, () => {
    test('5 failed calls open it: the 6th is refused at once, 503 upstream_circuit_open, nothing sent', async () => {
      let failing = true;
      const up = await upstream(() => (failing ? 'unavailable' : c.ok));
      const id = await integration(c, up.url, { retry: { max_attempts: 1 } });
      const openings = await metric('ix_circuit_breaker_openings_total', { connector: c.connector });
      for (let i = 0; i < 5; i++) assertError(await execute(id, c.receive), 502, 'upstream_http_error');
      assert.equal(up.requests, 5);
      assert.equal(await metric('ix_circuit_breaker_openings_total', { connector: c.connector }), openings + 1);
      assert.equal(await circuitOf(id), 'open');

      const refused = await execute(id, c.send);
      assertError(refused, 503, 'upstream_circuit_open');
      assert.deepEqual(details(refused), { circuit: 'open', attempts: 0 });
      assert.equal(refused.headers['retry-after'], '30');
      assert.equal(up.requests, 5, 'a refused call sends nothing');
      // Every operation that reaches the breaker answers with Retry-After: a sync too, through its stage's details.
      const { operation: _s, ...sendFields } = c.send;
      const { operation: _r, ...receiveFields } = c.receive;
      const sync = await execute(id, { operation: 'sync', outbound: sendFields, inbound: receiveFields });
      assertError(sync, 503, 'upstream_circuit_open');
      assert.equal(details(sync).stage, 'outbound');
      assert.equal(sync.headers['retry-after'], '30', 'sync keeps Retry-After');
      const syncInbound = await execute(id, { operation: 'sync', inbound: receiveFields });
      assertError(syncInbound, 503, 'upstream_circuit_open');
      assert.equal(syncInbound.headers['retry-after'], '30', 'an inbound-only sync too');
      assert.equal((await execute(id, c.receive)).headers['retry-after'], '30');
      assert.equal(up.requests, 5, 'none of them sent anything');
      const record = await latestRecord(id);
      assert.deepEqual([record.error_code, record.http_status, record.attempts], ['upstream_circuit_open', 503, 0]);

      // test goes through, reports the breaker, and changes nothing in it.
      const tested = await execute(id, { operation: 'test' });
      assert.equal(up.requests, 6, 'test reached the upstream');
      const testDetails = tested.statusCode === 200 ? assertOk(tested).details : details(tested);
      assert.equal(testDetails.circuit, 'open');
      assert.equal(await circuitOf(id), 'open');

      // Part way through the 30 s, Retry-After counts down; past them, one trial goes through and its success closes.
      clock += 20_000;
      assert.equal((await execute(id, c.receive)).headers['retry-after'], '10');
      clock += 10_000;
      assert.equal(await circuitOf(id), 'half_open');
      failing = false;
      assert.equal((await execute(id, c.receive)).statusCode, 200);
      assert.equal(await circuitOf(id), 'closed');
      assert.equal((await execute(id, c.receive)).statusCode, 200);
    });

    test('a failed trial opens it for another 30 s', async () => {
      const up = await upstream(['unavailable']);
      const id = await integration(c, up.url, { retry: { max_attempts: 1 } });
      for (let i = 0; i < 5; i++) await execute(id, c.receive);
      clock += 30_000;
      assertError(await execute(id, c.receive), 502, 'upstream_http_error');
      assert.equal(up.requests, 6, 'the trial went through');
      const refused = await execute(id, c.receive);
      assertError(refused, 503, 'upstream_circuit_open');
      assert.equal(refused.headers['retry-after'], '30');
      assert.equal(up.requests, 6);
    });

    test('a call counts once, after its retries; answers that are not outages start the count over', async () => {
      // Each call fails 3 tries (503): 4 such calls leave it closed, an upstream 400 resets the count, 4 more still closed.
      let answer: Behaviour = 'unavailable';
      const up = await upstream(() => answer);
      const id = await integration(c, up.url, { retry: quick });
      for (let i = 0; i < 4; i++) await execute(id, c.receive);
      assert.equal(up.requests, 12);
      assert.equal(await circuitOf(id), 'closed');
      answer = { status: 400, body: 'bad request' };
      assertError(await execute(id, c.receive), 502, 'upstream_http_error');
      answer = 'unavailable';
      for (let i = 0; i < 4; i++) await execute(id, c.receive);
      assert.equal(await circuitOf(id), 'closed');
      await execute(id, c.receive);
      assert.equal(await circuitOf(id), 'open');
    });

    test('a call refused by its own checks never counts; changing the integration closes its breaker', async () => {
      const up = await upstream(['unavailable']);
      const id = await integration(c, up.url, { retry: { max_attempts: 1 } });
      for (let i = 0; i < 4; i++) await execute(id, c.receive);
      for (let i = 0; i < 3; i++) assert.equal((await execute(id, { operation: 'receive' })).statusCode, 400);
      await execute(id, c.receive);
      assert.equal(await circuitOf(id), 'open');
      const patched = await h.call(auth, {
        method: 'PATCH',
        url: `/api/v1/integrations/${id}`,
        payload: { config: { timeout_seconds: 10 } },
      });
      assert.equal(patched.statusCode, 200, patched.body);
      assert.equal(await circuitOf(id), 'closed');
      assertError(await execute(id, c.receive), 502, 'upstream_http_error');
    });
  });
}

/** An upstream that answers after `delayMs`, counting the requests it holds at once. */
async function slowUpstream(answer: Answer, delayMs: number) {
  const seen = { inFlight: 0, maxInFlight: 0, requests: 0 };
  const server: Server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      seen.requests++;
      seen.maxInFlight = Math.max(seen.maxInFlight, ++seen.inFlight);
      setTimeout(() => {
        seen.inFlight--;
        res.writeHead(answer.status, answer.headers).end(answer.body);
      }, delayMs);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  upstreams.push({
    close: () => {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  });
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen };
}

describe('max_concurrency', () => {
  const c = connectors[0];

  test('a synchronous call over the limit waits 1 s for a slot, then 429 integration_concurrency, not recorded', async () => {
    const up = await upstream(['hang']);
    const id = await integration(c, up.url, { retry: { max_attempts: 1 }, max_concurrency: 1, timeout_seconds: 30 });
    const holding = execute(id, c.receive);
    await until(() => up.requests === 1, 'the first call holds the slot');
    const refusals = await metric('ix_integration_concurrency_full_total', { connector: c.connector, outcome: 'refused' });
    const started = performance.now();
    const refused = await execute(id, c.receive);
    assert.ok(performance.now() - started >= 990, 'it waited for a slot');
    const error = assertError(refused, 429, 'rate_limited');
    assert.deepEqual(error.details, { reason: 'integration_concurrency', limit: 1 });
    assert.equal(refused.headers['retry-after'], '1');
    assert.equal(up.requests, 1);
    assert.equal(
      await metric('ix_integration_concurrency_full_total', { connector: c.connector, outcome: 'refused' }),
      refusals + 1,
    );
    await up.close();
    await holding;
    const list = body(await h.call(auth, { method: 'GET', url: `/api/v1/executions?integration_id=${id}` })).data;
    assert.equal(list.length, 1, 'the refused call never began, so it has no record');
  });

  test('a call that finds a slot within the second goes through', async () => {
    const up = await slowUpstream(c.ok, 300);
    const id = await integration(c, up.url, { max_concurrency: 1 });
    const answers = await Promise.all([execute(id, c.receive), execute(id, c.receive)]);
    assert.deepEqual(
      answers.map((a) => a.statusCode),
      [200, 200],
    );
    assert.equal(up.seen.maxInFlight, 1);
  });

  test('async executions over the limit wait in the queue: all run, never more than the limit at once', async () => {
    const up = await slowUpstream(c.ok, 100);
    const id = await integration(c, up.url, { max_concurrency: 2 });
    const deferred = await metric('ix_integration_concurrency_full_total', { connector: c.connector, outcome: 'deferred' });
    const ids: string[] = [];
    for (let i = 0; i < 6; i++) {
      const accepted = await execute(id, c.receive, { prefer: 'respond-async' });
      assert.equal(accepted.statusCode, 202, accepted.body);
      ids.push(body(accepted).data.execution_id);
    }
    for (const executionId of ids) {
      await until(async () => {
        const res = await h.call(auth, { method: 'GET', url: `/api/v1/executions/${executionId}` });
        return body(res).data.status === 'succeeded';
      }, `${executionId} succeeded`);
    }
    assert.equal(up.seen.requests, 6);
    assert.ok(up.seen.maxInFlight <= 2, `at most 2 at once (saw ${up.seen.maxInFlight})`);
    const deferredNow = await metric('ix_integration_concurrency_full_total', { connector: c.connector, outcome: 'deferred' });
    assert.ok(deferredNow > deferred, 'some waited in the queue');
  });
});
