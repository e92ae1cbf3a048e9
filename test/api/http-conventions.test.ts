import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { body, type Harness, harness } from '../support/harness.ts';

describe('HTTP conventions (docs/api.md#conventions)', () => {
  let h: Harness;
  let auth: { key: string; tenant: string };
  let base: string;

  before(async () => {
    h = await harness({ IX_BODY_LIMIT: '2048' });
    await h.tenant('acme');
    auth = { key: (await h.key('acme', ['*'])).key, tenant: 'acme' };
    base = await h.app.listen({ host: '127.0.0.1', port: 0 });
  });
  after(() => h.close());

  function assertErrorShape(res: { headers: Record<string, unknown>; body: string }, code: string): void {
    const parsed = JSON.parse(res.body);
    assert.equal(parsed.success, false);
    assert.equal(parsed.error.code, code);
    assert.equal(typeof parsed.error.message, 'string');
    assert.equal(parsed.request_id, res.headers['x-request-id']);
  }

  test('a sane X-Request-Id is echoed; an insane one is replaced', async () => {
    const echoed = await h.call(auth, { method: 'GET', url: '/api/v1/me', headers: { 'x-request-id': 'wf-123.abc' } });
    assert.equal(echoed.headers['x-request-id'], 'wf-123.abc');
    const replaced = await h.call(null, {
      method: 'GET',
      url: '/api/v1/me',
      headers: { 'x-request-id': 'bad id\u00e9<script>' },
    });
    assert.match(String(replaced.headers['x-request-id']), /^[0-9a-f-]{36}$/);
    assertErrorShape(replaced, 'missing_credentials');
  });

  test('unknown routes are 404 not_found in the error shape', async () => {
    const res = await h.call(auth, { method: 'GET', url: '/api/v1/nothing-here' });
    assert.equal(res.statusCode, 404);
    assertErrorShape(res, 'not_found');
  });

  test('a body over the limit is 413 payload_too_large', async () => {
    const res = await h.call(auth, {
      method: 'POST',
      url: '/api/v1/entities',
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify({ name: 'x'.repeat(4096) }),
    });
    assert.equal(res.statusCode, 413);
    assertErrorShape(res, 'payload_too_large');
  });

  test('a body that is not JSON is 400 invalid_json; another media type is 415', async () => {
    const broken = await h.call(auth, {
      method: 'POST',
      url: '/api/v1/entities',
      headers: { 'content-type': 'application/json' },
      payload: '{"name": ',
    });
    assert.equal(broken.statusCode, 400);
    assertErrorShape(broken, 'invalid_json');
    const text = await h.call(auth, {
      method: 'POST',
      url: '/api/v1/entities',
      headers: { 'content-type': 'text/plain' },
      payload: 'name=x',
    });
    assert.equal(text.statusCode, 415);
    assertErrorShape(text, 'unsupported_media_type');
    const form = await h.call(auth, {
      method: 'POST',
      url: '/api/v1/entities',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: 'name=x',
    });
    assertErrorShape(form, 'unsupported_media_type');
  });

  test('prototype-poisoning JSON is refused, not merged', async () => {
    const res = await h.call(auth, {
      method: 'POST',
      url: '/api/v1/entities',
      headers: { 'content-type': 'application/json' },
      payload: '{"name":"x","__proto__":{"admin":true}}',
    });
    assert.equal(res.statusCode, 400);
    assertErrorShape(res, 'invalid_json');
  });

  test('JSON bodies are typed strictly, query strings are parsed', async () => {
    const typed = await h.call(auth, { method: 'POST', url: '/api/v1/entities', payload: { name: 1 } });
    assertErrorShape(typed, 'validation_failed');
    assert.deepEqual(body(typed).error.details.issues, [{ path: 'name', message: 'must be string' }]);
    const query = await h.call(auth, { method: 'GET', url: '/api/v1/entities?limit=2' });
    assert.equal(query.statusCode, 200);
  });

  test('a malformed percent-encoding in the path is 400 bad_request', async () => {
    const res = await h.call(auth, { method: 'GET', url: '/api/v1/entities/%E0%A4%A' });
    assert.equal(res.statusCode, 400);
    assertErrorShape(res, 'bad_request');
  });

  test('oversized headers get 431 headers_too_large from a real socket', async () => {
    const url = new URL(base);
    const res = await new Promise<{ status: number; headers: Record<string, unknown>; body: string }>((resolve, reject) => {
      const req = httpRequest(
        { host: url.hostname, port: url.port, path: '/healthz', headers: { 'x-big': 'a'.repeat(20_000) } },
        (r) => {
          let text = '';
          r.on('data', (c) => {
            text += c;
          });
          r.on('end', () => resolve({ status: r.statusCode ?? 0, headers: r.headers, body: text }));
        },
      );
      req.on('error', reject);
      req.end();
    });
    assert.equal(res.status, 431);
    assertErrorShape(res, 'headers_too_large');
  });

  test('a request the HTTP parser cannot read gets 400 bad_request', async () => {
    const url = new URL(base);
    const raw = await new Promise<string>((resolve, reject) => {
      const socket = connect(Number(url.port), url.hostname, () => socket.write('THIS IS NOT HTTP\r\n\r\n'));
      let text = '';
      socket.on('data', (c) => {
        text += c;
      });
      socket.on('end', () => resolve(text));
      socket.on('error', reject);
    });
    assert.match(raw, /^HTTP\/1\.1 400 /);
    const json = JSON.parse(raw.slice(raw.indexOf('\r\n\r\n') + 4));
    assert.equal(json.error.code, 'bad_request');
    assert.match(raw, new RegExp(`X-Request-Id: ${json.request_id}`));
  });

  test('health, readiness, metrics, OpenAPI and docs need no key', async () => {
    assert.deepEqual(body(await h.call(null, { method: 'GET', url: '/healthz' })), { success: true, data: { status: 'ok' } });
    const ready = body(await h.call(null, { method: 'GET', url: '/readyz' }));
    assert.deepEqual(ready, { success: true, data: { status: 'ready', storage: h.storage.kind } });
    const metrics = await h.call(null, { method: 'GET', url: '/metrics' });
    assert.match(metrics.body, /ix_http_requests_total\{method="GET",route="\/healthz",status="200"\} 1/);
    const spec = body(await h.call(null, { method: 'GET', url: '/api/v1/openapi.json' }));
    assert.equal(spec.openapi, '3.1.0');
    assert.ok(spec.paths['/api/v1/api-keys'].post.requestBody, 'request schemas feed the document');
    assert.ok(spec.paths['/api/v1/entities/{id}'].patch);
    const docs = await h.call(null, { method: 'GET', url: '/docs/' });
    assert.equal(docs.statusCode, 200);
    assert.match(docs.body, /swagger/i);
  });
});

describe('when storage is gone', () => {
  test('an unexpected failure is a bare 500 internal_error that leaks nothing', async () => {
    const h = await harness();
    await h.tenant('acme');
    const { key } = await h.key('acme', ['*']);
    await h.storage.close();
    const res = await h.call({ key, tenant: 'acme' }, { method: 'GET', url: '/api/v1/me' });
    assert.equal(res.statusCode, 500);
    const parsed = JSON.parse(res.body);
    assert.deepEqual(parsed.error, { code: 'internal_error', message: 'Something went wrong on our side.' });
    assert.equal(parsed.request_id, res.headers['x-request-id']);
    await h.close();
  });

  test('/readyz answers 503 once storage is closed', async () => {
    const h = await harness();
    await h.storage.close();
    const res = await h.app.inject({ method: 'GET', url: '/readyz' });
    assert.equal(res.statusCode, 503);
    assert.equal(JSON.parse(res.body).data.status, 'unavailable');
    await h.close();
  });
});
