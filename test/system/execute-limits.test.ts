import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { Pool } from 'undici';
import { cliSource } from '../../src/audit/audit-log.ts';
import { createApiKey } from '../../src/auth/key-service.ts';
import { requestFingerprint } from '../../src/http/fingerprint.ts';
import { migrate, openStorage } from '../../src/storage/database.ts';
import { insertTenant } from '../../src/storage/tenants.ts';
import { assertError, assertGraphqlErrors, type ErrorPayload } from '../support/assertions.ts';
import { type Auth, body, type Harness, harness, noSchemaCheck, twoTenants } from '../support/harness.ts';
import { heldUpstream, pagedUpstream, residentMemory } from '../support/limit-upstreams.ts';
import { onPostgres } from '../support/postgres.ts';
import { type Json, killAll, startServer, tempDatabase } from '../support/processes.ts';
import { httpUpstream, type RawUpstream } from '../support/raw-upstream.ts';
import { until } from '../support/until.ts';

/**
 * What one execute may cost (docs/limits.md#upstreams): the bytes of all its upstream answers together, its whole duration, the
 * executes one tenant may have running at once; and what an execute must never do whatever the upstream answers:
 * echo a secret, take an upstream's `message_count` for its own, overflow the stack on a big page or a deep body.
 */

after(killAll);

const MiB = 1024 * 1024;

const paginated = (maxPages: number) => ({
  operation: 'receive',
  query: 'query ($after: String) { items(after: $after) { pageInfo { hasNextPage endCursor } nodes { id } } }',
  paginate: { max_pages: maxPages },
});
const receiveItems = { operation: 'receive', query: '{ items { id } }' };

/** A harness with tenants `acme` and `globex`, each with a key that may run integrations and read executions. */
async function setUp(env: Record<string, string> = {}): Promise<{ h: Harness; acme: Auth; globex: Auth }> {
  const h = await harness(env);
  return { h, ...(await twoTenants(h, ['integrations.*', 'executions.read'])) };
}

async function put(h: Harness, auth: Auth, id: string, connector: string, config: Record<string, unknown>): Promise<void> {
  const checked = connector === 'graphql-1.0.0' ? { ...noSchemaCheck, ...config } : config;
  const res = await h.call(auth, { method: 'PUT', url: `/api/v1/integrations/${id}`, payload: { connector, config: checked } });
  assert.ok(res.statusCode === 201 || res.statusCode === 200, res.body);
}

function execute(h: Harness, auth: Auth, id: string, payload: object, headers: Record<string, string> = {}) {
  return h.call(auth, { method: 'POST', url: `/api/v1/integrations/${id}/execute`, headers, payload });
}

/** The execution recorded for an execute answer (found by its request id), as GET /executions/{id} shows it. */
async function recorded(h: Harness, auth: Auth, res: LightMyRequestResponse): Promise<Json> {
  const list = await h.call(auth, { method: 'GET', url: '/api/v1/executions?limit=100' });
  assert.equal(list.statusCode, 200, list.body);
  const row = body(list).data.find((e: Json) => e.request_id === res.headers['x-request-id']);
  assert.ok(row, `an execution with request_id ${res.headers['x-request-id']}`);
  const one = await h.call(auth, { method: 'GET', url: `/api/v1/executions/${row.id}` });
  assert.equal(one.statusCode, 200, one.body);
  return body(one).data;
}

/** An upstream answering every request with one GraphQL item padded to about `bytes` bytes. */
function paddedUpstream(bytes: number): Promise<RawUpstream> {
  const answer = JSON.stringify({ data: { items: [{ id: '1', pad: 'x'.repeat(bytes) }] } });
  return httpUpstream((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' }).end(answer);
  });
}

function assertTooLarge(error: ErrorPayload | Json, limit: number): void {
  assert.equal(error.code, 'upstream_response_too_large', JSON.stringify(error));
  assert.equal(error.details?.limit_bytes, limit, JSON.stringify(error.details));
  assert.equal(error.details?.scope, 'execute', JSON.stringify(error.details));
}

