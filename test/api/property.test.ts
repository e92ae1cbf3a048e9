// Property-based tests over every route (docs/api.md#conventions, docs/api.md#authentication, docs/limits.md#requests), whatever a caller sends:
// - the answer is in the contract's shape (success, or the error body with a catalogue code, its status, and
//   request_id = X-Request-Id), and never a 500; an execute may answer 502/504 for its upstream, and 503
//   upstream_circuit_open once its failures opened the integration's breaker, never internal_error;
// - a read, or a request that was refused, changed no stored row; an execute wrote at most its own log row (and
//   kept its Idempotency-Key's answer when it ran);
// - the process still serves afterwards.
// IX_PROPERTY_RUNS sets the number of generated requests (default 10,500: about 20 s on two cores);
// npm run test:api:pg runs 2,000 on PostgreSQL.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import fc from 'fast-check';
import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import { errorCatalogue } from '../../src/core/errors.ts';
import {
  anyExecuteBody,
  apiKeyBody,
  entityBody,
  entityPatch,
  executePaths,
  graphqlExecuteBody,
  integrationPatch,
  integrationPut,
  rotateBody,
  soapExecuteBody,
} from '../support/fuzz-bodies.ts';
import type { Json } from '../support/fuzz-json.ts';
import { type RawHttpRequest, rawHttpBytes, rawHttpRequests, sendRaw } from '../support/fuzz-raw-http.ts';
import { abbreviate, type FuzzRequest, idSegment, livePool, type RouteSpec, requestsFor } from '../support/fuzz-requests.ts';
import { type PropertyFixture, propertyFixture } from '../support/property-fixture.ts';
import type { Mark } from '../support/state-watch.ts';

const totalRuns = Number(process.env.IX_PROPERTY_RUNS ?? 10_500);
// IX_PROPERTY_SEED replays a run that failed (fast-check prints its seed): the state the earlier requests built matters.
const seeded = process.env.IX_PROPERTY_SEED ? { seed: Number(process.env.IX_PROPERTY_SEED) } : {};
const runs = (share: number) => Math.max(20, Math.round(totalRuns * share));
const saneRequestId = /^[A-Za-z0-9._:-]{1,128}$/;
const writeMethods = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
// biome-ignore lint/suspicious/noExplicitAny: answers are read by shape, and every field read is asserted.
type AnswerBody = any;

