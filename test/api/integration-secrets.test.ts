import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { credentialOrigins, credentialsMayGoTo } from '../../src/credentials/destinations.ts';
import { saveIntegration } from '../../src/storage/integrations.ts';
import { assertError } from '../support/assertions.ts';
import { body, type Harness, harness } from '../support/harness.ts';
import { httpUpstream, type RawUpstream } from '../support/raw-upstream.ts';
import { TestPki } from '../support/test-pki.ts';

/** How an integration shows `retry` and `max_concurrency` when neither is set. */
const unsetResilience = {
  retry: { max_attempts: 3, base_delay_ms: 200, max_delay_ms: 10_000 },
  max_concurrency: null,
  validate_schema: true,
  schema_ttl_seconds: 600,
};

/**
 * docs/security.md#secrets-follow-their-origin: a secret goes only where its owner sent it. A key that may only write integrations must not be able to
 * point one at its own host and have the stored secret delivered there on the next execute; credentials in URLs are
 * refused (they would be stored and shown in plain text).
 */

type Auth = { key: string; tenant: string };

const SOAP11 = 'http://schemas.xmlsoap.org/soap/envelope/';
const calculatorWsdl = readFileSync(new URL('../support/fixtures/soap/calculator.wsdl', import.meta.url), 'utf8');
const greeterWsdl = readFileSync(new URL('../support/fixtures/soap/imported.wsdl', import.meta.url), 'utf8');
const greeterTypes = readFileSync(new URL('../support/fixtures/soap/types.xsd', import.meta.url), 'utf8');
const greetResponse = `<s:Envelope xmlns:s="${SOAP11}"><s:Body><GreetResponse xmlns="http://example.com/greeter/types"><GreetResult>Hello, Ann!</GreetResult></GreetResponse></s:Body></s:Envelope>`;
const addResponse = `<s:Envelope xmlns:s="${SOAP11}"><s:Body><AddResponse xmlns="http://example.com/calculator"><AddResult>3</AddResult></AddResponse></s:Body></s:Envelope>`;
const introspectionAnswer = JSON.stringify({ data: { __schema: { queryType: { name: 'Query' } } } });

/** An upstream that records the Authorization header of every request it receives. */
interface Recorder {
  upstream: RawUpstream;
  url: string;
  /** One entry per request: `METHOD path` and the Authorization header (undefined when none came). */
  seen: Array<{ request: string; authorization: string | undefined }>;
}

/**
 * A raw node:http upstream on 127.0.0.1 that answers whatever these tests send it: the calculator WSDL (its
 * addresses on this upstream) for `GET /calc.wsdl`, a GraphQL introspection answer for a JSON POST, an AddResponse
 * envelope for any other POST, and `200 ok` for anything else (a raw SOAP `test`).
 */
async function recorder(): Promise<Recorder> {
  const seen: Recorder['seen'] = [];
  const upstream = await httpUpstream((req, res) => {
    seen.push({ request: `${req.method} ${req.url}`, authorization: req.headers.authorization });
    if (req.method === 'GET' && req.url === '/calc.wsdl') {
      res.writeHead(200, { 'content-type': 'text/xml' }).end(calculatorWsdl.replaceAll('__BASE_URL__', upstream.url));
    } else if (req.method === 'POST' && req.headers['content-type']?.includes('json')) {
      res.writeHead(200, { 'content-type': 'application/json' }).end(introspectionAnswer);
    } else if (req.method === 'POST') {
      res.writeHead(200, { 'content-type': 'text/xml' }).end(addResponse);
    } else {
      res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
    }
  });
  return { upstream, url: upstream.url, seen };
}

/** The Authorization headers a recorder received since `from` (an index into `seen`). */
const authorizations = (r: Recorder, from = 0) => r.seen.slice(from).map((s) => s.authorization);