describe('the bytes of one execute, all its requests together (IX_EXECUTE_MAX_BYTES)', () => {
  let h: Harness;
  let acme: Auth;
  let small: Harness;
  let smallAcme: Auth;
  let pages: Awaited<ReturnType<typeof pagedUpstream>>;
  let padded40k: RawUpstream;
  let padded60k: RawUpstream;
  let pages30k: Awaited<ReturnType<typeof pagedUpstream>>;

  before(async () => {
    ({ h, acme } = await setUp());
    ({ h: small, acme: smallAcme } = await setUp({ IX_EXECUTE_MAX_BYTES: '100000' }));
    [pages, padded40k, padded60k, pages30k] = await Promise.all([
      pagedUpstream({ pageBytes: 9_000_000 }),
      paddedUpstream(40_000),
      paddedUpstream(60_000),
      pagedUpstream({ pageBytes: 30_000 }),
    ]);
    await put(h, acme, 'pages', 'graphql-1.0.0', { base_url: pages.url });
    await put(small, smallAcme, 'p40', 'graphql-1.0.0', { base_url: padded40k.url });
    await put(small, smallAcme, 'p60', 'graphql-1.0.0', { base_url: padded60k.url });
    await put(small, smallAcme, 'pages', 'graphql-1.0.0', { base_url: pages30k.url });
  });
  after(async () => {
    for (const upstream of [pages, padded40k, padded60k, pages30k]) await upstream?.close();
    await h?.close();
    await small?.close();
  });

  test('pages of 9 MB that never end stop at 32 MiB: 502 upstream_response_too_large, limit_bytes 33554432, 4 requests', async () => {
    const res = await execute(h, acme, 'pages', paginated(100));
    assertTooLarge(assertError(res, 502, 'upstream_response_too_large'), 32 * MiB);
    // Three pages (27 MB) fit; the fourth is cut where the 32 MiB run out. Not 100 pages, not 900 MB.
    assert.equal(pages.requests, 4, `the upstream received ${pages.requests} requests`);
    const execution = await recorded(h, acme, res);
    assert.equal(execution.error_code, 'upstream_response_too_large');
    assert.equal(execution.http_status, 502);
  });

  test('pages add up: three pages of 30 KB fit 100000 bytes, the fourth does not', async () => {
    const before = pages30k.requests;
    const res = await execute(small, smallAcme, 'pages', paginated(100));
    assertTooLarge(assertError(res, 502, 'upstream_response_too_large'), 100_000);
    assert.equal(pages30k.requests - before, 4);
  });

  test('sync parts add up: 60 KB outbound + 60 KB inbound is over 100000 bytes, 502 at the inbound stage', async () => {
    const before = padded60k.requests;
    const res = await execute(small, smallAcme, 'p60', {
      operation: 'sync',
      outbound: { mutation: 'mutation { items { id } }' },
      inbound: { query: '{ items { id } }' },
    });
    const error = assertError(res, 502, 'upstream_response_too_large');
    assertTooLarge(error, 100_000);
    assert.equal(error.details?.stage, 'inbound');
    assert.equal(padded60k.requests - before, 2);
  });

  test('one part alone is within the limit: the limit is per execute, not per integration or process', async () => {
    for (let i = 0; i < 3; i++) {
      const res = await execute(small, smallAcme, 'p60', receiveItems);
      assert.equal(res.statusCode, 200, res.body);
      assert.equal(body(res).data.message_count, 1);
    }
  });

  test('batch entries add up: two 40 KB answers fit, the third is over; once spent, later entries send nothing', async () => {
    const before = padded40k.requests;
    const res = await execute(small, smallAcme, 'p40', {
      operation: 'batch',
      operations: [receiveItems, receiveItems, receiveItems, receiveItems, receiveItems],
    });
    assert.equal(res.statusCode, 200, res.body);
    const data = body(res).data;
    assert.deepEqual(
      data.results.map((r: Json) => r.success),
      [true, true, false, false, false],
    );
    assert.equal(data.message_count, 2);
    assert.equal(data.succeeded, 2);
    assert.equal(data.failed, 3);
    for (const result of data.results.slice(2)) assertTooLarge(result.error, 100_000);
    // The third entry read what was left of the 100000 bytes and more: the budget is spent, and the upstream must
    // not be asked again (each further entry would otherwise read up to what is left, again and again).
    assert.equal(padded40k.requests - before, 3, 'requests sent for the batch');
  });
});

describe('the whole-execute deadline (IX_EXECUTE_DEADLINE_SECONDS)', () => {
  let h: Harness;
  let acme: Auth;
  let slow: Awaited<ReturnType<typeof pagedUpstream>>;
  let slowOnce: Awaited<ReturnType<typeof pagedUpstream>>;

  before(async () => {
    ({ h, acme } = await setUp({ IX_EXECUTE_DEADLINE_SECONDS: '2' }));
    [slow, slowOnce] = await Promise.all([
      pagedUpstream({ pageBytes: 2_000, delayMs: 800 }),
      pagedUpstream({ pageBytes: 2_000, delayMs: 800, hasNextPage: false }),
    ]);
    await put(h, acme, 'slow', 'graphql-1.0.0', { base_url: slow.url, timeout_seconds: 30 });
    await put(h, acme, 'slow-once', 'graphql-1.0.0', { base_url: slowOnce.url, timeout_seconds: 30 });
  });
  after(async () => {
    await slow?.close();
    await slowOnce?.close();
    await h?.close();
  });

  test('pages of 0.8 s each, 10 pages allowed, 2 s deadline: 504 upstream_timeout, scope execute, after ≥ 2 s', async () => {
    const before = slow.requests;
    const started = performance.now();
    const res = await execute(h, acme, 'slow', paginated(10));
    const elapsed = performance.now() - started;
    const error = assertError(res, 504, 'upstream_timeout');
    assert.equal(error.details?.scope, 'execute');
    assert.ok(elapsed >= 1950, `answered after ${Math.round(elapsed)} ms`);
    // Two pages arrive in time, the third is cut by the deadline; no retry after it, no fourth page.
    assert.ok(slow.requests - before <= 4, `the upstream received ${slow.requests - before} requests`);
    const execution = await recorded(h, acme, res);
    assert.equal(execution.error_code, 'upstream_timeout');
    assert.equal(execution.http_status, 504);
  });

  test('a batch of slow entries: entries past the deadline fail with scope execute and send nothing', async () => {
    const before = slowOnce.requests;
    const res = await execute(h, acme, 'slow-once', { operation: 'batch', operations: Array(10).fill(receiveItems) });
    assert.equal(res.statusCode, 200, res.body);
    const { results, succeeded } = body(res).data;
    assert.ok(succeeded <= 2, `${succeeded} entries succeeded`);
    for (const result of results.slice(succeeded)) {
      assert.equal(result.error.code, 'upstream_timeout', JSON.stringify(result));
      assert.equal(result.error.details.scope, 'execute');
    }
    assert.ok(slowOnce.requests - before <= 4, `the upstream received ${slowOnce.requests - before} requests`);
  });

  test('one slow page within the deadline still answers 200', async () => {
    const res = await execute(h, acme, 'slow-once', paginated(10));
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(body(res).data.pages, 1);
  });
});

