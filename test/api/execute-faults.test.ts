import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { gzipSync } from 'node:zlib';
import type { LightMyRequestResponse } from 'fastify';
import { assertError, assertGraphqlErrors } from '../support/assertions.ts';
import { type GraphqlServer, startGraphqlServer } from '../support/graphql-server.ts';
import { gzipBomb } from '../support/gzip-bomb.ts';
import { type Auth, body, type Harness, harness, noSchemaCheck } from '../support/harness.ts';
import { closedPort, httpUpstream, type RawUpstream, tcpUpstream } from '../support/raw-upstream.ts';

const MiB = 1024 * 1024;
const receiveItems = { operation: 'receive', query: '{ items { id } }' };
const sendItem = { operation: 'send', mutation: 'mutation { addItem(id: "1") { id } }' };

/** A tenant with a key allowed to write and run integrations, on harness `h`. */
async function caller(h: Harness): Promise<Auth> {
  await h.tenant('acme');
  return h.auth('acme', ['integrations.*']);
}

async function putIntegration(h: Harness, auth: Auth, id: string, config: Record<string, unknown>): Promise<void> {
  const res = await h.call(auth, {
    method: 'PUT',
    url: `/api/v1/integrations/${id}`,
    payload: { connector: 'graphql-1.0.0', config: { ...noSchemaCheck, ...config } },
  });
  assert.ok(res.statusCode === 201 || res.statusCode === 200, res.body);
}

function execute(h: Harness, auth: Auth, id: string, payload: object): Promise<LightMyRequestResponse> {
  return h.call(auth, { method: 'POST', url: `/api/v1/integrations/${id}/execute`, payload });
}