describe('property: every answer is in the contract, whatever the request', () => {
  let f: PropertyFixture;
  let requests = 0;

  before(async () => {
    f = await propertyFixture();
  });
  after(() => f?.close());

  /** Asserts the answer's shape (docs/api.md#answers); returns the parsed body, if the answer has one. */
  function checkAnswer(request: FuzzRequest, res: LightMyRequestResponse): AnswerBody {
    const status = res.statusCode;
    const executes = request.route === 'execute' && request.method === 'POST';
    const circuitOpen = status === 503 && res.body.includes('"upstream_circuit_open"');
    assert.ok(status < 500 || (executes && (status === 502 || status === 504 || circuitOpen)), `status ${status}`);
    assert.ok(status >= 200 && status !== 304, `status ${status}`);
    assert.ok(status < 300 || status >= 400, `a redirect, ${status}`);
    const requestId = res.headers['x-request-id'];
    assert.equal(typeof requestId, 'string', 'X-Request-Id is missing');
    const sent = request.headers['x-request-id'];
    if (sent !== undefined && saneRequestId.test(sent)) assert.equal(requestId, sent, 'a sane X-Request-Id is echoed');
    if (request.method === 'HEAD') return undefined;
    // The OpenAPI document is served as itself, not in the envelope.
    if (request.path === '/api/v1/openapi.json' && status === 200) return JSON.parse(res.body);
    assert.match(String(res.headers['content-type']), /^application\/json/);
    const body = JSON.parse(res.body);
    if (status < 300) {
      assert.equal(body.success, true);
      assert.ok(typeof body.data === 'object' && body.data !== null, 'data is an object or an array');
      for (const key of Object.keys(body)) assert.ok(['success', 'data', 'pagination', 'errors'].includes(key), `key ${key}`);
      if ('pagination' in body) {
        assert.ok(body.pagination.next_cursor === null || typeof body.pagination.next_cursor === 'string');
      }
      return body;
    }
    const expectedKeys =
      body.error?.code === 'graphql_errors' ? ['error', 'errors', 'request_id', 'success'] : ['error', 'request_id', 'success'];
    assert.deepEqual(Object.keys(body).sort(), expectedKeys);
    assert.equal(body.success, false);
    const { code, message, details } = body.error;
    assert.ok(Object.hasOwn(errorCatalogue, code), `code ${code} is not in the catalogue`);
    assert.notEqual(code, 'internal_error');
    assert.equal(status, errorCatalogue[code as keyof typeof errorCatalogue][0], `status of ${code}`);
    assert.ok(typeof message === 'string' && message.length > 0, 'error.message');
    for (const key of Object.keys(body.error)) assert.ok(['code', 'message', 'details'].includes(key), `error key ${key}`);
    if (details !== undefined) assert.ok(typeof details === 'object' && details !== null && !Array.isArray(details), 'details');
    assert.equal(body.request_id, requestId, 'request_id equals X-Request-Id');
    if (code === 'validation_failed') {
      assert.ok(Array.isArray(details?.issues) && details.issues.length > 0, 'validation_failed lists issues');
      assert.ok(details.issues.length <= 100, `${details.issues.length} issues listed`);
      for (const issue of details.issues) {
        assert.ok(typeof issue.path === 'string' && typeof issue.message === 'string', JSON.stringify(issue));
      }
      if ('truncated' in details) assert.ok(details.truncated === true && details.issues.length === 100, 'truncated');
    }
    if (status === 401) assert.equal(res.headers['www-authenticate'], 'ApiKey realm="interchange", header="X-API-Key"');
    if (status === 429) assert.ok(res.headers['retry-after'] !== undefined, 'a 429 carries Retry-After');
    return body;
  }

  /**
   * A read or a refused request changed nothing; an execute call wrote at most its own log row (and kept its
   * Idempotency-Key's answer). A successful write may change what it likes: other tests pin what.
   */
  async function checkState(request: FuzzRequest, res: LightMyRequestResponse, body: AnswerBody, before: Mark): Promise<void> {
    const executes = request.route === 'execute' && request.method === 'POST';
    const reads = !writeMethods.has(request.method);
    const replayed = res.headers['idempotent-replayed'] === 'true';
    if (res.statusCode < 300 && !executes && !reads) return;
    await f.h.app.executionLog.flush(); // the executions log is written behind
    const { tables: changes, executions: grown } = await f.watch.changesSince(before);
    if (!executes) {
      assert.deepEqual(changes, {}, reads ? 'a read changed stored rows' : 'a refused request changed stored rows');
      assert.equal(grown, 0, 'an execution was written');
      return;
    }
    const { idempotency_keys: idempotency, ...others } = changes;
    assert.deepEqual(others, {}, 'an execute call changed stored rows');
    const key = request.headers['idempotency-key'];
    if (idempotency) {
      // The answer is kept for a replay when the call ran: a success, an upstream failure (5xx), or a refusal after a
      // write reached the upstream (a sync whose outbound part was sent, refused at its inbound stage): giving its key
      // back would let a retry send the write again (http/idempotency.ts givesKeyBack).
      const details = body.error?.details;
      const wrote = details?.stage === 'inbound' && details.outbound !== undefined;
      const kept = res.statusCode < 300 || res.statusCode >= 500 || wrote;
      assert.ok(kept && key !== undefined && idempotency.removed.length === 0, 'idempotency_keys changed');
      assert.equal(idempotency.added.length, 1);
      const row = JSON.parse(idempotency.added[0]);
      assert.equal(row.key, key);
      assert.equal(row.state, 'done');
      assert.equal(Number(row.http_status), res.statusCode);
    }
    assert.ok(grown === 0 || grown === 1, `${grown} executions written`);
    if (res.statusCode < 300 && !replayed) assert.equal(grown, 1, 'a successful execute is recorded');
    if (replayed) assert.equal(grown, 0, 'a replay is not recorded again');
    if (grown === 1) {
      const row = await f.h.storage.db
        .selectFrom('executions')
        .selectAll()
        .orderBy('id', 'desc')
        .limit(1)
        .executeTakeFirstOrThrow();
      assert.equal(row.request_id, res.headers['x-request-id']);
      assert.equal(Number(row.http_status), res.statusCode);
      assert.equal(row.status, res.statusCode < 300 ? 'succeeded' : 'failed');
      assert.equal(row.error_code, res.statusCode < 300 ? null : body?.error?.code);
      // The message the caller got; a NUL in upstream text is stored as U+FFFD (PostgreSQL's text cannot hold one).
      if (res.statusCode >= 300) assert.equal(row.error_message, body?.error?.message?.replaceAll('\u0000', '\ufffd'));
    }
  }

  function describeExchange(options: InjectOptions, res: LightMyRequestResponse | undefined): string {
    const payload = Buffer.isBuffer(options.payload)
      ? `(bytes) ${options.payload.toString('hex')}`
      : String(options.payload ?? '');
    const short = abbreviate(payload);
    const shown = short.length > 600 ? `${short.slice(0, 600)}… (${payload.length} chars)` : short;
    const answer = res ? `${res.statusCode} ${res.body.slice(0, 800)}` : '(no answer)';
    return `\n  request: ${options.method} ${abbreviate(String(options.url)).slice(0, 300)}\n  headers: ${JSON.stringify(options.headers)}\n  body: ${JSON.stringify(shown)}\n  answer: ${answer}`;
  }

  async function exchange(request: FuzzRequest): Promise<void> {
    const options = f.injectOptions(request);
    const before = await f.watch.mark();
    let res: LightMyRequestResponse | undefined;
    try {
      requests++;
      res = await f.h.app.inject(options);
      const body = checkAnswer(request, res);
      await checkState(request, res, body, before);
      if (res.statusCode === 201 && (request.route === 'keys.create' || request.route === 'keys.rotate'))
        f.ids.victims.push(body.data.id);
      if (res.statusCode === 201 && request.route === 'entities.create') f.ids.entities.push(body.data.entity_id);
    } catch (error) {
      throw new Error(`${(error as Error).message}${describeExchange(options, res)}`, { cause: error });
    }
  }

  const property = (specs: RouteSpec[]) => fc.asyncProperty(fc.oneof(...specs.map(requestsFor)), exchange);
  // Built inside the tests: the fixture exists only once `before` has run.
  const keyIds = () => idSegment(fc.oneof(fc.constantFrom(...f.ids.keys), livePool(f.ids.victims)));
  const targetKeyIds = () => idSegment(livePool(f.ids.victims));
  const entityId = () => idSegment(livePool(f.ids.entities));
  const anyIntegration = () => idSegment([...f.ids.fixedIntegrations, ...f.ids.writableIntegrations]);
  const writable = () => idSegment(f.ids.writableIntegrations);

  test('health, readiness, OpenAPI and /me', async () => {
    const meta: RouteSpec[] = ['/healthz', '/readyz', '/api/v1/openapi.json', '/api/v1/me'].map((path) => ({
      route: path,
      method: 'GET',
      path: fc.constant(path),
    }));
    await fc.assert(property(meta), { numRuns: runs(0.05), ...seeded });
  });

  test('API keys', async () => {
    const specs: RouteSpec[] = [
      {
        route: 'keys.create',
        method: 'POST',
        path: fc.constant('/api/v1/api-keys'),
        body: { base: apiKeyBody, paths: ['name', 'scopes', 'expires_at', 'rate_limit_per_minute'] },
      },
      { route: 'keys.list', method: 'GET', path: fc.constant('/api/v1/api-keys'), query: ['limit', 'cursor'] },
      { route: 'keys.get', method: 'GET', path: keyIds().map((id) => `/api/v1/api-keys/${id}`) },
      { route: 'keys.usage', method: 'GET', path: keyIds().map((id) => `/api/v1/api-keys/${id}/usage`), query: ['days'] },
      {
        route: 'keys.rotate',
        method: 'POST',
        path: targetKeyIds().map((id) => `/api/v1/api-keys/${id}/rotate`),
        body: { base: rotateBody, paths: ['overlap_seconds'] },
      },
      { route: 'keys.revoke', method: 'DELETE', path: targetKeyIds().map((id) => `/api/v1/api-keys/${id}`) },
    ];
    await fc.assert(property(specs), { numRuns: runs(0.19), ...seeded });
  });

  test('entities', async () => {
    const specs: RouteSpec[] = [
      {
        route: 'entities.create',
        method: 'POST',
        path: fc.constant('/api/v1/entities'),
        body: { base: entityBody(f.ids.entities), paths: ['entity_id', 'name', 'status'] },
      },
      {
        route: 'entities.list',
        method: 'GET',
        path: fc.constant('/api/v1/entities'),
        query: ['id', 'status', 'limit', 'cursor'],
      },
      { route: 'entities.get', method: 'GET', path: entityId().map((id) => `/api/v1/entities/${id}`) },
      {
        route: 'entities.patch',
        method: 'PATCH',
        path: entityId().map((id) => `/api/v1/entities/${id}`),
        body: { base: entityPatch, paths: ['name', 'status'] },
      },
      { route: 'entities.delete', method: 'DELETE', path: entityId().map((id) => `/api/v1/entities/${id}`) },
    ];
    await fc.assert(property(specs), { numRuns: runs(0.18), ...seeded });
  });

  test('integrations', async () => {
    const configPaths = [
      'config',
      'config.base_url',
      'config.token',
      'config.timeout_seconds',
      'config.endpoint_url',
      'config.auth_value',
    ];
    const specs: RouteSpec[] = [
      {
        route: 'integrations.put',
        method: 'PUT',
        path: writable().map((id) => `/api/v1/integrations/${id}`),
        body: { base: integrationPut(f.urls), paths: ['name', 'connector', ...configPaths] },
      },
      {
        route: 'integrations.patch',
        method: 'PATCH',
        path: writable().map((id) => `/api/v1/integrations/${id}`),
        body: { base: integrationPatch(f.urls), paths: ['name', ...configPaths] },
      },
      { route: 'integrations.get', method: 'GET', path: anyIntegration().map((id) => `/api/v1/integrations/${id}`) },
      { route: 'integrations.list', method: 'GET', path: fc.constant('/api/v1/integrations'), query: ['limit', 'cursor'] },
      { route: 'integrations.delete', method: 'DELETE', path: writable().map((id) => `/api/v1/integrations/${id}`) },
    ];
    await fc.assert(property(specs), { numRuns: runs(0.19), ...seeded });
  });

  test('execute', async () => {
    // Unreachable upstreams rarely: each call to one is tried three times (at the fixture's smallest waits), and opens
    // its breaker after five.
    const ofKind = (prefix: string) =>
      fc.oneof(
        {
          arbitrary: fc.constantFrom(...f.ids.fixedIntegrations.filter((id) => id.startsWith(prefix) && !id.endsWith('-closed'))),
          weight: 8,
        },
        { arbitrary: fc.constant(`${prefix}closed`), weight: 1 },
      );
    const graphql = ofKind('gql-');
    const soap = ofKind('soap-');
    const execute = (ids: fc.Arbitrary<string>, base: fc.Arbitrary<Json>): RouteSpec => ({
      route: 'execute',
      method: 'POST',
      path: ids.map((id) => `/api/v1/integrations/${id}/execute`),
      body: { base, paths: executePaths },
    });
    const specs = [
      execute(idSegment(graphql), graphqlExecuteBody),
      execute(idSegment(soap), soapExecuteBody),
      execute(anyIntegration(), anyExecuteBody),
    ];
    await fc.assert(property(specs), { numRuns: runs(0.25), ...seeded });
  });

  test('executions', async () => {
    const specs: RouteSpec[] = [
      {
        route: 'executions.list',
        method: 'GET',
        path: fc.constant('/api/v1/executions'),
        query: ['integration_id', 'status', 'limit', 'cursor'],
      },
      { route: 'executions.get', method: 'GET', path: idSegment(f.ids.executions).map((id) => `/api/v1/executions/${id}`) },
    ];
    await fc.assert(property(specs), { numRuns: runs(0.08), ...seeded });
  });

  test('paths no route serves', async () => {
    const paths = fc.oneof(
      fc.constantFrom(
        // Not `/`: it answers (a redirect to the console, or the entry points; test/api/root-route.test.ts).
        '/api',
        '/api/v1',
        '/api/v1/',
        '/api/v2/entities',
        '/API/V1/ENTITIES',
        '//api/v1/entities',
        '/api/v1/entities/e1/extra',
        '/api/v1/integrations/gql-ok/execute/x',
        '/api/v1/openapi.json/x',
        '/api/v1/api-keys/x/usage/y',
        '/api/v1/./entities',
        '/api/v1/%2e%2e/healthz',
        '/healthz/',
        '/healthz%00',
      ),
      idSegment(['x']).map((id) => `/api/v1/${id}`),
    );
    const specs: RouteSpec[] = [{ route: 'none', method: 'GET', path: paths }];
    await fc.assert(property(specs), { numRuns: runs(0.06), ...seeded });
  });

  test('raw HTTP: what the parser refuses is answered in the error shape too', async () => {
    const port = Number(new URL(await f.h.app.listen({ host: '127.0.0.1', port: 0 })).port);
    const check = async (request: RawHttpRequest) => {
      requests++;
      const bytes = rawHttpBytes(request, f.secrets.star);
      const answer = await sendRaw(port, bytes);
      try {
        assert.ok(answer, 'the server closed the connection without an answer, or said nothing');
        assert.ok(answer.status < 500, `status ${answer.status}`);
        const requestId = answer.headers['x-request-id'];
        assert.ok(requestId, 'X-Request-Id is missing');
        if (request.method === 'HEAD') return;
        assert.match(answer.headers['content-type'] ?? '', /^application\/json/);
        const body = JSON.parse(answer.body);
        if (answer.status < 300) {
          assert.equal(body.success, true);
          return;
        }
        assert.deepEqual(Object.keys(body).sort(), ['error', 'request_id', 'success']);
        assert.ok(Object.hasOwn(errorCatalogue, body.error.code), `code ${body.error.code}`);
        assert.equal(answer.status, errorCatalogue[body.error.code as keyof typeof errorCatalogue][0]);
        assert.equal(body.request_id, requestId);
      } catch (error) {
        const sent = JSON.stringify(bytes.toString('latin1').slice(0, 600));
        const got = answer ? `${answer.status} ${JSON.stringify(answer.headers)} ${answer.body.slice(0, 400)}` : '(nothing)';
        throw new Error(`${(error as Error).message}\n  sent: ${sent}\n  answer: ${got}`, { cause: error });
      }
    };
    await fc.assert(fc.asyncProperty(rawHttpRequests, check), { numRuns: runs(0.02), ...seeded });
  });

  test('the process still serves, and the fixture key still works, after all of it', async () => {
    const health = await f.h.app.inject({ method: 'GET', url: '/healthz' });
    assert.equal(health.statusCode, 200);
    const me = await f.h.call({ key: f.secrets.star, tenant: 'acme' }, { method: 'GET', url: '/api/v1/me' });
    assert.equal(me.statusCode, 200, me.body);
    console.log(`# property suite: ${requests} generated requests on ${f.h.storage.kind}`);
  });
});