describe('executes running at once for one tenant (IX_TENANT_CONCURRENCY)', () => {
  test('limit 3: a 4th is 429 rate_limited, reason concurrency, Retry-After 1; another tenant still runs', async (t) => {
    const { h, acme, globex } = await setUp({ IX_TENANT_CONCURRENCY: '3' });
    const held = await heldUpstream();
    t.after(async () => {
      held.release();
      await held.close();
      await h?.close();
    });
    await put(h, acme, 'held', 'graphql-1.0.0', { base_url: held.url, timeout_seconds: 60 });
    await put(h, globex, 'held', 'graphql-1.0.0', { base_url: held.url, timeout_seconds: 60 });

    // Executes that fail (unknown integration, invalid body) give their slot back.
    for (let i = 0; i < 4; i++) {
      assertError(await execute(h, acme, 'missing', receiveItems), 404, 'not_found');
      assertError(await execute(h, acme, 'held', { operation: 'receive', query: '{' }), 400, 'validation_failed');
    }
    const running = [1, 2, 3].map(() => execute(h, acme, 'held', receiveItems));
    await until(
      () => held.held() === 3,
      () => `3 requests held upstream (${held.held()})`,
    );
    const refused = await execute(h, acme, 'held', receiveItems);
    const error = assertError(refused, 429, 'rate_limited');
    assert.equal(error.details?.reason, 'concurrency');
    assert.equal(refused.headers['retry-after'], '1');

    // Another tenant's execute is not refused: it reaches the upstream too.
    const other = execute(h, globex, 'held', receiveItems);
    await until(
      () => held.held() === 4,
      () => `globex's request held upstream (${held.held()} held)`,
    );
    held.release();
    for (const res of [...(await Promise.all(running)), await other]) assert.equal(res.statusCode, 200, res.body);

    // The slots are free again.
    const again = await execute(h, acme, 'held', receiveItems);
    assert.equal(again.statusCode, 200, again.body);
    assert.equal(held.requests, 5);
  });

  test('exactly the cap of keep-alive connections, each sending on as soon as it is answered, is never refused', async (t) => {
    // The red team saw 429s at exactly the cap when a slot was freed after the answer went out. The slot is given
    // back before the answer is written: a connection's next request must always find its own slot free again.
    for (const cap of [1, 4]) {
      const { h, acme } = await setUp({ IX_TENANT_CONCURRENCY: String(cap) });
      const fast = await httpUpstream((_req, res) => {
        res.writeHead(200, { 'content-type': 'application/json' }).end('{"data":{"items":[{"id":"1"}]}}');
      });
      await put(h, acme, 'fast', 'graphql-1.0.0', { base_url: fast.url });
      const origin = await h.app.listen({ host: '127.0.0.1', port: 0 });
      const pool = new Pool(origin, { connections: cap, pipelining: 1 });
      t.after(async () => {
        await pool.close();
        await fast.close();
        await h.close();
      });
      const statuses: number[] = [];
      await Promise.all(
        Array.from({ length: cap }, async () => {
          for (let i = 0; i < 60; i++) {
            const res = await pool.request({
              path: '/api/v1/integrations/fast/execute',
              method: 'POST',
              headers: { 'content-type': 'application/json', 'x-api-key': acme.key, 'x-tenant-id': acme.tenant },
              body: JSON.stringify(receiveItems),
            });
            await res.body.dump();
            statuses.push(res.statusCode);
          }
        }),
      );
      assert.equal(statuses.length, 60 * cap);
      assert.deepEqual(
        statuses.filter((status) => status !== 200),
        [],
        `cap ${cap}`,
      );
    }
  });

  test('default 32: 40 executes at once against a stalled upstream open at most 32 connections; 8 get 429', async (t) => {
    const { h, acme } = await setUp();
    const held = await heldUpstream();
    t.after(async () => {
      held.release();
      await held.close();
      await h?.close();
    });
    await put(h, acme, 'held', 'graphql-1.0.0', { base_url: held.url, timeout_seconds: 60 });

    const settled: LightMyRequestResponse[] = [];
    const calls = Array.from({ length: 40 }, () =>
      execute(h, acme, 'held', receiveItems).then((res) => {
        settled.push(res);
        return res;
      }),
    );
    await until(
      () => held.held() === 32 && settled.length === 8,
      () => `32 held upstream and 8 answered (${held.held()} held, ${settled.length} answered)`,
    );
    for (const res of settled) assert.equal(assertError(res, 429, 'rate_limited').details?.reason, 'concurrency');
    assert.ok(held.connections <= 32, `${held.connections} upstream connections`);
    assert.equal(held.requests, 32);
    held.release();
    const answers = await Promise.all(calls);
    assert.equal(answers.filter((res) => res.statusCode === 200).length, 32);
    assert.equal(answers.filter((res) => res.statusCode === 429).length, 8);
  });
});

