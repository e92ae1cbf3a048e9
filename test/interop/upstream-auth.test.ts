import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import { assertError, assertOk } from '../support/assertions.ts';
import { type GraphqlServer, startGraphqlServer } from '../support/graphql-server.ts';
import { body, type Harness, harness, integrationCalls } from '../support/harness.ts';
import { type PhpSoapServer, startPhpSoapServer } from '../support/php-soap-server.ts';
import { httpUpstream, type RawUpstream } from '../support/raw-upstream.ts';

/**
 * `config.auth` (issue 19; docs/security.md#upstream-credentials): basic, bearer and header, on both connectors, checked
 * by the servers that receive them (graphql-http's server records the headers; PHP decodes Basic itself), secrets
 * write-only, encrypted at rest, redacted, never logged; PATCH merges within a scheme and replaces across schemes; the
 * connectors' shorthands are refused beside `auth`.
 */

// Non-ASCII on purpose: RFC 7617 Basic with UTF-8, as PHP decodes it.
const password = 'pässwörd-€-Secret-7d1c';
const token = 'bearer-Token-0b5e9f3a21';
const headerValue = 'hdr-Value-51a9c0e2d7';
const secrets = [password, token, headerValue];

describe('config.auth: basic, bearer and header sent the way their servers read them', () => {
  let h: Harness;
  let auth: { key: string; tenant: string };
  let graphql: GraphqlServer;
  let soap: PhpSoapServer;
  let echo: RawUpstream;
  const logs = new PassThrough();
  let logged = '';
  logs.on('data', (chunk) => {
    logged += String(chunk);
  });

  const { put, patch, execute } = integrationCalls(() => ({ h, auth }));
  const issues = (res: Parameters<typeof body>[0]) => body(res).error.details.issues as { path: string; message: string }[];

  before(async () => {
    h = await harness({ LOG_LEVEL: 'debug' }, { logStream: logs });
    await h.tenant('acme');
    auth = await h.auth('acme', ['*']);
    graphql = await startGraphqlServer();
    soap = await startPhpSoapServer();
    // Echoes the Authorization header it got in an error body: what redaction must catch.
    echo = await httpUpstream((req, res) => {
      res.writeHead(500, { 'content-type': 'text/plain' }).end(`denied: ${req.headers.authorization} / ${req.headers['x-key']}`);
    });
  });
  after(async () => {
    await graphql.close();
    await soap.close();
    await echo.close();
    await h.close();
  });

  test('GraphQL: each scheme reaches the server as its header', async () => {
    const cases = [
      {
        auth: { type: 'basic', username: 'ada', password },
        header: 'authorization',
        sent: `Basic ${Buffer.from(`ada:${password}`, 'utf8').toString('base64')}`,
      },
      { auth: { type: 'bearer', token }, header: 'authorization', sent: `Bearer ${token}` },
      { auth: { type: 'header', name: 'X-Key', value: headerValue }, header: 'x-key', sent: headerValue },
    ];
    for (const [i, c] of cases.entries()) {
      const res = await put(`g${i}`, 'graphql-1.0.0', { base_url: graphql.url, auth: c.auth });
      assert.equal(res.statusCode, 201, res.body);
      const seen = graphql.requests.length;
      assertOk(await execute(`g${i}`, { operation: 'test' }));
      assert.equal(graphql.requests[seen].headers[c.header], c.sent, c.auth.type);
    }
  });

  test('SOAP, raw and WSDL mode: PHP decodes the Basic credentials itself; header and bearer arrive as sent', async () => {
    for (const [id, endpoint] of [
      ['soap-raw', soap.url('/calculator')],
      ['soap-wsdl', soap.url('/calculator?wsdl')],
    ]) {
      const base = { endpoint_url: endpoint, namespace: 'http://example.com/calculator' };
      assert.equal(
        (await put(id, 'soap-1.0.0', { ...base, auth: { type: 'basic', username: 'ada', password } })).statusCode,
        201,
      );
      const call = { operation: 'send', method: 'Add', params: { a: 2, b: 3 } };
      assertOk(await execute(id, call));
      const basic = soap
        .log()
        .filter((e) => e.method === 'POST')
        .at(-1);
      assert.deepEqual([basic?.basicUser, basic?.basicPassword], ['ada', password], id);

      assert.equal((await patch(id, { auth: { type: 'header', name: 'X-Auth-Token', value: headerValue } })).statusCode, 200);
      const who = assertOk(await execute(id, { operation: 'send', method: 'WhoAmI', params: {} }));
      assert.equal(soap.log().at(-1)?.authToken, headerValue, `${id}: the header as PHP read it`);
      // The service answers with the header it read, which is the secret: the caller sees it redacted.
      assert.equal(who.WhoAmIResult, '[REDACTED]');

      assert.equal((await patch(id, { auth: { type: 'bearer', token } })).statusCode, 200);
      assertOk(await execute(id, call));
      assert.equal(
        soap
          .log()
          .filter((e) => e.method === 'POST')
          .at(-1)?.authorization,
        `Bearer ${token}`,
      );
    }
  });

  test('answers show each scheme’s fields and only <secret>_set; storage holds ciphertext; echoes are redacted', async () => {
    const res = await put('shown', 'graphql-1.0.0', { base_url: echo.url, auth: { type: 'basic', username: 'ada', password } });
    const config = body(res).data.config;
    assert.deepEqual(config.auth, { type: 'basic', username: 'ada', password_set: true });
    assert.equal(config.token_set, false);
    const listed = await h.call(auth, { method: 'GET', url: '/api/v1/integrations/shown' });
    assert.deepEqual(body(listed).data.config.auth, { type: 'basic', username: 'ada', password_set: true });

    const row = await h.storage.db.selectFrom('integrations').selectAll().where('id', '=', 'shown').executeTakeFirstOrThrow();
    const stored = JSON.stringify(row);
    assert.ok(!stored.includes(password) && !stored.includes(Buffer.from(`ada:${password}`).toString('base64')));
    assert.ok(stored.includes('auth.password'), 'the secret is kept under its path');

    const failed = await execute('shown', { operation: 'test' });
    assertError(failed, 502, 'upstream_http_error');
    const excerpt = body(failed).error.details.body_excerpt as string;
    assert.ok(!excerpt.includes(Buffer.from(`ada:${password}`).toString('base64')), excerpt);
    assert.match(excerpt, /\[REDACTED\]/);

    assert.equal((await patch('shown', { auth: { type: 'header', name: 'X-Key', value: headerValue } })).statusCode, 200);
    const echoed = body(await execute('shown', { operation: 'test' })).error.details.body_excerpt as string;
    assert.ok(!echoed.includes(headerValue), echoed);
  });

  test('PATCH: the same type merges (a secret left out is kept); another type replaces; null clears', async () => {
    await put('merge', 'graphql-1.0.0', { base_url: graphql.url, auth: { type: 'basic', username: 'ada', password } });
    const renamed = await patch('merge', { auth: { type: 'basic', username: 'grace' } });
    assert.deepEqual(body(renamed).data.config.auth, { type: 'basic', username: 'grace', password_set: true });
    // null on a field of the same type removes it: a required one is then missing.
    const noUser = await patch('merge', { auth: { type: 'basic', username: null } });
    assertError(noUser, 400, 'validation_failed');
    assert.deepEqual(issues(noUser), [{ path: 'config.auth.username', message: 'is required for auth type basic' }]);
    const seen = graphql.requests.length;
    assertOk(await execute('merge', { operation: 'test' }));
    assert.equal(graphql.requests[seen].headers.authorization, `Basic ${Buffer.from(`grace:${password}`).toString('base64')}`);

    // Another scheme replaces the whole object: its secrets do not carry over, so bearer needs its token.
    const missing = await patch('merge', { auth: { type: 'bearer' } });
    assertError(missing, 400, 'validation_failed');
    assert.deepEqual(issues(missing), [{ path: 'config.auth.token', message: 'is required for auth type bearer' }]);
    const bearer = await patch('merge', { auth: { type: 'bearer', token } });
    assert.deepEqual(body(bearer).data.config.auth, { type: 'bearer', token_set: true });
    const back = await patch('merge', { auth: { type: 'basic', username: 'ada' } });
    assertError(back, 400, 'validation_failed');
    assert.equal(issues(back)[0].path, 'config.auth.password', 'the old password did not come back');

    const cleared = await patch('merge', { auth: null });
    assert.equal(body(cleared).data.config.auth, null);
    const row = await h.storage.db.selectFrom('integrations').selectAll().where('id', '=', 'merge').executeTakeFirstOrThrow();
    assert.deepEqual(JSON.parse(row.secrets), {}, 'no secret left behind');
    const none = graphql.requests.length;
    assertOk(await execute('merge', { operation: 'test' }));
    assert.equal(graphql.requests[none].headers.authorization, undefined);
  });

  test('the shorthands are refused beside auth, whichever came first; each works alone', async () => {
    const both = await put('short', 'graphql-1.0.0', { base_url: graphql.url, token, auth: { type: 'bearer', token } });
    assertError(both, 400, 'validation_failed');
    assert.deepEqual(
      issues(both).map((i) => i.path),
      ['config.auth'],
    );
    assert.match(issues(both)[0].message, /token: null/);

    assert.equal((await put('short', 'graphql-1.0.0', { base_url: graphql.url, token })).statusCode, 201);
    assertError(await patch('short', { auth: { type: 'bearer', token } }), 400, 'validation_failed');
    const swapped = await patch('short', { token: null, auth: { type: 'bearer', token } });
    assert.equal(swapped.statusCode, 200, swapped.body);
    assert.equal(body(swapped).data.config.token_set, false);
    assertError(await patch('short', { token }), 400, 'validation_failed');

    const soapBoth = await put('short-soap', 'soap-1.0.0', {
      endpoint_url: soap.url('/calculator'),
      auth_header: 'X-Auth-Token',
      auth_value: headerValue,
      auth: { type: 'header', name: 'X-Auth-Token', value: headerValue },
    });
    assertError(soapBoth, 400, 'validation_failed');
    assert.match(issues(soapBoth)[0].message, /auth_header and auth_value/);
  });

  test('bad auth is a 400 at its field and changes nothing', async () => {
    await put('bad', 'graphql-1.0.0', { base_url: graphql.url, auth: { type: 'bearer', token } });
    const cases: [Record<string, unknown>, string][] = [
      [{ type: 'digest', token }, 'config.auth.type'],
      [{ token }, 'config.auth.type'],
      [{ type: 'basic', username: 'ada' }, 'config.auth.password'],
      [{ type: 'basic', username: 'a:b', password }, 'config.auth.username'],
      [{ type: 'bearer', token, username: 'ada' }, 'config.auth.username'],
      [{ type: 'bearer', token: 'has space' }, 'config.auth.token'],
      [{ type: 'header', name: 'Content-Type', value: headerValue }, 'config.auth.name'],
      [{ type: 'header', name: 'X-Key', value: 'a\r\nInjected: 1' }, 'config.auth.value'],
      [{ type: 'header', name: 'bad name', value: headerValue }, 'config.auth.name'],
    ];
    for (const [given, path] of cases) {
      const res = await patch('bad', { auth: given });
      assertError(res, 400, 'validation_failed');
      assert.ok(
        issues(res).some((issue) => issue.path === path),
        `${JSON.stringify(given)}: ${JSON.stringify(issues(res))}`,
      );
    }
    const unchanged = await h.call(auth, { method: 'GET', url: '/api/v1/integrations/bad' });
    assert.deepEqual(body(unchanged).data.config.auth, { type: 'bearer', token_set: true });
  });

  test('no secret reaches the log, at debug', () => {
    assert.ok(logged.includes('"level":30'), 'the request lines were written');
    for (const secret of [...secrets, Buffer.from(`ada:${password}`).toString('base64')]) {
      assert.ok(!logged.includes(secret), `the log holds ${secret.slice(0, 6)}…`);
    }
  });
});