/** The issues of a 400 validation_failed, sorted by path. */
function issues(res: LightMyRequestResponse): Array<{ path: string; message: string }> {
  const error = assertError(res, 400, 'validation_failed');
  const list = error.details?.issues ?? [];
  return [...list].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

describe('integration secrets follow the origin they were sent with', () => {
  let h: Harness;
  let admin: Auth;
  let writer: Auth;
  let runner: Auth;
  let a: Recorder;
  let b: Recorder;
  let wsdlHost: Recorder;

  before(async () => {
    h = await harness();
    await h.tenant('acme');
    admin = { key: (await h.key('acme', ['integrations.*'])).key, tenant: 'acme' };
    writer = { key: (await h.key('acme', ['integrations.write'])).key, tenant: 'acme' };
    runner = { key: (await h.key('acme', ['integrations.execute'])).key, tenant: 'acme' };
    [a, b, wsdlHost] = await Promise.all([recorder(), recorder(), recorder()]);
  });
  after(async () => {
    await h.close();
    await Promise.all([a.upstream.close(), b.upstream.close(), wsdlHost.upstream.close()]);
  });

  const put = (id: string, connector: string, config: Record<string, unknown>, auth: Auth = admin) =>
    h.call(auth, { method: 'PUT', url: `/api/v1/integrations/${encodeURIComponent(id)}`, payload: { connector, config } });
  const patch = (id: string, config: Record<string, unknown>, auth: Auth = writer) =>
    h.call(auth, { method: 'PATCH', url: `/api/v1/integrations/${encodeURIComponent(id)}`, payload: { config } });
  const get = (id: string) => h.call(admin, { method: 'GET', url: `/api/v1/integrations/${encodeURIComponent(id)}` });
  const configOf = async (id: string) => {
    const res = await get(id);
    assert.equal(res.statusCode, 200, res.body);
    return body(res).data.config;
  };
  /** Executes with a key that may only execute; asserts it succeeded. */
  async function execute(id: string, payload: Record<string, unknown>) {
    const res = await h.call(runner, { method: 'POST', url: `/api/v1/integrations/${encodeURIComponent(id)}/execute`, payload });
    assert.equal(res.statusCode, 200, res.body);
    return body(res).data;
  }
  const created = async (res: Promise<LightMyRequestResponse>) => {
    const done = await res;
    assert.equal(done.statusCode, 201, done.body);
  };
  const patched = async (res: Promise<LightMyRequestResponse>) => {
    const done = await res;
    assert.equal(done.statusCode, 200, done.body);
    return body(done).data.config;
  };

  test('GraphQL: a write-only key cannot move base_url to another host and have the stored token sent there', async () => {
    await created(put('gql', 'graphql-1.0.0', { base_url: `${a.url}/api`, token: 'tok-A' }));
    const before = await configOf('gql');

    const refused = await patch('gql', { base_url: `${b.url}/api` });
    assert.deepEqual(issues(refused), [
      { path: 'config.token', message: 'base_url changes origin; send token again (or null) so it is not sent to the new host' },
    ]);
    assert.ok(!refused.body.includes('tok-A'));
    // Nothing was written: the old config, and the next execute goes to A with A's token.
    assert.deepEqual(await configOf('gql'), before);
    assert.deepEqual(before, {
      base_url: `${a.url}/api`,
      timeout_seconds: 30,
      token_set: true,
      auth: null,
      tls: null,
      ...unsetResilience,
    });
    const atA = a.seen.length;
    // test sends two requests: the probe, then the introspection.
    await execute('gql', { operation: 'test' });
    assert.deepEqual(authorizations(a, atA), ['Bearer tok-A', 'Bearer tok-A']);
    assert.equal(b.upstream.requests, 0, 'B received nothing');

    // The owner sends a token with the move: it goes to B, and only there.
    assert.equal((await patched(patch('gql', { base_url: `${b.url}/api`, token: 'tok-B' }))).token_set, true);
    await execute('gql', { operation: 'test' });
    assert.deepEqual(authorizations(b), ['Bearer tok-B', 'Bearer tok-B']);
    assert.deepEqual(authorizations(a, atA), ['Bearer tok-A', 'Bearer tok-A']);

    // Moving back with `token: null` clears it: A gets no Authorization at all.
    assert.equal((await patched(patch('gql', { base_url: a.url, token: null }))).token_set, false);
    await execute('gql', { operation: 'test' });
    assert.deepEqual(authorizations(a, atA), ['Bearer tok-A', 'Bearer tok-A', undefined, undefined]);
    assert.equal(b.seen.length, 2);
  });

  test('SOAP: endpoint_url cannot move to another host without auth_value sent again', async () => {
    await created(
      put('soap-raw', 'soap-1.0.0', { endpoint_url: `${a.url}/soap`, auth_header: 'Authorization', auth_value: 'Basic QQ==' }),
    );
    const before = await configOf('soap-raw');
    const atA = a.seen.length;
    const atB = b.seen.length;

    const refused = await patch('soap-raw', { endpoint_url: `${b.url}/soap` });
    assert.deepEqual(issues(refused), [
      {
        path: 'config.auth_value',
        message: 'endpoint_url changes origin; send auth_value again (or null) so it is not sent to the new host',
      },
    ]);
    // Changing the header name alongside does not help: the value would still travel to B.
    assert.deepEqual(
      issues(await patch('soap-raw', { endpoint_url: `${b.url}/soap`, auth_header: 'X-Token' })).map((i) => i.path),
      ['config.auth_value'],
    );
    assert.deepEqual(await configOf('soap-raw'), before);
    await execute('soap-raw', { operation: 'test' });
    assert.deepEqual(authorizations(a, atA), ['Basic QQ==']);
    assert.equal(b.seen.length, atB, 'B received nothing');

    // `""` clears the secret as well as null does: B then gets no Authorization.
    const moved = await patched(patch('soap-raw', { endpoint_url: `${b.url}/soap`, auth_value: '' }));
    assert.equal(moved.auth_value_set, false);
    await execute('soap-raw', { operation: 'test' });
    assert.deepEqual(authorizations(b, atB), [undefined]);
  });

  test('SOAP: service_url cannot move to another host, nor be unset, without auth_value sent again', async () => {
    await created(
      put('soap-wsdl', 'soap-1.0.0', {
        endpoint_url: `${wsdlHost.url}/calc.wsdl`,
        service_url: `${a.url}/calculator`,
        auth_header: 'Authorization',
        auth_value: 'Bearer svc-A',
      }),
    );
    const before = await configOf('soap-wsdl');
    const add = { operation: 'send', method: 'Add', params: { a: 1, b: 2 }, port: 'CalculatorSoap' };
    const atA = a.seen.length;
    const atB = b.seen.length;

    const refused = await patch('soap-wsdl', { service_url: `${b.url}/calculator` });
    assert.deepEqual(issues(refused), [
      {
        path: 'config.auth_value',
        message: 'service_url changes origin; send auth_value again (or null) so it is not sent to the new host',
      },
    ]);
    // Unset, the call would go to the WSDL's soap:address: a host the owner never named either.
    assert.deepEqual(
      issues(await patch('soap-wsdl', { service_url: null })).map((i) => i.path),
      ['config.auth_value'],
    );
    // Both URLs at once: one issue per stored secret, naming both fields.
    assert.deepEqual(issues(await patch('soap-wsdl', { endpoint_url: `${b.url}/calc.wsdl`, service_url: b.url })), [
      {
        path: 'config.auth_value',
        message: 'endpoint_url and service_url change origin; send auth_value again (or null) so it is not sent to the new host',
      },
    ]);
    assert.deepEqual(await configOf('soap-wsdl'), before);
    assert.equal((await execute('soap-wsdl', add)).AddResult, 3);
    assert.deepEqual(a.seen.slice(atA), [{ request: 'POST /calculator', authorization: 'Bearer svc-A' }]);
    assert.equal(b.seen.length, atB, 'B received nothing');

    await patched(patch('soap-wsdl', { service_url: `${b.url}/calculator`, auth_value: 'Bearer svc-B' }));
    await execute('soap-wsdl', add);
    assert.deepEqual(b.seen.slice(atB), [{ request: 'POST /calculator', authorization: 'Bearer svc-B' }]);
    assert.equal(a.seen.length, atA + 1);
  });

  test('a change within the origin (path, query, default port, case) keeps the secret; scheme or port does not', async () => {
    await created(put('same', 'graphql-1.0.0', { base_url: 'https://crm.example.com/api', token: 't' }));
    for (const url of [
      'https://crm.example.com/v2/graphql?tenant=1',
      'https://crm.example.com:443/v3',
      'HTTPS://CRM.Example.COM/v4',
      'https://crm.example.com',
    ]) {
      assert.deepEqual(await patched(patch('same', { base_url: url })), {
        base_url: url,
        timeout_seconds: 30,
        token_set: true,
        auth: null,
        tls: null,
        ...unsetResilience,
      });
    }
    for (const url of ['http://crm.example.com', 'https://crm.example.com:8443', 'https://api.crm.example.com']) {
      assert.deepEqual(
        issues(await patch('same', { base_url: url })).map((i) => i.path),
        ['config.token'],
        url,
      );
    }
    assert.equal((await configOf('same')).base_url, 'https://crm.example.com');

    // The same on a live upstream: a new path on A keeps A's token.
    await created(put('same-live', 'graphql-1.0.0', { base_url: a.url, token: 'tok-live' }));
    await patched(patch('same-live', { base_url: `${a.url}/other?x=1` }));
    const atA = a.seen.length;
    await execute('same-live', { operation: 'test' });
    const seen = { request: 'POST /other/graphql?x=1', authorization: 'Bearer tok-live' };
    assert.deepEqual(a.seen.slice(atA), [seen, seen], 'the probe and the introspection');
    // A SOAP endpoint moving from raw to WSDL mode on the same origin keeps its secret too.
    await created(put('same-soap', 'soap-1.0.0', { endpoint_url: 'http://soap.example/svc', auth_value: 'v' }));
    assert.equal((await patched(patch('same-soap', { endpoint_url: 'http://soap.example:80/svc?wsdl' }))).auth_value_set, true);
  });

  test('with no secret stored any move is free; once one is stored it is not; cleared, it is free again', async () => {
    await created(put('free', 'graphql-1.0.0', {}));
    await patched(patch('free', { base_url: a.url }));
    await patched(patch('free', { base_url: b.url }));
    await patched(patch('free', { token: 'now-set' }));
    // Set → unset and unset → set are moves too while a secret is stored.
    assert.deepEqual(
      issues(await patch('free', { base_url: null })).map((i) => i.path),
      ['config.token'],
    );
    assert.deepEqual(
      issues(await patch('free', { base_url: a.url })).map((i) => i.path),
      ['config.token'],
    );
    await created(put('unset', 'graphql-1.0.0', { token: 'no-url-yet' }));
    assert.deepEqual(
      issues(await patch('unset', { base_url: b.url })).map((i) => i.path),
      ['config.token'],
    );
    // Leaving it unset is no move.
    await patched(patch('unset', { base_url: null, timeout_seconds: 5 }));

    await patched(patch('free', { token: null }));
    assert.deepEqual(await patched(patch('free', { base_url: a.url })), {
      base_url: a.url,
      timeout_seconds: 30,
      token_set: false,
      auth: null,
      tls: null,
      ...unsetResilience,
    });
    // A SOAP integration with a header name but no value has nothing to protect.
    await created(put('free-soap', 'soap-1.0.0', { endpoint_url: a.url, auth_header: 'Authorization' }));
    await patched(patch('free-soap', { endpoint_url: b.url, service_url: a.url }));
    // A PUT replaces everything (a secret left out is cleared), so it needs no such rule.
    await created(put('replaced', 'graphql-1.0.0', { base_url: a.url, token: 'old' }));
    const replaced = await put('replaced', 'graphql-1.0.0', { base_url: b.url }, writer);
    assert.equal(replaced.statusCode, 200, replaced.body);
    assert.equal(body(replaced).data.config.token_set, false);
  });

  test('URLs with user information are refused on PUT and PATCH for every URL field; nothing is stored', async () => {
    const cases: Array<[string, string, Record<string, unknown>]> = [
      ['graphql-1.0.0', 'base_url', { token: 't' }],
      ['soap-1.0.0', 'endpoint_url', {}],
      ['soap-1.0.0', 'service_url', { endpoint_url: 'https://soap.example/svc?wsdl' }],
    ];
    for (const [connector, field, rest] of cases) {
      for (const url of [
        'https://user:pass-w0rd@crm.example.com/api',
        'https://user@crm.example.com/api',
        'https://:pass-w0rd@crm.example.com/api',
        'http://u:p%40ss@[::1]:8080/x',
      ]) {
        const label = `${field} ${url}`;
        const id = `creds-${field}`;
        const refused = await put(id, connector, { ...rest, [field]: url });
        assert.deepEqual(
          issues(refused).map((i) => i.path),
          [`config.${field}`],
          label,
        );
        assert.ok(!refused.body.includes('pass-w0rd'), label);
        assert.equal((await get(id)).statusCode, 404, `${label}: nothing stored`);

        await created(put(`${id}-ok`, connector, { ...rest, [field]: 'https://crm.example.com/api' }));
        const before = await configOf(`${id}-ok`);
        // Same origin as stored, so only the user information is wrong.
        assert.deepEqual(
          issues(await patch(`${id}-ok`, { [field]: url })).map((i) => i.path),
          [`config.${field}`],
          label,
        );
        assert.deepEqual(await configOf(`${id}-ok`), before, `${label}: nothing changed`);
        assert.equal((await h.call(admin, { method: 'DELETE', url: `/api/v1/integrations/${id}-ok` })).statusCode, 200);
      }
    }
  });

  test('a URL stored with user information before it was refused is shown without it', async () => {
    await saveIntegration(
      h.storage.db,
      'acme',
      'legacy',
      {
        name: 'legacy',
        connector: 'soap-1.0.0',
        config: { endpoint_url: 'https://bob:hunter2-pw@soap.example/svc', service_url: 'https://soap.example/call' },
        secrets: {},
      },
      undefined,
    );
    const res = await get('legacy');
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(body(res).data.config.endpoint_url, 'https://soap.example/svc');
    assert.equal(body(res).data.config.service_url, 'https://soap.example/call');
    assert.ok(!res.body.includes('hunter2-pw'));
    assert.ok(!res.body.includes('bob'));
    const list = await h.call(admin, { method: 'GET', url: '/api/v1/integrations?limit=100' });
    assert.ok(!list.body.includes('hunter2-pw'));
  });
});

describe('credentialsMayGoTo: the origins of the URLs the owner configured, and no other', () => {
  const integration = {
    credentialOrigins: credentialOrigins(
      { endpoint_url: 'https://soap.example.com/svc?wsdl', service_url: 'http://[::1]:8080/call', namespace: 'urn:x' },
      ['endpoint_url', 'service_url', 'unset_url'],
    ),
  };

  test('same scheme, host and port, whatever the path, query, default port or letter case', () => {
    for (const url of [
      'https://soap.example.com/types.xsd',
      'https://soap.example.com:443/svc?xsd=xsd0',
      'HTTPS://SOAP.Example.COM/other',
      'https://user@soap.example.com/x',
      'http://[::1]:8080/elsewhere',
    ]) {
      assert.equal(credentialsMayGoTo(integration, url), true, url);
    }
  });

  test('another scheme, port or host (a subdomain, a trailing dot, the same host by another name) is another origin', () => {
    for (const url of [
      'http://soap.example.com/svc',
      'https://soap.example.com:8443/svc',
      'https://api.soap.example.com/svc',
      'https://soap.example.com./svc',
      'https://example.com/svc',
      'http://[::1]/call',
      'http://127.0.0.1:8080/call',
      'file:///etc/passwd',
      'not a url',
    ]) {
      assert.equal(credentialsMayGoTo(integration, url), false, url);
    }
  });
});

describe("a SOAP integration's auth header goes only to the origins it names, not to where its WSDL points", () => {
  let h: Harness;
  let admin: Auth;
  let runner: Auth;
  /** The WSDL's host (origin A) and another host (origin B: another port of 127.0.0.1), each logging what came. */
  let a: RawUpstream;
  let b: RawUpstream;
  const seen: Record<'a' | 'b', Array<[string, string | undefined]>> = { a: [], b: [] };
  const token = 'tok-for-A-only-4f1d9c';

  /** The greeter WSDL, its xsd:import's schemaLocation and its soap:address on the origins given. */
  const greeter = (typesAt: string, addressAt: string) =>
    greeterWsdl.replace('__BASE_URL__/types.xsd', `${typesAt}/types.xsd`).replaceAll('__BASE_URL__', addressAt);

  function serve(name: 'a' | 'b', other: () => string) {
    return httpUpstream((req, res) => {
      seen[name].push([`${req.method} ${req.url}`, req.headers['x-api-token'] as string | undefined]);
      const self = name === 'a' ? a.url : b.url;
      const xml = (text: string) => res.writeHead(200, { 'content-type': 'text/xml' }).end(text);
      if (req.url === '/types.xsd') xml(greeterTypes);
      else if (req.url === '/greeter.wsdl') xml(greeter(other(), self));
      else if (req.url === '/far.wsdl') xml(greeter(self, other()));
      else if (req.url === '/moved.wsdl') res.writeHead(302, { location: `${other()}/greeter.wsdl` }).end();
      else if (req.method === 'POST') xml(greetResponse);
      else res.writeHead(404).end();
    });
  }

  before(async () => {
    h = await harness();
    await h.tenant('acme');
    admin = { key: (await h.key('acme', ['integrations.*'])).key, tenant: 'acme' };
    runner = { key: (await h.key('acme', ['integrations.execute'])).key, tenant: 'acme' };
    a = await serve('a', () => b.url);
    b = await serve('b', () => a.url);
  });
  after(async () => {
    await h.close();
    await Promise.all([a?.close(), b?.close()]);
  });

  const put = async (id: string, config: Record<string, unknown>) => {
    const res = await h.call(admin, {
      method: 'PUT',
      url: `/api/v1/integrations/${id}`,
      payload: { connector: 'soap-1.0.0', config },
    });
    assert.ok(res.statusCode === 201 || res.statusCode === 200, res.body);
  };
  const greet = (id: string) =>
    h.call(runner, {
      method: 'POST',
      url: `/api/v1/integrations/${id}/execute`,
      payload: { operation: 'send', method: 'Greet', params: { name: 'Ann' } },
    });
  const since = (name: 'a' | 'b', from: number) => seen[name].slice(from);

  test('a WSDL on A importing an XSD from B: A gets the header with the WSDL and the call, B gets none', async () => {
    const [atA, atB] = [seen.a.length, seen.b.length];
    await put('imports', { endpoint_url: `${a.url}/greeter.wsdl`, auth_header: 'X-Api-Token', auth_value: token });
    const res = await greet('imports');
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(body(res).data, { GreetResult: 'Hello, Ann!' });
    assert.deepEqual(since('a', atA), [
      ['GET /greeter.wsdl', token],
      ['POST /imported', token],
    ]);
    assert.deepEqual(since('b', atB), [['GET /types.xsd', undefined]]);
  });

  test('a soap:address on B and no service_url: nothing is sent (422), until service_url names B', async () => {
    const [atA, atB] = [seen.a.length, seen.b.length];
    await put('far', { endpoint_url: `${a.url}/far.wsdl`, auth_header: 'X-Api-Token', auth_value: token });
    const refused = await greet('far');
    const error = assertError(refused, 422, 'integration_misconfigured');
    assert.deepEqual(error.details, {
      field: 'config.service_url',
      address: `${b.url}/imported`,
      origin: b.url,
      credentials: ['config.auth'],
    });
    assert.match(error.message, /Set config\.service_url/);
    assert.deepEqual(since('b', atB), [], 'B received nothing');
    assert.deepEqual(since('a', atA), [
      ['GET /far.wsdl', token],
      ['GET /types.xsd', token],
    ]);

    // The owner names B: the call, and the header, go there.
    await put('far', {
      endpoint_url: `${a.url}/far.wsdl`,
      service_url: `${b.url}/imported`,
      auth_header: 'X-Api-Token',
      auth_value: token,
    });
    assert.equal((await greet('far')).statusCode, 200);
    assert.deepEqual(since('b', atB), [['POST /imported', token]]);

    // Without a credential there is nothing to keep from B: the WSDL's address is called as it says.
    await put('far-open', { endpoint_url: `${a.url}/far.wsdl`, auth_header: 'X-Api-Token' });
    assert.equal((await greet('far-open')).statusCode, 200);
    assert.deepEqual(since('b', atB).at(-1), ['POST /imported', undefined]);
  });

  test('a WS-Security password: a soap:address on B gets nothing (422 naming B) until service_url names B', async () => {
    const [atA, atB] = [seen.a.length, seen.b.length];
    const password = 'wsse-pass-for-A-only-7c2e';
    const wsSecurity = { username_token: { username: 'ada', password, password_type: 'text' } };
    await put('far-wsse', { endpoint_url: `${a.url}/far.wsdl`, ws_security: wsSecurity });
    const error = assertError(await greet('far-wsse'), 422, 'integration_misconfigured');
    assert.equal(error.details?.origin, b.url);
    assert.deepEqual(error.details?.credentials, ['config.ws_security']);
    assert.match(error.message, new RegExp(`on ${b.url.replaceAll('.', '\\.')}`));
    assert.deepEqual(since('b', atB), [], 'B received nothing, so no password');
    assert.ok(
      since('a', atA).every(([request]) => request.startsWith('GET ')),
      'A was asked for documents only',
    );

    await put('far-wsse', { endpoint_url: `${a.url}/far.wsdl`, service_url: `${b.url}/imported`, ws_security: wsSecurity });
    assert.equal((await greet('far-wsse')).statusCode, 200);
    assert.deepEqual(
      since('b', atB).map(([request]) => request),
      ['POST /imported'],
    );
  });

  test('a TLS client certificate: a soap:address on B gets nothing (422), its key is for the origins named', async () => {
    const atB = seen.b.length;
    const pki = new TestPki();
    try {
      pki.ca('ca', 'Client CA');
      const client = pki.sign('ca', 'client', { cn: 'ix-client', usage: 'clientAuth' });
      await put('far-tls', {
        endpoint_url: `${a.url}/far.wsdl`,
        tls: { client_certificate: client.cert, client_key: client.key },
      });
      const error = assertError(await greet('far-tls'), 422, 'integration_misconfigured');
      assert.deepEqual(error.details?.credentials, ['config.tls.client_key']);
      assert.deepEqual(since('b', atB), []);
    } finally {
      pki.remove();
    }
  });

  test('a WSDL fetch answered by a redirect to B is not followed: B gets nothing', async () => {
    const atB = seen.b.length;
    await put('moved', { endpoint_url: `${a.url}/moved.wsdl`, auth_header: 'X-Api-Token', auth_value: token });
    const error = assertError(await greet('moved'), 502, 'upstream_http_error');
    assert.equal(error.details?.upstream_status, 302);
    assert.deepEqual(since('b', atB), []);
  });
});