describe('an Idempotency-Key claim left by a dead process (IX_EXECUTE_DEADLINE_SECONDS=5)', () => {
  let h: Harness;
  let acme: Auth;
  let upstream: RawUpstream;
  const create = (name: string) => ({ operation: 'send', mutation: `mutation { createItem(name: "${name}") { id } }` });

  before(async () => {
    ({ h, acme } = await setUp({ IX_EXECUTE_DEADLINE_SECONDS: '5' }));
    upstream = await httpUpstream((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"data":{"createItem":{"id":"1"}}}');
    });
    await put(h, acme, 'gql', 'graphql-1.0.0', { base_url: upstream.url });
  });
  after(async () => {
    await upstream?.close();
    await h?.close();
  });

  /** A pending claim as a request that died mid-way leaves it, `ageMs` old. */
  async function pendingClaim(key: string, payload: object, ageMs: number): Promise<void> {
    const now = Date.now();
    await h.storage.db
      .insertInto('idempotency_keys')
      .values({
        tenant_id: 'acme',
        key,
        fingerprint: requestFingerprint('gql', payload),
        state: 'pending',
        http_status: null,
        response: null,
        created_at: new Date(now - ageMs).toISOString(),
        expires_at: new Date(now - ageMs + 24 * 3600_000).toISOString(),
      })
      .execute();
  }

  test('a pending claim older than the deadline is free again: the request runs, then replays', async () => {
    const payload = create('after-crash');
    // A minute old: past the 5 s deadline, far short of the ten minutes the old code waited.
    await pendingClaim('dead-claim', payload, 60_000);
    const before = upstream.requests;
    const res = await execute(h, acme, 'gql', payload, { 'idempotency-key': 'dead-claim' });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.headers['idempotent-replayed'], undefined);
    assert.equal(upstream.requests - before, 1);

    const replay = await execute(h, acme, 'gql', payload, { 'idempotency-key': 'dead-claim' });
    assert.equal(replay.statusCode, 200, replay.body);
    assert.equal(replay.headers['idempotent-replayed'], 'true');
    assert.deepEqual(body(replay).data, body(res).data);
    assert.equal(upstream.requests - before, 1);
  });

  test('a pending claim younger than the deadline is still running: 409 conflict, nothing sent', async () => {
    const payload = create('still-running');
    await pendingClaim('live-claim', payload, 1_000);
    const before = upstream.requests;
    const res = await execute(h, acme, 'gql', payload, { 'idempotency-key': 'live-claim' });
    assertError(res, 409, 'conflict');
    assert.equal(upstream.requests, before);
  });
});

