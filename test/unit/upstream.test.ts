import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { type AddressInfo, createServer as createTcpServer, type Server, type Socket } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { gzipSync } from 'node:zlib';
import type { Agent } from 'undici';
import { ApiError } from '../../src/core/errors.ts';
import { createEgressDispatcher } from '../../src/egress/dispatcher.ts';
import { createEgressPolicy } from '../../src/egress/policy.ts';
import { redactUrl, sendUpstream, type UpstreamRequest } from '../../src/transport/upstream.ts';
import { gzipBomb } from '../support/gzip-bomb.ts';

const MiB = 1024 * 1024;
const TOKEN = 'Bearer s3cret-token-value';

/** A server on 127.0.0.1 that runs `handle` for each request; closes its connections when closed. */
async function httpServer(handle: (req: IncomingMessage, res: ServerResponse) => void) {
  const server = createServer(handle);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** A raw TCP server on 127.0.0.1, for answers no HTTP server would give. */
async function tcpServer(handle: (socket: Socket) => void) {
  const sockets = new Set<Socket>();
  const server: Server = createTcpServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => {});
    socket.once('data', () => handle(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => {
      for (const socket of sockets) socket.destroy();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

async function apiError(promise: Promise<unknown>, code: string): Promise<ApiError> {
  const err = await promise.then(
    () => assert.fail(`expected ${code}, the call succeeded`),
    (e: unknown) => e,
  );
  assert.ok(err instanceof ApiError, `expected an ApiError, got ${err}`);
  assert.equal(err.code, code, err.message);
  assert.ok(!err.message.includes('s3cret') && !JSON.stringify(err.details ?? {}).includes('s3cret'), 'no secret in the error');
  return err;
}

describe('sendUpstream: the transport every connector uses', () => {
  let dispatcher: Agent;
  const cleanups: Array<() => Promise<void>> = [];

  before(() => {
    dispatcher = createEgressDispatcher(createEgressPolicy({ allowPrivate: true }));
  });
  after(async () => {
    for (const cleanup of cleanups) await cleanup();
    await dispatcher.close();
  });

  async function server(handle: (req: IncomingMessage, res: ServerResponse) => void): Promise<string> {
    const s = await httpServer(handle);
    cleanups.push(s.close);
    return s.url;
  }

  async function rawServer(handle: (socket: Socket) => void): Promise<string> {
    const s = await tcpServer(handle);
    cleanups.push(s.close);
    return s.url;
  }

  function send(url: string, overrides: Partial<UpstreamRequest> = {}) {
    return sendUpstream(dispatcher, {
      url,
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: TOKEN },
      body: '{"query":"{ ping }"}',
      timeoutMs: 2000,
      maxBodyBytes: MiB,
      ...overrides,
    });
  }

  test('a plain JSON answer, with accept-encoding: gzip always sent', async () => {
    const url = await server((req, res) => {
      let body = '';
      req.on('data', (chunk) => {
        body += chunk;
      });
      req.on('end', () => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({ method: req.method, encoding: req.headers['accept-encoding'], auth: req.headers.authorization, body }),
        );
      });
    });
    const res = await send(`${url}/graphql`, { headers: { authorization: TOKEN, 'Accept-Encoding': 'br' } });
    assert.equal(res.status, 200);
    assert.equal(res.headers['content-type'], 'application/json');
    assert.deepEqual(JSON.parse(res.body.toString()), {
      method: 'POST',
      encoding: 'gzip',
      auth: TOKEN,
      body: '{"query":"{ ping }"}',
    });
  });

  test('gzip with Content-Encoding is decompressed', async () => {
    const url = await server((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' });
      res.end(gzipSync(JSON.stringify({ data: { ping: 'pong' } })));
    });
    const res = await send(url);
    assert.deepEqual(JSON.parse(res.body.toString()), { data: { ping: 'pong' } });
  });

  test('gzip bytes without Content-Encoding are decompressed too (magic bytes 1f 8b)', async () => {
    const url = await server((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(gzipSync(JSON.stringify({ data: { ping: 'sniffed' } })));
    });
    const res = await send(url);
    assert.deepEqual(JSON.parse(res.body.toString()), { data: { ping: 'sniffed' } });
  });

  test('the magic bytes are told apart even when the first chunk holds only one of them; a one-byte body is itself', async () => {
    const gzipped = gzipSync(JSON.stringify({ data: { ping: 'split' } }));
    const split = await server((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.flushHeaders();
      // Separate writes, each its own chunk on the wire (chunked encoding), the second after the first has gone.
      res.write(gzipped.subarray(0, 1), () => setTimeout(() => res.end(gzipped.subarray(1)), 20));
    });
    assert.deepEqual(JSON.parse((await send(split)).body.toString()), { data: { ping: 'split' } });
    const oneByte = await server((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end('\x1f');
    });
    assert.deepEqual([...(await send(oneByte)).body], [0x1f]);
  });

  test('corrupt or truncated gzip is upstream_invalid_response', async () => {
    const corrupt = await server((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(Buffer.concat([Buffer.from([0x1f, 0x8b]), Buffer.from('this is not deflate data at all')]));
    });
    await apiError(send(corrupt), 'upstream_invalid_response');
    const truncated = await server((_req, res) => {
      res.writeHead(200, { 'content-encoding': 'gzip' });
      res.end(gzipSync('x'.repeat(10_000)).subarray(0, 20));
    });
    const err = await apiError(send(truncated), 'upstream_invalid_response');
    assert.equal(err.status, 502);
  });

  test('a gzip bomb stops at the cap: upstream_response_too_large, memory far below the inflated size', async () => {
    const bomb = await gzipBomb(200);
    assert.ok(bomb.length < 512 * 1024, `the bomb is ${bomb.length} bytes compressed`);
    const url = await server((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' });
      res.end(bomb);
    });
    const rssBefore = process.memoryUsage().rss;
    let peak = rssBefore;
    const sampler = setInterval(() => {
      peak = Math.max(peak, process.memoryUsage().rss);
    }, 2);
    try {
      const err = await apiError(send(url), 'upstream_response_too_large');
      assert.deepEqual(err.details, { limit_bytes: MiB });
    } finally {
      clearInterval(sampler);
    }
    // maxRSS is the process's true peak (KiB), so a short spike between samples is caught too.
    peak = Math.max(peak, process.resourceUsage().maxRSS * 1024);
    const growth = peak - rssBefore;
    assert.ok(growth < 48 * MiB, `rss grew by ${(growth / MiB).toFixed(1)} MiB while refusing a 200 MiB bomb`);
  });

  test('an uncompressed body over the cap is upstream_response_too_large', async () => {
    const url = await server((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      res.end(Buffer.alloc(MiB + 1, 0x61));
    });
    const err = await apiError(send(url), 'upstream_response_too_large');
    assert.equal(err.status, 502);
    assert.deepEqual(err.details, { limit_bytes: MiB });
    const exact = await send(url, { maxBodyBytes: MiB + 1 });
    assert.equal(exact.body.length, MiB + 1);
  });

  test('a connection reset mid-response is upstream_unreachable, cause reset', async () => {
    const url = await rawServer((socket) => {
      socket.write('HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"data":');
      setTimeout(() => socket.resetAndDestroy(), 20);
    });
    const err = await apiError(send(url), 'upstream_unreachable');
    assert.deepEqual(err.details, { cause: 'reset' });
  });

  test('a socket closed mid-response ("other side closed") is upstream_unreachable, cause reset', async () => {
    const url = await rawServer((socket) => {
      socket.end('HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"data":');
    });
    const err = await apiError(send(url), 'upstream_unreachable');
    assert.deepEqual(err.details, { cause: 'reset' });
  });

  test('an answer that is not HTTP is upstream_invalid_response', async () => {
    const url = await rawServer((socket) => {
      socket.end('SSH-2.0-OpenSSH_9.6\r\n\r\n');
    });
    await apiError(send(url), 'upstream_invalid_response');
  });

  test('a TLS failure is upstream_unreachable, cause tls', async () => {
    // https:// to a port that speaks plain HTTP: the handshake fails on the first record.
    const url = await rawServer((socket) => {
      socket.end('HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n');
    });
    const err = await apiError(send(url.replace('http://', 'https://')), 'upstream_unreachable');
    // docs/security.md#tls: the OpenSSL code, and a message that names the fix.
    assert.deepEqual(err.details, { cause: 'tls', tls_error: 'ERR_SSL_WRONG_VERSION_NUMBER' });
    assert.match(err.message, /scheme \(http or https\) and port/);
  });

  test('a URL that is not http(s) is integration_misconfigured', async () => {
    await apiError(send('ftp://127.0.0.1/x'), 'integration_misconfigured');
    await apiError(send('not a url'), 'integration_misconfigured');
  });

  test('a refused port is upstream_unreachable, cause refused; credentials in the URL stay out of the error', async () => {
    const closed = await httpServer(() => {});
    await closed.close();
    const err = await apiError(send(closed.url.replace('http://', 'http://bob:s3cret@')), 'upstream_unreachable');
    assert.deepEqual(err.details, { cause: 'refused' });
    assert.match(err.message, /127\.0\.0\.1/);
  });

  test('an unresolvable host is upstream_unreachable, cause dns', async () => {
    const err = await apiError(send('http://nonexistent.invalid/graphql'), 'upstream_unreachable');
    assert.deepEqual(err.details, { cause: 'dns' });
    assert.match(err.message, /nonexistent\.invalid/);
  });

  test('an address refused by the egress policy is egress_denied (422) naming the host', async () => {
    const err = await apiError(send('http://169.254.169.254/latest/meta-data/'), 'egress_denied');
    assert.equal(err.status, 422);
    assert.deepEqual(err.details, { host: '169.254.169.254', address: '169.254.169.254' });
    assert.match(err.message, /169\.254\.169\.254/);
  });

  test('a server that answers after the timeout is upstream_timeout', async () => {
    const url = await server((_req, res) => {
      // Far later than any scheduling delay: the call returning with a timeout proves it did not wait for this.
      setTimeout(() => res.end('{}'), 60_000).unref();
    });
    const err = await apiError(send(url, { timeoutMs: 300 }), 'upstream_timeout');
    assert.equal(err.status, 504);
    assert.deepEqual(err.details, { timeout_seconds: 0.3 });
  });

  test('a server that sends headers and then stalls the body is upstream_timeout', async () => {
    const url = await server((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"data":');
    });
    const err = await apiError(send(url, { timeoutMs: 300 }), 'upstream_timeout');
    assert.deepEqual(err.details, { timeout_seconds: 0.3 });
  });

  test('a body trickling in past the deadline is upstream_timeout: one deadline, not one per chunk', async () => {
    const url = await server((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      const drip = setInterval(() => res.write(' '), 50);
      res.on('close', () => clearInterval(drip));
    });
    await apiError(send(url, { timeoutMs: 400 }), 'upstream_timeout');
  });

  test('non-2xx answers are returned as they are, gzip included', async () => {
    const url = await server((req, res) => {
      if (req.url === '/gone') {
        res.writeHead(404, { 'content-type': 'text/plain', 'content-encoding': 'gzip' }).end(gzipSync('no such thing'));
        return;
      }
      res.writeHead(503, { 'content-type': 'application/json', 'retry-after': '5' }).end('{"error":"busy"}');
    });
    const busy = await send(url, { method: 'GET', body: undefined });
    assert.equal(busy.status, 503);
    assert.equal(busy.headers['retry-after'], '5');
    assert.equal(busy.body.toString(), '{"error":"busy"}');
    const gone = await send(`${url}/gone`, { method: 'GET', body: undefined });
    assert.equal(gone.status, 404);
    assert.equal(gone.body.toString(), 'no such thing');
  });

  test('an empty body is an empty buffer, even when it claims to be gzip', async () => {
    const url = await server((_req, res) => {
      res.writeHead(204, { 'content-encoding': 'gzip' }).end();
    });
    const res = await send(url);
    assert.equal(res.status, 204);
    assert.equal(res.body.length, 0);
  });
});

describe('redactUrl', () => {
  test('removes user:password and keeps the rest', () => {
    assert.equal(redactUrl('https://bob:s3cret@crm.example.com/api?x=1#f'), 'https://crm.example.com/api?x=1#f');
    assert.equal(redactUrl('https://token@crm.example.com/graphql'), 'https://crm.example.com/graphql');
    assert.equal(redactUrl('https://crm.example.com/graphql'), 'https://crm.example.com/graphql');
    assert.equal(redactUrl('http://u:p%40ss@[::1]:8080/x'), 'http://[::1]:8080/x');
  });

  test('redacts even what the URL parser refuses', () => {
    assert.equal(redactUrl('https://bob:s3cret@bad host/x'), 'https://bad host/x');
  });
});