describe('execute against misbehaving GraphQL upstreams', () => {
  let h: Harness;
  let acme: Auth;
  let good: GraphqlServer;
  const cleanups: Array<() => Promise<void>> = [];

  before(async () => {
    h = await harness({ IX_UPSTREAM_MAX_BYTES: String(MiB) });
    acme = await caller(h);
    good = await startGraphqlServer();
    await putIntegration(h, acme, 'good', { base_url: good.url });
  });
  after(async () => {
    for (const cleanup of cleanups) await cleanup();
    await good.close();
    await h.close();
  });

  /** A raw upstream registered as integration `id` (its base_url gets `/graphql` appended). */
  async function misbehaving(id: string, upstream: Promise<RawUpstream>, config: Record<string, unknown> = {}) {
    const started = await upstream;
    cleanups.push(started.close);
    await putIntegration(h, acme, id, { base_url: started.url, ...config });
    return started;
  }

  /** After a failure the service still runs a good request end to end. */
  async function assertStillAnswering(): Promise<void> {
    const res = await execute(h, acme, 'good', { operation: 'receive', query: '{ usersList { id } }' });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(body(res).data.message_count, 25);
  }

  test('gzip bytes without Content-Encoding are gunzipped: 200 with the data', async () => {
    const upstream = await misbehaving(
      'sniffed-gzip',
      httpUpstream((_req, res) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(gzipSync(JSON.stringify({ data: { items: [{ id: 'a' }, { id: 'b' }] } })));
      }),
    );
    const res = await execute(h, acme, 'sniffed-gzip', receiveItems);
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(body(res), {
      success: true,
      data: { message_count: 2, data: [{ id: 'a' }, { id: 'b' }], total_size: 2 },
    });
    assert.equal(upstream.requests, 1);
  });

  test('corrupt gzip is 502 upstream_invalid_response', async () => {
    await misbehaving(
      'corrupt-gzip',
      httpUpstream((_req, res) => {
        res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' });
        res.end(Buffer.concat([Buffer.from([0x1f, 0x8b, 0x08, 0x00]), Buffer.from('definitely not deflate data')]));
      }),
    );
    const res = await execute(h, acme, 'corrupt-gzip', receiveItems);
    assertError(res, 502, 'upstream_invalid_response');
    await assertStillAnswering();
  });

  test('a gzip bomb stops at IX_UPSTREAM_MAX_BYTES: 502 upstream_response_too_large', async () => {
    const bomb = await gzipBomb(128);
    assert.ok(bomb.length < MiB, `the bomb is ${bomb.length} bytes compressed, under the cap itself`);
    const upstream = await misbehaving(
      'bomb',
      httpUpstream((_req, res) => {
        res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' });
        res.end(bomb);
      }),
    );
    const res = await execute(h, acme, 'bomb', sendItem);
    const error = assertError(res, 502, 'upstream_response_too_large');
    assert.deepEqual(error.details, { limit_bytes: MiB, attempts: 1 });
    assert.equal(upstream.requests, 1);
    await assertStillAnswering();
  });

  test('an HTML 500 page is 502 upstream_http_error with the status and a ≤ 1 KiB excerpt cut on a character', async () => {
    // 1023 ASCII bytes, then "é" straddling byte 1024: the excerpt must stop before it.
    const head = `<!DOCTYPE html><html><head><title>500 Internal Server Error</title></head><body><h1>Oops</h1><p>`;
    const page = `${head}${'x'.repeat(1023 - head.length)}é${'y'.repeat(4000)}</p></body></html>`;
    await misbehaving(
      'html-500',
      httpUpstream((_req, res) => {
        res.writeHead(500, { 'content-type': 'text/html; charset=utf-8' }).end(page);
      }),
    );
    const res = await execute(h, acme, 'html-500', receiveItems);
    const error = assertError(res, 502, 'upstream_http_error');
    assert.deepEqual(Object.keys(error.details ?? {}).sort(), ['attempts', 'body_excerpt', 'upstream_status']);
    assert.equal(error.details?.upstream_status, 500);
    const excerpt = error.details?.body_excerpt as string;
    assert.ok(Buffer.byteLength(excerpt) <= 1024, `excerpt is ${Buffer.byteLength(excerpt)} bytes`);
    assert.equal(excerpt, page.slice(0, 1023));
    await assertStillAnswering();
  });

  test('a 200 text/html page is 502 upstream_invalid_response', async () => {
    await misbehaving(
      'html-200',
      httpUpstream((_req, res) => {
        res.writeHead(200, { 'content-type': 'text/html' }).end('<html><body>Welcome to nginx!</body></html>');
      }),
    );
    const res = await execute(h, acme, 'html-200', receiveItems);
    const error = assertError(res, 502, 'upstream_invalid_response');
    assert.equal(error.details?.upstream_status, 200);
    assert.equal(error.details?.content_type, 'text/html');
    assert.equal(error.details?.body_excerpt, '<html><body>Welcome to nginx!</body></html>');
    await assertStillAnswering();
  });

  test('a socket reset mid-response is 502 upstream_unreachable, cause reset: receive tried three times, send once', async () => {
    const resetting = () =>
      tcpUpstream((socket) => {
        socket.write('HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"data":');
        setTimeout(() => socket.resetAndDestroy(), 20);
      });
    const reads = await misbehaving('reset-receive', resetting());
    const received = await execute(h, acme, 'reset-receive', receiveItems);
    assert.deepEqual(assertError(received, 502, 'upstream_unreachable').details, { cause: 'reset', attempts: 3 });
    assert.equal(reads.requests, 3, 'a read is tried max_attempts (3) times');

    const writes = await misbehaving('reset-send', resetting());
    const sent = await execute(h, acme, 'reset-send', sendItem);
    assert.deepEqual(assertError(sent, 502, 'upstream_unreachable').details, { cause: 'reset', attempts: 1 });
    assert.equal(writes.requests, 1, 'a write that may have arrived is never retried');
    await assertStillAnswering();
  });

  test('a connection closed with no answer at all is upstream_unreachable, cause reset; an answer that is not HTTP is upstream_invalid_response', async () => {
    const hangUp = await misbehaving(
      'hang-up',
      tcpUpstream((socket) => socket.end()),
    );
    const res = await execute(h, acme, 'hang-up', receiveItems);
    assert.deepEqual(assertError(res, 502, 'upstream_unreachable').details, { cause: 'reset', attempts: 3 });
    assert.equal(hangUp.requests, 3);

    const ssh = await misbehaving(
      'not-http',
      tcpUpstream((socket) => socket.end('SSH-2.0-OpenSSH_9.6\r\n\r\n')),
    );
    assertError(await execute(h, acme, 'not-http', receiveItems), 502, 'upstream_invalid_response');
    assert.equal(ssh.requests, 1, 'an unreadable answer is not retried');
    await assertStillAnswering();
  });

  test('a refused port is 502 upstream_unreachable, cause refused', async () => {
    await putIntegration(h, acme, 'refused', { base_url: `http://127.0.0.1:${await closedPort()}` });
    const res = await execute(h, acme, 'refused', sendItem);
    const error = assertError(res, 502, 'upstream_unreachable');
    // No byte of the send left: it was tried max_attempts (3) times.
    assert.deepEqual(error.details, { cause: 'refused', attempts: 3 });
    assert.match(error.message, /127\.0\.0\.1/);
    await assertStillAnswering();
  });

  test('an unresolvable host is 502 upstream_unreachable, cause dns', async () => {
    await putIntegration(h, acme, 'dns', { base_url: 'http://nonexistent.invalid' });
    const res = await execute(h, acme, 'dns', sendItem);
    const error = assertError(res, 502, 'upstream_unreachable');
    assert.deepEqual(error.details, { cause: 'dns', attempts: 3 });
    assert.match(error.message, /nonexistent\.invalid/);
    await assertStillAnswering();
  });

  test('a server slower than timeout_seconds is 504 upstream_timeout; a send is tried once', async () => {
    const upstream = await misbehaving(
      'slow',
      httpUpstream((_req, res) => {
        // Far later than any scheduling delay: answering at all proves the timeout did not fire.
        setTimeout(() => res.end('{"data":{"addItem":{"id":"1"}}}'), 60_000).unref();
      }),
      { timeout_seconds: 1 },
    );
    const started = performance.now();
    const res = await execute(h, acme, 'slow', sendItem);
    const elapsed = performance.now() - started;
    const error = assertError(res, 504, 'upstream_timeout');
    assert.deepEqual(error.details, { timeout_seconds: 1, attempts: 1 });
    assert.equal(upstream.requests, 1);
    assert.ok(elapsed >= 950, `answered after ${Math.round(elapsed)} ms, before timeout_seconds`);
    await assertStillAnswering();
  });

  test('an upstream 401 is 502 upstream_http_error pointing at the token (which is never shown)', async () => {
    const guarded = await startGraphqlServer({ token: 'the-right-token' });
    cleanups.push(guarded.close);
    await putIntegration(h, acme, 'unauthorised', { base_url: guarded.url, token: 'a-wrong-token' });
    const res = await execute(h, acme, 'unauthorised', receiveItems);
    const error = assertError(res, 502, 'upstream_http_error');
    assert.match(error.message, /token/);
    assert.equal(error.details?.upstream_status, 401);
    assert.equal(error.details?.body_excerpt, '{"message":"Bad credentials"}');
    assert.ok(!res.body.includes('a-wrong-token'));
    assert.equal(guarded.requests[0].headers.authorization, 'Bearer a-wrong-token');
    await assertStillAnswering();
  });

  test('a stored token an HTTP header cannot carry is 422 integration_misconfigured, never a 500, and nothing is sent', async () => {
    const upstream = await misbehaving(
      'bad-token',
      httpUpstream((_req, res) => {
        res.writeHead(200, { 'content-type': 'application/json' }).end('{"data":{"items":[]}}');
      }),
    );
    for (const token of ['caf€-token', 'nul\u0000token', 'crlf\r\nx-injected: yes']) {
      const put = await h.call(acme, {
        method: 'PATCH',
        url: '/api/v1/integrations/bad-token',
        payload: { config: { token } },
      });
      // Refusing it when stored would be as good; until then it must be refused when used.
      if (put.statusCode === 400) {
        assertError(put, 400, 'validation_failed');
        continue;
      }
      assert.equal(put.statusCode, 200, put.body);
      const res = await execute(h, acme, 'bad-token', receiveItems);
      const error = assertError(res, 422, 'integration_misconfigured');
      assert.deepEqual(error.details, { header: 'authorization' });
      assert.ok(!res.body.includes(JSON.stringify(token).slice(1, -1)), 'the token is not shown');
    }
    assert.equal(upstream.connections, 0);
    await assertStillAnswering();
  });

  test('a 4xx application/graphql-response+json errors body is 502 graphql_errors with top-level errors', async () => {
    const errors = [{ message: 'Cannot query field "items" on type "Query".', locations: [{ line: 1, column: 3 }] }];
    await misbehaving(
      'graphql-400',
      httpUpstream((_req, res) => {
        res.writeHead(400, { 'content-type': 'application/graphql-response+json; charset=utf-8' });
        res.end(JSON.stringify({ errors }));
      }),
    );
    const res = await execute(h, acme, 'graphql-400', receiveItems);
    const error = assertGraphqlErrors(res, errors);
    assert.equal(error.message, 'Cannot query field "items" on type "Query".');
    assert.deepEqual(error.details, { upstream_status: 400, attempts: 1 });
    await assertStillAnswering();
  });

  test('a link-local (cloud metadata) address is 422 egress_denied before any connection', async () => {
    // timeout_seconds 1 bounds the damage should a connection ever be attempted.
    await putIntegration(h, acme, 'metadata', { base_url: 'http://169.254.169.254/', timeout_seconds: 1 });
    const res = await execute(h, acme, 'metadata', receiveItems);
    const error = assertError(res, 422, 'egress_denied');
    assert.deepEqual(error.details, { host: '169.254.169.254', address: '169.254.169.254' });
    await assertStillAnswering();
  });
});