describe('secrets never echoed: an upstream that repeats the credential it was sent', () => {
  const token = 'tok_0123456789abcdefSECRETghijklmnopqrstuv';
  const authValue = 'soap-auth-SECRET-value-4f9e2c7d1b';
  let h: Harness;
  let acme: Auth;
  let gql: RawUpstream;
  let soap: RawUpstream;

  before(async () => {
    ({ h, acme } = await setUp());
    // Answers by the query's first field; every answer repeats the Authorization header somewhere.
    gql = await httpUpstream((req, res, raw) => {
      const auth = String(req.headers.authorization);
      const query = String(JSON.parse(raw).query);
      const json = (status: number, value: unknown) =>
        res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(value));
      if (query.includes('httpError')) res.writeHead(500, { 'content-type': 'text/plain' }).end(`denied for ${auth}`);
      else if (query.includes('straddle'))
        res.writeHead(500, { 'content-type': 'text/plain' }).end(`${'x'.repeat(1000)}${auth} and more text after it`);
      else if (query.includes('partial')) json(200, { data: { partial: [{ id: '1' }] }, errors: [{ message: `weak ${auth}` }] });
      else if (query.includes('failing')) json(200, { data: null, errors: [{ message: `refused ${auth}`, path: ['failing'] }] });
      else json(200, { data: { echo: { seen: auth, [auth]: 'as a key' } } });
    });
    // A raw-mode SOAP endpoint: a fault (HTTP 500) naming the X-Auth header, a 503 page, or an answer echoing it.
    soap = await httpUpstream((req, res, raw) => {
      const auth = String(req.headers['x-auth']);
      const xml = (status: number, content: string) =>
        res
          .writeHead(status, { 'content-type': 'text/xml' })
          .end(
            `<soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/"><soap:Body>${content}</soap:Body></soap:Envelope>`,
          );
      if (raw.includes('<Fail')) {
        xml(
          500,
          `<soap:Fault><faultcode>soap:Client</faultcode><faultstring>bad credential ${auth}</faultstring>` +
            `<detail><given>${auth}</given></detail></soap:Fault>`,
        );
      } else if (raw.includes('<Down')) {
        res.writeHead(503, { 'content-type': 'text/plain' }).end(`maintenance, your header was ${auth}`);
      } else {
        xml(200, `<EchoResponse><auth>${auth}</auth><note>got ${auth}</note></EchoResponse>`);
      }
    });
    await put(h, acme, 'gql', 'graphql-1.0.0', { base_url: gql.url, token });
    await put(h, acme, 'soap', 'soap-1.0.0', {
      endpoint_url: `${soap.url}/svc`,
      namespace: 'urn:echo',
      auth_header: 'X-Auth',
      auth_value: authValue,
    });
  });
  after(async () => {
    await gql?.close();
    await soap?.close();
    await h?.close();
  });

  function assertRedacted(res: LightMyRequestResponse, secret: string): void {
    assert.ok(!res.body.includes(secret), `the reply shows the secret: ${res.body}`);
    assert.ok(res.body.includes('[REDACTED]'), `the reply has no [REDACTED]: ${res.body}`);
  }

  test('(a) a non-2xx body: upstream_http_error whose body_excerpt has [REDACTED]', async () => {
    const res = await execute(h, acme, 'gql', { operation: 'receive', query: '{ httpError }' });
    const error = assertError(res, 502, 'upstream_http_error');
    assert.equal(error.details?.body_excerpt, 'denied for Bearer [REDACTED]');
    assertRedacted(res, token);

    const soapRes = await execute(h, acme, 'soap', { operation: 'send', method: 'Down' });
    const soapError = assertError(soapRes, 502, 'upstream_http_error');
    assert.equal(soapError.details?.body_excerpt, 'maintenance, your header was [REDACTED]');
    assertRedacted(soapRes, authValue);
    // The executions log keeps the details the caller got, redacted as they were.
    assert.deepEqual((await recorded(h, acme, res)).error_details, error.details);
    assert.deepEqual((await recorded(h, acme, soapRes)).error_details, soapError.details);
  });

  test('(a) a body_excerpt cut inside the secret shows no part of it', async () => {
    const res = await execute(h, acme, 'gql', { operation: 'receive', query: '{ straddle }' });
    const error = assertError(res, 502, 'upstream_http_error');
    const excerpt = String(error.details?.body_excerpt);
    assert.ok(excerpt.startsWith('x'.repeat(1000)), excerpt.slice(0, 20));
    // The 1 KiB cut falls 17 characters into the token: those must not be shown either.
    assert.ok(!excerpt.includes(token.slice(0, 8)), `the excerpt ends with ${JSON.stringify(excerpt.slice(1000))}`);
  });

  test('(b) GraphQL errors: partial data with errors, and 502 graphql_errors, both redacted', async () => {
    const partial = await execute(h, acme, 'gql', { operation: 'receive', query: '{ partial { id } }' });
    assert.equal(partial.statusCode, 200, partial.body);
    assert.deepEqual(body(partial).errors, [{ message: 'weak Bearer [REDACTED]' }]);
    assertRedacted(partial, token);

    const failing = await execute(h, acme, 'gql', { operation: 'receive', query: '{ failing }' });
    const error = assertGraphqlErrors(failing, [{ message: 'refused Bearer [REDACTED]', path: ['failing'] }]);
    assert.equal(error.message, 'refused Bearer [REDACTED]');
    assertRedacted(failing, token);
    const execution = await recorded(h, acme, failing);
    assert.equal(execution.error_code, 'graphql_errors');
    assert.equal(execution.error_message, 'refused Bearer [REDACTED]');
  });

  test('(c) a SOAP fault: message, fault_string and detail redacted, in the reply and the executions log', async () => {
    const res = await execute(h, acme, 'soap', { operation: 'send', method: 'Fail' });
    const error = assertError(res, 502, 'soap_fault');
    assert.equal(error.message, 'bad credential [REDACTED]');
    assert.equal(error.details?.fault_string, 'bad credential [REDACTED]');
    assert.ok(JSON.stringify(error.details?.detail).includes('[REDACTED]'), JSON.stringify(error.details));
    assertRedacted(res, authValue);
    const execution = await recorded(h, acme, res);
    assert.equal(execution.error_message, 'bad credential [REDACTED]');
    assert.deepEqual(execution.error_details, error.details);
    assert.ok(!JSON.stringify(execution).includes(authValue));
  });

  test('(d) a successful answer echoing the secret in values and keys', async () => {
    const res = await execute(h, acme, 'gql', { operation: 'send', mutation: 'mutation { echo { seen } }' });
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(body(res).data.data, { echo: { seen: 'Bearer [REDACTED]', 'Bearer [REDACTED]': 'as a key' } });
    assertRedacted(res, token);

    const soapRes = await execute(h, acme, 'soap', { operation: 'receive', method: 'Echo' });
    assert.equal(soapRes.statusCode, 200, soapRes.body);
    assert.deepEqual(body(soapRes).data, { auth: '[REDACTED]', note: 'got [REDACTED]' });
    assertRedacted(soapRes, authValue);
  });

  test('a secret holding a quote and a backslash is redacted too (it is escaped in the reply)', async () => {
    const quoted = 'q"t\\k-SECRET-1d2e3f';
    await put(h, acme, 'gql-quoted', 'graphql-1.0.0', { base_url: gql.url, token: quoted });
    const escaped = JSON.stringify(quoted).slice(1, -1);
    for (const query of ['{ httpError }', '{ failing }']) {
      const res = await execute(h, acme, 'gql-quoted', { operation: 'receive', query });
      assert.equal(res.statusCode, 502, res.body);
      assert.ok(!res.body.includes(escaped) && !res.body.includes(quoted), res.body);
      assert.ok(res.body.includes('Bearer [REDACTED]'), res.body);
    }
    const echo = await execute(h, acme, 'gql-quoted', { operation: 'send', mutation: 'mutation { echo { seen } }' });
    assert.deepEqual(body(echo).data.data, { echo: { seen: 'Bearer [REDACTED]', 'Bearer [REDACTED]': 'as a key' } });
  });

  test('an idempotent replay of a redacted failure is redacted too', async () => {
    const payload = { operation: 'send', method: 'Fail' };
    const first = await execute(h, acme, 'soap', payload, { 'idempotency-key': 'secret-replay' });
    assertError(first, 502, 'soap_fault');
    const replay = await execute(h, acme, 'soap', payload, { 'idempotency-key': 'secret-replay' });
    assertError(replay, 502, 'soap_fault');
    assert.equal(replay.headers['idempotent-replayed'], 'true');
    assertRedacted(replay, authValue);
    assert.equal(body(replay).error.details.fault_string, 'bad credential [REDACTED]');

    const gqlPayload = { operation: 'receive', query: '{ failing }' };
    await execute(h, acme, 'gql', gqlPayload, { 'idempotency-key': 'secret-replay-gql' });
    const gqlReplay = await execute(h, acme, 'gql', gqlPayload, { 'idempotency-key': 'secret-replay-gql' });
    assert.equal(gqlReplay.headers['idempotent-replayed'], 'true');
    assertRedacted(gqlReplay, token);
  });
});

