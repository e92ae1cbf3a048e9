import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import type { IncomingMessage } from 'node:http';
import { PassThrough } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import { assertError, assertOk } from '../support/assertions.ts';
import { body, type Harness, harness, integrationCalls } from '../support/harness.ts';
import { type AuthorizationServer, startAuthorizationServer } from '../support/oidc-authorization-server.ts';
import { httpUpstream, type RawUpstream } from '../support/raw-upstream.ts';

/**
 * `config.auth` `oauth2_client_credentials` end to end (issue 19; docs/security.md#upstream-credentials), against
 * oidc-provider as the authorization server: the upstreams accept only tokens it really issued (they ask it), and
 * its token requests are counted. Both connectors, the WSDL's own fetch included.
 */

const clientSecret = 'oauth-Client-Secret-3f8a0c';
const calculator = readFileSync(new URL('../support/fixtures/soap/calculator.wsdl', import.meta.url), 'utf8');

describe('config.auth oauth2_client_credentials against a real authorization server', () => {
  let h: Harness;
  let auth: { key: string; tenant: string };
  let server: AuthorizationServer;
  let upstream: RawUpstream;
  /** Every Authorization header the upstream received, and how many of the next requests it refuses with a 401. */
  const seen: string[] = [];
  let refuseNext = 0;
  let echoToken = false;
  const logs = new PassThrough();
  let logged = '';
  logs.on('data', (chunk) => {
    logged += String(chunk);
  });

  const { put, execute } = integrationCalls(() => ({ h, auth }));
  const oauth = (extra: Record<string, unknown> = {}) => ({
    type: 'oauth2_client_credentials',
    token_url: server.tokenUrl,
    client_id: 'interchange',
    client_secret: clientSecret,
    scope: 'read',
    ...extra,
  });

  /** Answers only a Bearer token the authorization server issued: a GraphQL answer, a SOAP one, or the WSDL. */
  async function answer(req: IncomingMessage, res: import('node:http').ServerResponse) {
    const authorization = req.headers.authorization ?? '';
    seen.push(authorization);
    const token = /^Bearer (\S+)$/.exec(authorization)?.[1];
    const issued = token === undefined ? undefined : await server.introspect(token);
    if (!issued || refuseNext > 0) {
      refuseNext = Math.max(0, refuseNext - 1);
      res.writeHead(401, { 'www-authenticate': 'Bearer error="invalid_token"' }).end('invalid token');
      return;
    }
    if (echoToken) {
      res.writeHead(500, { 'content-type': 'text/plain' }).end(`server error for ${authorization}`);
      return;
    }
    if (req.url?.startsWith('/soap')) {
      if (req.method === 'GET') {
        res.writeHead(200, { 'content-type': 'text/xml' }).end(calculator.replaceAll('__BASE_URL__', `${upstream.url}/soap`));
        return;
      }
      res
        .writeHead(200, { 'content-type': 'text/xml' })
        .end(
          '<s:Envelope xmlns:s="http://schemas.xmlsoap.org/soap/envelope/"><s:Body><AddResponse xmlns="http://example.com/calculator"><AddResult>5</AddResult></AddResponse></s:Body></s:Envelope>',
        );
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' }).end('{"data":{"items":[{"id":"1"}]}}');
  }

  before(async () => {
    server = await startAuthorizationServer([
      { clientId: 'interchange', clientSecret, method: 'client_secret_basic' },
      { clientId: 'poster', clientSecret, method: 'client_secret_post' },
    ]);
    upstream = await httpUpstream((req, res) => void answer(req, res));
    h = await harness({ LOG_LEVEL: 'debug' }, { logStream: logs });
    await h.tenant('acme');
    auth = await h.auth('acme', ['*']);
  });
  after(async () => {
    await upstream.close();
    await server.close();
    await h.close();
  });

  test('20 calls at once on a cold integration cause one token request; the token is then reused', async () => {
    assert.equal((await put('gql', 'graphql-1.0.0', { base_url: upstream.url, auth: oauth() })).statusCode, 201);
    const before = server.tokenRequests.length;
    const answers = await Promise.all(
      Array.from({ length: 20 }, () => execute('gql', { operation: 'receive', query: '{ items { id } }' })),
    );
    for (const res of answers) assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(server.tokenRequests.slice(before), ['basic']);
    assertOk(await execute('gql', { operation: 'receive', query: '{ items { id } }' }));
    assert.equal(server.tokenRequests.length, before + 1, 'reused, not fetched again');
  });

  test('client_secret_post authenticates in the body; the answer shows the fields and client_secret_set only', async () => {
    const res = await put('post', 'graphql-1.0.0', {
      base_url: upstream.url,
      auth: oauth({ client_id: 'poster', client_authentication: 'client_secret_post' }),
    });
    assert.deepEqual(body(res).data.config.auth, {
      type: 'oauth2_client_credentials',
      token_url: server.tokenUrl,
      client_id: 'poster',
      scope: 'read',
      client_authentication: 'client_secret_post',
      client_secret_set: true,
    });
    assert.ok(!res.body.includes(clientSecret));
    const before = server.tokenRequests.length;
    assertOk(await execute('post', { operation: 'test' }));
    assert.deepEqual(server.tokenRequests.slice(before), ['post']);
  });

  test('an upstream 401 gets one fresh token and one resend, never a loop', async () => {
    const before = server.tokenRequests.length;
    const calls = seen.length;
    refuseNext = 1;
    assertOk(await execute('gql', { operation: 'receive', query: '{ items { id } }' }));
    assert.equal(server.tokenRequests.length, before + 1, 'one fresh token');
    assert.equal(seen.length, calls + 2, 'the refused call and its resend');
    assert.notEqual(seen.at(-1), seen.at(-2), 'the resend carried the new token');

    refuseNext = 100;
    const refused = await execute('gql', { operation: 'receive', query: '{ items { id } }' });
    refuseNext = 0;
    assertError(refused, 502, 'upstream_http_error');
    assert.equal(seen.length, calls + 4, 'two more calls, no loop');
  });

  test('a wrong client secret is 502 upstream_auth_failed with the RFC 6749 error, and nothing is sent upstream', async () => {
    await put('wrong', 'graphql-1.0.0', { base_url: upstream.url, auth: oauth({ client_secret: 'not-the-Secret-99' }) });
    const calls = seen.length;
    const res = await execute('wrong', { operation: 'receive', query: '{ items { id } }' });
    const error = assertError(res, 502, 'upstream_auth_failed');
    assert.equal(error.details?.error, 'invalid_client');
    assert.equal(error.details?.token_url, server.tokenUrl);
    assert.equal(error.details?.upstream_status, 401);
    assert.ok(!res.body.includes('not-the-Secret-99'));
    assert.equal(seen.length, calls, 'the upstream saw nothing');
  });

  test('an upstream that echoes the access token shows it redacted, in the answer and the executions log', async () => {
    echoToken = true;
    const res = await execute('gql', { operation: 'receive', query: '{ items { id } }' });
    echoToken = false;
    assertError(res, 502, 'upstream_http_error');
    const token = (seen.at(-1) ?? '').replace('Bearer ', '');
    assert.ok(token.length > 20);
    assert.ok(!res.body.includes(token), res.body);
    const list = await h.call(auth, { method: 'GET', url: '/api/v1/executions?integration_id=gql&limit=100' });
    assert.ok(!list.body.includes(token), 'the executions log does not hold the token');
  });

  test('SOAP in WSDL mode: the WSDL fetch and the call both carry the token', async () => {
    const res = await put('soap', 'soap-1.0.0', { endpoint_url: `${upstream.url}/soap?wsdl`, auth: oauth() });
    assert.equal(res.statusCode, 201, res.body);
    const calls = seen.length;
    const data = assertOk(await execute('soap', { operation: 'send', method: 'Add', params: { a: 2, b: 3 } }));
    assert.deepEqual(data, { AddResult: 5 });
    const sent = seen.slice(calls);
    assert.ok(sent.length >= 2, 'the WSDL and the call');
    for (const authorization of sent) assert.match(authorization, /^Bearer \S+$/);
  });

  test('moving token_url to another origin must send client_secret again', async () => {
    const moved = await h.call(auth, {
      method: 'PATCH',
      url: '/api/v1/integrations/gql',
      payload: { config: { auth: { type: 'oauth2_client_credentials', token_url: 'https://elsewhere.example/token' } } },
    });
    assertError(moved, 400, 'validation_failed');
    assert.equal(body(moved).error.details.issues[0].path, 'config.auth.client_secret');
  });

  test('neither the client secret nor an access token reaches the log', () => {
    assert.ok(logged.length > 0);
    assert.ok(!logged.includes(clientSecret));
    for (const authorization of seen) {
      const token = authorization.replace('Bearer ', '');
      if (token.length > 20) assert.ok(!logged.includes(token), 'an access token in the log');
    }
  });
});