describe('execute under the egress policy', () => {
  const upstreams: RawUpstream[] = [];
  const harnesses: Harness[] = [];

  after(async () => {
    for (const upstream of upstreams) await upstream.close();
    for (const h of harnesses) await h.close();
  });

  async function setUp(env: Record<string, string>) {
    const h = await harness(env);
    harnesses.push(h);
    const auth = await caller(h);
    const upstream = await httpUpstream((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"data":{"items":[{"id":"only"}]}}');
    });
    upstreams.push(upstream);
    await putIntegration(h, auth, 'local', { base_url: upstream.url });
    return { h, auth, upstream };
  }

  test('IX_EGRESS_ALLOW_PRIVATE=false: 127.0.0.1 is 422 egress_denied and the server sees nothing', async () => {
    const { h, auth, upstream } = await setUp({ IX_EGRESS_ALLOW_PRIVATE: 'false' });
    const res = await execute(h, auth, 'local', receiveItems);
    const error = assertError(res, 422, 'egress_denied');
    assert.deepEqual(error.details, { host: '127.0.0.1', address: '127.0.0.1' });
    assert.equal(upstream.connections, 0);
    assert.equal(upstream.requests, 0);
    // The service still answers: another request on the same app succeeds.
    const listed = await h.call(auth, { method: 'GET', url: '/api/v1/integrations/local' });
    assert.equal(listed.statusCode, 200);
  });

  test('IX_EGRESS_ALLOW_PRIVATE=false with IX_EGRESS_ALLOW=127.0.0.1 admits exactly that address', async () => {
    const { h, auth, upstream } = await setUp({ IX_EGRESS_ALLOW_PRIVATE: 'false', IX_EGRESS_ALLOW: '127.0.0.1' });
    const res = await execute(h, auth, 'local', receiveItems);
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(body(res).data, { message_count: 1, data: [{ id: 'only' }], total_size: 1 });
    assert.equal(upstream.requests, 1);
    // Another loopback address is not in the list: still refused (and nothing listens there anyway).
    await putIntegration(h, auth, 'other-loopback', { base_url: `http://127.0.0.2:${upstream.port}` });
    const other = await execute(h, auth, 'other-loopback', receiveItems);
    assert.deepEqual(assertError(other, 422, 'egress_denied').details, { host: '127.0.0.2', address: '127.0.0.2' });
  });

  test('IX_EGRESS_DENY=127.0.0.0/8 refuses loopback even with private ranges allowed', async () => {
    const { h, auth, upstream } = await setUp({ IX_EGRESS_ALLOW_PRIVATE: 'true', IX_EGRESS_DENY: '127.0.0.0/8' });
    const res = await execute(h, auth, 'local', sendItem);
    assert.deepEqual(assertError(res, 422, 'egress_denied').details, { host: '127.0.0.1', address: '127.0.0.1' });
    assert.equal(upstream.connections, 0);
    // A host name that resolves to loopback is refused the same way, after its DNS lookup.
    await putIntegration(h, auth, 'by-name', { base_url: `http://localhost:${upstream.port}` });
    const byName = await execute(h, auth, 'by-name', sendItem);
    assert.equal(assertError(byName, 422, 'egress_denied').details?.host, 'localhost');
    assert.equal(upstream.connections, 0);
  });
});