describe('counts and sizes the upstream cannot bend', () => {
  let h: Harness;
  let acme: Auth;
  let soap: RawUpstream;
  let wide: RawUpstream;
  let deepTarget: RawUpstream;

  before(async () => {
    ({ h, acme } = await setUp());
    soap = await httpUpstream((_req, res) => {
      res
        .writeHead(200, { 'content-type': 'text/xml' })
        .end(
          '<soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/"><soap:Body>' +
            '<CountResponse><message_count>999</message_count><ok>yes</ok></CountResponse></soap:Body></soap:Envelope>',
        );
    });
    // Page 1: 150,000 records and a next page; page 2: none, the last.
    const first = JSON.stringify({
      data: {
        items: {
          pageInfo: { hasNextPage: true, endCursor: 'c1' },
          nodes: Array.from({ length: 150_000 }, (_, i) => ({ id: i })),
        },
      },
    });
    const last = JSON.stringify({ data: { items: { pageInfo: { hasNextPage: false, endCursor: 'c2' }, nodes: [] } } });
    wide = await httpUpstream((_req, res, raw) => {
      const after = JSON.parse(raw).variables?.after;
      res.writeHead(200, { 'content-type': 'application/json' }).end(after === 'c1' ? last : first);
    });
    deepTarget = await httpUpstream((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"data":{"items":[]}}');
    });
    await put(h, acme, 'soap', 'soap-1.0.0', { endpoint_url: `${soap.url}/svc`, namespace: 'urn:count' });
    await put(h, acme, 'wide', 'graphql-1.0.0', { base_url: wide.url });
    await put(h, acme, 'deep-gql', 'graphql-1.0.0', { base_url: deepTarget.url });
    await put(h, acme, 'deep-soap', 'soap-1.0.0', { endpoint_url: `${deepTarget.url}/svc`, namespace: 'urn:deep' });
  });
  after(async () => {
    for (const upstream of [soap, wide, deepTarget]) await upstream?.close();
    await h?.close();
  });

  test('a SOAP batch whose results hold a message_count element counts 1 per succeeded entry', async () => {
    const entry = { operation: 'send', data: { method: 'Count' } };
    const res = await execute(h, acme, 'soap', { operation: 'batch', operations: [entry, entry, entry] });
    assert.equal(res.statusCode, 200, res.body);
    const data = body(res).data;
    assert.equal(data.message_count, 3);
    assert.equal(data.succeeded, 3);
    for (const result of data.results) assert.deepEqual(result.data, { message_count: '999', ok: 'yes' });

    const sync = await execute(h, acme, 'soap', {
      operation: 'sync',
      outbound: { method: 'Count' },
      inbound: { method: 'Count' },
    });
    assert.equal(sync.statusCode, 200, sync.body);
    assert.equal(body(sync).data.message_count, 2);
    const execution = await recorded(h, acme, res);
    assert.equal(execution.message_count, 3);
  });

  test('a page of 150,000 records with paginate: 200 with every record (no stack overflow)', async () => {
    const res = await execute(h, acme, 'wide', paginated(10));
    assert.equal(res.statusCode, 200, res.body.slice(0, 500));
    const data = body(res).data;
    assert.equal(data.message_count, 150_000);
    assert.equal(data.data.length, 150_000);
    assert.equal(data.pages, 2);
    assert.deepEqual([data.data[0], data.data[149_999]], [{ id: 0 }, { id: 149_999 }]);
    assert.equal(wide.requests, 2);
  });

  /** JSON text of `depth` objects (or arrays) nested in one another. */
  const nested = (depth: number, array = false) =>
    array ? `${'['.repeat(depth)}1${']'.repeat(depth)}` : `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;

  /** The path of the first container past 64 levels, under `at` (a container at level `at.length + 1`). */
  const cutPath = (at: string[], segment: string) => [...at, ...Array(65 - (at.length + 1)).fill(segment)].join('.');

  for (const [name, integration, text, path] of [
    [
      'variables',
      'deep-gql',
      `{"operation":"receive","query":"{ items { id } }","variables":${nested(5000)}}`,
      cutPath(['variables'], 'a'),
    ],
    [
      'variables (arrays)',
      'deep-gql',
      `{"operation":"receive","query":"{ items { id } }","variables":{"list":${nested(5000, true)}}}`,
      cutPath(['variables', 'list'], '0'),
    ],
    ['params', 'deep-soap', `{"operation":"send","method":"Put","params":${nested(5000)}}`, cutPath(['params'], 'a')],
    [
      'soap_headers',
      'deep-soap',
      `{"operation":"send","method":"Put","soap_headers":${nested(5000)}}`,
      cutPath(['soap_headers'], 'a'),
    ],
    [
      'a batch entry',
      'deep-gql',
      `{"operation":"batch","operations":[{"operation":"receive","data":{"query":"{ items { id } }","variables":${nested(5000)}}}]}`,
      cutPath(['operations', '0', 'data', 'variables'], 'a'),
    ],
  ] as const) {
    test(`${name} nested 5,000 levels: 400 validation_failed at the cut, nothing sent`, async () => {
      const before = deepTarget.requests;
      const res = await h.call(acme, {
        method: 'POST',
        url: `/api/v1/integrations/${integration}/execute`,
        headers: { 'content-type': 'application/json' },
        payload: text,
      });
      const error = assertError(res, 400, 'validation_failed');
      assert.equal(error.details?.issues?.length, 1);
      assert.equal(error.details?.issues?.[0].path, path);
      assert.equal(deepTarget.requests, before);
    });
  }
});

/**
 * A real server process (SQLite) under many executes whose upstream never stops paginating with 9 MB pages: each
 * execute may hold at most 32 MiB of upstream bytes, so 8 at once stay far below what the unbounded code reached
 * (1.5 GB and a crash). Once, on SQLite: what is measured is the process, not the storage.
 */
describe('memory of a server process under 8 executes at once that each hit 32 MiB', {
  skip: onPostgres() && 'storage-independent; runs on SQLite',
}, () => {
  test('8 paginated receives, then 8 batches of 100 such receives: bounded RSS, 502/200, still up', async (t) => {
    const db = tempDatabase();
    t.after(db.cleanup);
    const storage = openStorage(db.env.DATABASE_URL);
    let key: string;
    try {
      await migrate(storage);
      const tenant = { id: 'acme', name: 'Acme', type: 'production' as const };
      await insertTenant(storage.db, tenant);
      ({ key } = await createApiKey(
        storage.db,
        { ...tenant, created_at: '' },
        { scopes: ['integrations.*'] },
        100_000,
        cliSource(),
      ));
    } finally {
      await storage.close();
    }
    const server = await startServer({ ...db.env, IX_DEFAULT_RATE_LIMIT: '100000' });
    t.after(() => server.stop());
    const pages = await pagedUpstream({ pageBytes: 9_000_000 });
    t.after(() => pages.close());
    const pid = server.child.pid as number;
    const headers = { 'x-api-key': key, 'x-tenant-id': 'acme', 'content-type': 'application/json' };
    const call = async (method: string, path: string, payload: object) => {
      const res = await fetch(`${server.url}${path}`, { method, headers, body: JSON.stringify(payload) });
      return { status: res.status, body: (await res.json()) as Json };
    };
    for (const id of ['warm', ...Array.from({ length: 8 }, (_, i) => [`page-${i}`, `batch-${i}`]).flat()]) {
      const res = await call('PUT', `/api/v1/integrations/${id}`, {
        connector: 'graphql-1.0.0',
        config: { base_url: `${pages.url}/${id}`, ...noSchemaCheck },
      });
      assert.equal(res.status, 201, JSON.stringify(res.body));
    }
    // One execute end to end first (one page), so that the baseline includes the loaded code.
    const warm = await call('POST', '/api/v1/integrations/warm/execute', paginated(1));
    assert.equal(warm.status, 200, JSON.stringify(warm.body).slice(0, 300));
    const baseline = residentMemory(pid)?.rss ?? assert.fail('the server process is gone');
    const mb = (bytes: number) => `${Math.round(bytes / MiB)} MiB`;

    /**
     * Runs `calls` at once, sampling RSS every 25 ms, and reads the process's peak (VmHWM) at the end; fails, with
     * what was sampled, when the process did not live through them.
     */
    async function measured<T>(what: string, calls: Promise<T>[]): Promise<{ results: T[]; peak: number }> {
      let sampled = 0;
      let done = false;
      const sampling = (async () => {
        for (let now = residentMemory(pid); !done && now; now = residentMemory(pid)) {
          sampled = Math.max(sampled, now.rss);
          await new Promise((resolve) => setTimeout(resolve, 25));
        }
      })();
      const started = performance.now();
      const settled = await Promise.allSettled(calls);
      done = true;
      await sampling;
      const memory = residentMemory(pid);
      const seconds = ((performance.now() - started) / 1000).toFixed(1);
      t.diagnostic(
        `${what}: ${seconds} s, RSS sampled up to ${mb(sampled)}, peak ${memory ? mb(memory.peak) : '(process gone)'}`,
      );
      if (!memory || server.child.exitCode !== null || server.child.signalCode !== null) {
        assert.fail(
          `the server process died during ${what} (exit ${server.child.exitCode}, signal ${server.child.signalCode}; ` +
            `RSS sampled up to ${mb(sampled)}): ${server.stderr().slice(-500)}`,
        );
      }
      const results = settled.map((result) =>
        result.status === 'fulfilled' ? result.value : assert.fail(String(result.reason)),
      );
      return { results, peak: memory.peak };
    }

    // Each execute may read 32 MiB upstream; while its last page is read, it holds that text up to three times over
    // (the records parsed from earlier pages, the page as bytes, as text and parsed), and garbage of an earlier round
    // may not be returned yet: 8 at once stay under baseline + 8 × 32 MiB × 3 (768 MiB). Measured: 470–520 MiB after
    // the receives and 540–650 MiB after the batches, on a baseline of 220–235 MiB. The unbounded code held every
    // page of every execute (8 × 100 × 9 MB): it grew past 4.5 GB and died (SIGABRT, out of heap).
    const bound = baseline + 8 * 32 * MiB * 3;
    t.diagnostic(`baseline RSS ${mb(baseline)}, bound ${mb(bound)}`);

    const receives = await measured(
      '8 paginated receives',
      Array.from({ length: 8 }, (_, i) => call('POST', `/api/v1/integrations/page-${i}/execute`, paginated(100))),
    );
    assert.ok(receives.peak < bound, `peak RSS ${mb(receives.peak)} over ${mb(bound)}`);
    assert.equal((await fetch(`${server.url}/healthz`)).status, 200);
    for (const res of receives.results) {
      assert.equal(res.status, 502, JSON.stringify(res.body).slice(0, 500));
      assertTooLarge(res.body.error, 32 * MiB);
    }
    for (let i = 0; i < 8; i++) assert.equal(pages.byPath.get(`/page-${i}/graphql`), 4, `requests of execute ${i}`);

    const batch = { operation: 'batch', operations: Array(100).fill(paginated(100)) };
    const batches = await measured(
      '8 batches of 100 paginated receives',
      Array.from({ length: 8 }, (_, i) => call('POST', `/api/v1/integrations/batch-${i}/execute`, batch)),
    );
    const sent = Array.from({ length: 8 }, (_, i) => pages.byPath.get(`/batch-${i}/graphql`) ?? 0);
    t.diagnostic(`upstream requests per batch: ${sent.join(', ')}`);
    assert.ok(batches.peak < bound, `peak RSS ${mb(batches.peak)} over ${mb(bound)}`);
    assert.equal((await fetch(`${server.url}/healthz`)).status, 200);
    for (const res of batches.results) {
      assert.equal(res.status, 200, JSON.stringify(res.body).slice(0, 500));
      const data = res.body.data;
      assert.deepEqual([data.succeeded, data.failed, data.skipped, data.message_count], [0, 100, 0, 0]);
      for (const result of data.results) assertTooLarge(result.error, 32 * MiB);
    }
    // Entry 0 reads three pages and is cut in the fourth; the budget is then spent for every later entry.
    for (const [i, count] of sent.entries()) assert.ok(count <= 5, `batch ${i} sent ${count} upstream requests`);
  });
});
