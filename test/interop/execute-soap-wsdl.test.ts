import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { assertError, issuePaths, assertOk as ok } from '../support/assertions.ts';
import { type Auth, type Harness, harness } from '../support/harness.ts';
import { type PhpSoapServer, type SoapLogEntry, startPhpSoapServer } from '../support/php-soap-server.ts';
import { httpUpstream, type RawUpstream } from '../support/raw-upstream.ts';
import { until } from '../support/until.ts';
import { compareXml } from '../support/xml-compare.ts';

/** SOAP WSDL mode end to end through app.inject() against PHP's SoapServer (docs/execute.md#wsdl-mode). */

const CALC = 'http://example.com/calculator';
const SOAP11 = 'http://schemas.xmlsoap.org/soap/envelope/';
const SOAP12 = 'http://www.w3.org/2003/05/soap-envelope';
const operations = ['Add', 'Echo', 'SumList', 'GetOrder', 'Fail', 'Slow', 'WhoAmI'];
const calculatorServices = [
  {
    name: 'CalculatorService',
    ports: [
      { name: 'CalculatorSoap', soap_version: '1.1', operations },
      { name: 'CalculatorSoap12', soap_version: '1.2', operations },
    ],
  },
];
type ListedServices = Array<{ name: string; ports: Array<Record<string, unknown> & { signatures?: unknown }> }>;
/** The services `test` lists, without the signatures (asserted on their own below). */
function withoutSignatures(services: ListedServices) {
  return services.map((service) => ({
    ...service,
    ports: service.ports.map(({ signatures: _signatures, ...port }) => port),
  }));
}
const calculatorWsdl = readFileSync(new URL('../support/fixtures/soap/calculator.wsdl', import.meta.url), 'utf8');
const passwd = readFileSync('/etc/passwd', 'utf8').split('\n')[0];

async function app(env: Record<string, string> = {}): Promise<{ h: Harness; auth: Auth }> {
  const h = await harness(env);
  await h.tenant('acme');
  return { h, auth: await h.auth('acme', ['integrations.*']) };
}
const put = (s: { h: Harness; auth: Auth }, id: string, config: Record<string, unknown>) =>
  s.h.call(s.auth, { method: 'PUT', url: `/api/v1/integrations/${id}`, payload: { connector: 'soap-1.0.0', config } });
const run = (s: { h: Harness; auth: Auth }, id: string, payload: Record<string, unknown>) =>
  s.h.call(s.auth, { method: 'POST', url: `/api/v1/integrations/${id}/execute`, payload });

const posts = (server: PhpSoapServer): SoapLogEntry[] => server.log().filter((e) => e.method === 'POST');
const gets = (server: PhpSoapServer): string[] =>
  server
    .log()
    .filter((e) => e.method === 'GET')
    .map((e) => `${e.path}${e.query ? `?${e.query}` : ''}`);

describe('execute with the SOAP connector in WSDL mode', () => {
  let s: { h: Harness; auth: Auth };
  let soap: PhpSoapServer;
  let other: PhpSoapServer;
  let secured: PhpSoapServer;
  let fake: RawUpstream;
  /** What the fake upstream answers to a POST: status and XML body. */
  let answer: [number, string] = [200, ''];
  /** send or receive `method` through integration `id`. */
  const call = (id: string, operation: string, method: string, params?: object, extra: object = {}) =>
    run(s, id, { operation, method, params, ...extra });
  const fakeDocs: Record<string, string> = {};

  before(async () => {
    [s, soap, other, secured] = await Promise.all([
      app(),
      startPhpSoapServer(),
      startPhpSoapServer(),
      startPhpSoapServer({ requireToken: 'tok-1' }),
    ]);
    fake = await httpUpstream((req, res) => {
      const doc = fakeDocs[req.url ?? ''];
      const [status, text] = req.method === 'POST' ? answer : doc === undefined ? [404, 'no such WSDL'] : [200, doc];
      res.writeHead(status, { 'content-type': 'text/xml' }).end(text);
    });
    const fill = (origin: string) => calculatorWsdl.replaceAll('__BASE_URL__', origin);
    fakeDocs['/calc.wsdl'] = fill(fake.url);
    // A first service with only a SOAP 1.2 port, in front of the calculator's: addresses on the PHP server.
    const only12 = `<wsdl:service name="Only12"><wsdl:port name="P12" binding="tns:CalculatorSoap12Binding"><soap12:address location="${soap.origin}/calculator12"/></wsdl:port></wsdl:service>`;
    fakeDocs['/two.wsdl'] = fill(soap.origin).replace('<wsdl:service name="CalculatorService">', `${only12}$&`);
    const head = '<?xml version="1.0"?>';
    const defs =
      'xmlns:wsdl="http://schemas.xmlsoap.org/wsdl/" xmlns:xsd="http://www.w3.org/2001/XMLSchema" targetNamespace="urn:x"';
    fakeDocs['/xxe.wsdl'] =
      `${head}<!DOCTYPE d [<!ENTITY xxe SYSTEM "file:///etc/passwd">]><wsdl:definitions ${defs} name="&xxe;"><wsdl:documentation>&xxe;</wsdl:documentation></wsdl:definitions>`;
    const lol = Array.from({ length: 9 }, (_, i) => `<!ENTITY lol${i + 1} "${`&lol${i};`.repeat(10)}">`).join('');
    fakeDocs['/laughs.wsdl'] = `${head}<!DOCTYPE d [<!ENTITY lol0 "lol">${lol}]><wsdl:definitions ${defs} name="&lol9;"/>`;
    fakeDocs['/file-import.wsdl'] =
      `${head}<wsdl:definitions ${defs}><wsdl:types><xsd:schema targetNamespace="urn:x"><xsd:import namespace="urn:y" schemaLocation="file:///etc/passwd"/></xsd:schema></wsdl:types></wsdl:definitions>`;
    // Generators leave placeholders for the address: no URL to send to.
    fakeDocs['/placeholder.wsdl'] = fill('REPLACE_WITH_ACTUAL_URL');
    fakeDocs['/page.wsdl'] = '<html><head><title>Sign in</title></head><body>Sign in first</body></html>';
    fakeDocs['/doctype-page.wsdl'] = '<!DOCTYPE html><html><body>Sign in first</body></html>';
    for (const [id, config] of Object.entries({
      calc: { endpoint_url: soap.url('/calculator?wsdl') },
      slow: { endpoint_url: soap.url('/calculator?wsdl'), timeout_seconds: 1 },
      fake: { endpoint_url: `${fake.url}/calc.wsdl` },
    })) {
      assert.equal((await put(s, id, config)).statusCode, 201);
    }
  });
  after(async () => {
    await Promise.all([s.h.close(), soap.close(), other.close(), secured.close(), fake.close()]);
  });

  test('?wsdl, ?WSDL, ?singleWsdl and .wsdl select WSDL mode; test lists services, ports and operations', async () => {
    for (const path of ['/calculator?wsdl', '/calculator?WSDL', '/calculator?singleWsdl', '/calculator.wsdl']) {
      await put(s, 'modes', { endpoint_url: soap.url(path) });
      const data = ok(await run(s, 'modes', { operation: 'test' }));
      assert.deepEqual(
        { ...data, details: { ...data.details, services: withoutSignatures(data.details.services) } },
        {
          message: 'SOAP connection test succeeded',
          details: { endpoint_url: soap.url(path), mode: 'wsdl', services: calculatorServices, circuit: 'closed' },
        },
      );
    }
    await put(s, 'modes', { endpoint_url: soap.url('/calculator') });
    assert.deepEqual(ok(await run(s, 'modes', { operation: 'test' })).details, {
      endpoint_url: soap.url('/calculator'),
      mode: 'raw',
      http_status: 405,
      circuit: 'closed',
    });
  });

  test('send and receive: Add, Echo with and without note, SumList (a list), GetOrder (repeated complex lines)', async () => {
    ok(await run(s, 'calc', { operation: 'test' }));
    soap.clearLog();
    const cases: Array<[string, Record<string, unknown>, unknown, string]> = [
      ['Add', { a: 2, b: 3 }, { AddResult: 5 }, '<a>2</a><b>3</b>'],
      ['Echo', { message: 'hi' }, { EchoResult: 'hi' }, '<message>hi</message>'],
      ['Echo', { message: 'hi', note: 'n' }, { EchoResult: 'hi', NoteResult: 'n' }, '<message>hi</message><note>n</note>'],
      ['SumList', { numbers: [1, 2, 3] }, { SumListResult: 6 }, '<numbers>1</numbers><numbers>2</numbers><numbers>3</numbers>'],
    ];
    for (const operation of ['send', 'receive']) {
      for (const [method, params, expected, inner] of cases) {
        assert.deepEqual(ok(await run(s, 'calc', { operation, method, params })), expected);
        const sent = posts(soap).at(-1);
        assert.equal(sent?.path, '/calculator');
        assert.equal(sent?.soapAction, `"${CALC}/${method}"`);
        assert.equal(sent?.contentType, 'text/xml; charset=utf-8');
        // The calculator's schema is elementFormDefault="qualified": the params are in its namespace too.
        const envelope = `<s:Envelope xmlns:s="${SOAP11}"><s:Body><${method} xmlns="${CALC}">${inner}</${method}></s:Body></s:Envelope>`;
        assert.deepEqual(compareXml(sent?.body ?? '', envelope), [], sent?.body);
      }
    }
    // price is an xs:decimal: the text as sent (README, SOAP); quantity an xs:int.
    const line = (i: number) => ({ sku: `SKU-${i}`, quantity: i, price: `${i}0.99` });
    const order = (id: string, lines?: unknown[]) => ({ GetOrderResult: { id, customer: 'ACME Corp', ...(lines && { lines }) } });
    assert.deepEqual(ok(await call('calc', 'receive', 'GetOrder', { id: 'A' })), order('A', [line(1), line(2)]));
    assert.deepEqual(ok(await call('calc', 'send', 'GetOrder', { id: 'B-1' })), order('B-1', [line(1)]));
    assert.deepEqual(ok(await call('calc', 'send', 'GetOrder', { id: 'C-0' })), order('C-0'));
    assert.deepEqual(gets(soap), [], 'the WSDL was fetched once, before');
  });

  test('$attributes and $value in params and soap_headers as in raw mode; no raw $xml', async () => {
    soap.clearLog();
    const soapHeaders = { Trace: { $attributes: { xmlns: 'urn:trace' }, id: 't-1' } };
    const params = { message: { $attributes: { lang: 'en' }, $value: 'hi' } };
    assert.deepEqual(ok(await call('calc', 'send', 'Echo', params, { soap_headers: soapHeaders })), { EchoResult: 'hi' });
    const [sent] = posts(soap);
    const expected =
      `<s:Envelope xmlns:s="${SOAP11}"><s:Header><Trace xmlns="urn:trace"><id>t-1</id></Trace></s:Header>` +
      `<s:Body><Echo xmlns="${CALC}"><message lang="en">hi</message></Echo></s:Body></s:Envelope>`;
    assert.deepEqual(compareXml(sent.body, expected), [], sent.body);
    soap.clearLog();
    assert.deepEqual(issuePaths(await call('calc', 'send', 'Echo', { message: 'x', note: { $xml: '<evil/>' } })), [
      'params.note.$xml',
    ]);
    assert.deepEqual(soap.log(), []);
  });

  test('the default port is the first SOAP 1.1 one; port CalculatorSoap12 speaks SOAP 1.2; unknown service or port: 400', async () => {
    soap.clearLog();
    const add = { operation: 'send', method: 'Add', params: { a: 2, b: 3 } };
    const port12 = { service: 'CalculatorService', port: 'CalculatorSoap12' };
    assert.deepEqual(ok(await run(s, 'calc', { ...add, ...port12 })), { AddResult: 5 });
    const [sent] = posts(soap);
    assert.equal(sent.path, '/calculator12');
    assert.equal(sent.contentType, `application/soap+xml; charset=utf-8; action="${CALC}/Add"`);
    assert.equal(sent.soapAction, null);
    assert.ok(sent.body.includes(`<soap:Envelope xmlns:soap="${SOAP12}"`), sent.body);
    soap.clearLog();
    assert.deepEqual(issuePaths(await run(s, 'calc', { ...add, service: 'Nope' })), ['service']);
    assert.deepEqual(issuePaths(await run(s, 'calc', { ...add, port: 'Nope' })), ['port']);
    assert.deepEqual(issuePaths(await run(s, 'calc', { ...add, service: 'CalculatorService', port: 'Nope' })), ['port']);
    assert.deepEqual(soap.log(), []);
  });

  test('with several services: the default is in the first one; a port alone is found in any of them', async () => {
    await put(s, 'two', { endpoint_url: `${fake.url}/two.wsdl` });
    soap.clearLog();
    const add = { operation: 'send', method: 'Add', params: { a: 1, b: 1 } };
    for (const choice of [{}, { port: 'CalculatorSoap' }, { port: 'CalculatorSoap12' }, { service: 'CalculatorService' }]) {
      assert.deepEqual(ok(await run(s, 'two', { ...add, ...choice })), { AddResult: 2 });
    }
    assert.deepEqual(
      posts(soap).map((e) => e.path),
      ['/calculator12', '/calculator', '/calculator12', '/calculator'],
    );
    soap.clearLog();
    const error = assertError(await run(s, 'two', { ...add, port: 'Nope' }), 400, 'validation_failed');
    assert.deepEqual(error.details?.issues, [
      { path: 'port', message: 'not in the WSDL; ports: P12, CalculatorSoap, CalculatorSoap12' },
    ]);
    assert.deepEqual(soap.log(), []);
  });

  test('unknown_soap_method and invalid_soap_params are answered before anything is sent', async () => {
    soap.clearLog();
    const unknown = assertError(await call('calc', 'send', 'Divide', { a: 1 }), 400, 'unknown_soap_method');
    assert.deepEqual(unknown.details, { method: 'Divide', available_methods: operations });
    const invalid = assertError(await call('calc', 'receive', 'Echo', { msg: 'x' }), 400, 'invalid_soap_params');
    assert.deepEqual(invalid.details, {
      issues: [
        { path: 'params.msg', message: 'is not a parameter of Echo' },
        { path: 'params.message', message: 'is required' },
      ],
      expected: [
        { name: 'message', type: 'xs:string', required: true, repeated: false },
        { name: 'note', type: 'xs:string', required: false, repeated: false },
      ],
    });
    const list = assertError(await call('calc', 'send', 'Add', { a: [1], b: 2 }), 400, 'invalid_soap_params');
    assert.deepEqual(list.details?.issues, [{ path: 'params.a', message: 'takes one value, not a list' }]);
    assert.deepEqual(soap.log(), []);
  });

  test('a Fault is 502 soap_fault with normalised details, on the SOAP 1.1 and the 1.2 port', async () => {
    const fail = { operation: 'send', method: 'Fail', params: { reason: 'no stock' } };
    const fault11 = assertError(await run(s, 'calc', fail), 502, 'soap_fault');
    assert.equal(fault11.message, 'no stock');
    const once = { attempts: 1 };
    assert.deepEqual(fault11.details, {
      fault_code: 'SOAP-ENV:Client',
      fault_string: 'no stock',
      detail: { code: '42' },
      ...once,
    });
    const fault12 = assertError(await run(s, 'calc', { ...fail, port: 'CalculatorSoap12' }), 502, 'soap_fault');
    assert.deepEqual(fault12.details, { fault_code: 'env:Sender', fault_string: 'no stock', detail: { code: '42' }, ...once });
  });

  test('timeout_seconds elapsed: 504 upstream_timeout; send is tried once, receive max_attempts (3) times', async () => {
    ok(await run(s, 'slow', { operation: 'test' }));
    for (const operation of ['send', 'receive']) {
      const attempts = operation === 'send' ? 1 : 3;
      soap.clearLog();
      const started = performance.now();
      const error = assertError(await call('slow', operation, 'Slow', { seconds: 2 }), 504, 'upstream_timeout');
      assert.ok(performance.now() - started >= 950 * attempts);
      assert.deepEqual(error.details, { timeout_seconds: 1, attempts });
      // The PHP server logs a call when it has handled it: wait for every attempt's entry.
      await until(
        () => posts(soap).length >= attempts,
        () => `${attempts} calls in the PHP server's log`,
      );
      assert.deepEqual(
        posts(soap).map((e) => [e.path, e.soapAction]),
        Array(attempts).fill(['/calculator', `"${CALC}/Slow"`]),
      );
    }
  });

  test('auth_header/auth_value go with the WSDL fetch, the xsd import and the calls; without a value: 401 → upstream_http_error', async () => {
    const auth = { auth_header: 'X-Auth-Token', auth_value: 'tok-1' };
    await put(s, 'sec', { endpoint_url: secured.url('/calculator?wsdl'), ...auth });
    await put(s, 'sec-imported', { endpoint_url: secured.url('/imported?wsdl'), ...auth });
    // The service echoes the credential it received: the caller sees that it arrived, never the value (docs/security.md#redaction).
    assert.deepEqual(ok(await call('sec', 'send', 'WhoAmI')), { WhoAmIResult: '[REDACTED]' });
    assert.deepEqual(ok(await call('sec-imported', 'send', 'Greet', { name: 'Ann' })), { GreetResult: 'Hello, Ann!' });
    assert.deepEqual(
      secured.log().map((e) => [e.method, e.path, e.authToken]),
      [
        ['GET', '/calculator', 'tok-1'],
        ['POST', '/calculator', 'tok-1'],
        ['GET', '/imported', 'tok-1'],
        ['GET', '/types.xsd', 'tok-1'],
        ['POST', '/imported', 'tok-1'],
      ],
    );
    secured.clearLog();
    await put(s, 'sec-none', { endpoint_url: secured.url('/calculator?wsdl'), auth_header: 'X-Auth-Token' });
    const error = assertError(await call('sec-none', 'send', 'WhoAmI'), 502, 'upstream_http_error');
    assert.deepEqual(error.details, {
      upstream_status: 401,
      body_excerpt: 'Unauthorized: missing or wrong X-Auth-Token\n',
      attempts: 1,
    });
    assert.deepEqual(
      secured.log().map((e) => [e.method, e.path, e.authToken]),
      [['GET', '/calculator', null]],
    );
  });

  test('the WSDL is fetched once per integration, also for concurrent first calls, and again after a change', async () => {
    const add = { operation: 'send', method: 'Add', params: { a: 1, b: 2 } };
    await put(s, 'cached', { endpoint_url: soap.url('/calculator?wsdl') });
    await put(s, 'cached-too', { endpoint_url: soap.url('/calculator?wsdl') });
    soap.clearLog();
    const first = await Promise.all(Array.from({ length: 5 }, () => run(s, 'cached', add)));
    for (const res of first) assert.deepEqual(ok(res), { AddResult: 3 });
    ok(await run(s, 'cached', add));
    assert.deepEqual(gets(soap), ['/calculator?wsdl']);
    assert.equal(posts(soap).length, 6);
    ok(await run(s, 'cached-too', add)); // its own entry
    assert.deepEqual(gets(soap), ['/calculator?wsdl', '/calculator?wsdl']);
    soap.clearLog();
    const patch = { method: 'PATCH', url: '/api/v1/integrations/cached', payload: { config: { timeout_seconds: 20 } } } as const;
    assert.equal((await s.h.call(s.auth, patch)).statusCode, 200);
    ok(await run(s, 'cached', add));
    ok(await run(s, 'cached', add));
    assert.deepEqual(gets(soap), ['/calculator?wsdl']);
  });

  test('test gives a signature per operation: parameters with types, requiredness, lists and nested children', async () => {
    await put(s, 'signatures', { endpoint_url: soap.url('/calculator?wsdl') });
    const [port] = ok(await run(s, 'signatures', { operation: 'test' })).details.services[0].ports;
    const byName = Object.fromEntries(port.signatures.map((sig: { operation: string }) => [sig.operation, sig]));
    assert.deepEqual(Object.keys(byName), operations);
    const int = (name: string) => ({ name, type: 'xs:int', required: true, repeated: false });
    assert.deepEqual(byName.Add, { operation: 'Add', input: 'Add', parameters: [int('a'), int('b')], output: 'AddResponse' });
    assert.deepEqual(byName.Echo.parameters, [
      { name: 'message', type: 'xs:string', required: true, repeated: false },
      { name: 'note', type: 'xs:string', required: false, repeated: false },
    ]);
    assert.deepEqual(byName.SumList.parameters, [{ name: 'numbers', type: 'xs:int', required: true, repeated: true }]);
  });

  test('an integration deleted and created again under its id does not get its predecessor’s WSDL', async () => {
    await put(s, 'again', { endpoint_url: soap.url('/calculator?wsdl') });
    assert.deepEqual(withoutSignatures(ok(await run(s, 'again', { operation: 'test' })).details.services), calculatorServices);
    assert.equal((await s.h.call(s.auth, { method: 'DELETE', url: '/api/v1/integrations/again' })).statusCode, 200);
    await put(s, 'again', { endpoint_url: soap.url('/imported?wsdl') });
    assert.deepEqual(withoutSignatures(ok(await run(s, 'again', { operation: 'test' })).details.services), [
      { name: 'GreeterService', ports: [{ name: 'GreeterSoap', soap_version: '1.1', operations: ['Greet'] }] },
    ]);
  });

  test('IX_WSDL_CACHE_SIZE bounds the cache; IX_WSDL_CACHE_TTL_SECONDS expires entries', async (t) => {
    const small = await app({ IX_WSDL_CACHE_SIZE: '1' });
    const brief = await app({ IX_WSDL_CACHE_TTL_SECONDS: '3' });
    try {
      for (const id of ['one', 'two']) await put(small, id, { endpoint_url: soap.url('/calculator?wsdl') });
      await put(brief, 'one', { endpoint_url: soap.url('/calculator?wsdl') });
      soap.clearLog();
      for (const id of ['one', 'two', 'one', 'one']) ok(await run(small, id, { operation: 'test' }));
      assert.equal(gets(soap).length, 3, 'one, two, one again: the last call is a hit');
      soap.clearLog();
      // The app's clock (Date, in this process) stands still from the first load, then moves on to the TTL's end.
      const loadedAt = Date.now();
      t.mock.timers.enable({ apis: ['Date'], now: loadedAt });
      ok(await run(brief, 'one', { operation: 'test' }));
      t.mock.timers.setTime(loadedAt + 2999);
      ok(await run(brief, 'one', { operation: 'test' }));
      assert.equal(gets(soap).length, 1, 'within the TTL: a hit');
      t.mock.timers.setTime(loadedAt + 3000);
      ok(await run(brief, 'one', { operation: 'test' }));
      assert.equal(gets(soap).length, 2, 'at the TTL: loaded again');
    } finally {
      await Promise.all([small.h.close(), brief.h.close()]);
    }
  });

  test('service_url replaces the WSDL’s address, for every port', async () => {
    await put(s, 'moved', { endpoint_url: soap.url('/calculator.wsdl'), service_url: other.url('/calculator') });
    soap.clearLog();
    other.clearLog();
    assert.deepEqual(ok(await call('moved', 'send', 'Add', { a: 4, b: 4 })), { AddResult: 8 });
    assert.deepEqual(ok(await call('moved', 'send', 'Add', { a: 4, b: 5 }, { port: 'CalculatorSoap12' })), { AddResult: 9 });
    assert.deepEqual(gets(soap), ['/calculator.wsdl']);
    assert.deepEqual(posts(soap), []);
    assert.deepEqual(
      other.log().map((e) => [e.method, e.path, e.contentType]),
      [
        ['POST', '/calculator', 'text/xml; charset=utf-8'],
        ['POST', '/calculator', `application/soap+xml; charset=utf-8; action="${CALC}/Add"`],
      ],
    );
  });

  test('a port whose address is no http(s) URL: 422 integration_misconfigured pointing at service_url; service_url mends it', async () => {
    await put(s, 'placeholder', { endpoint_url: `${fake.url}/placeholder.wsdl` });
    const refused = assertError(await call('placeholder', 'send', 'Add', { a: 1, b: 2 }), 422, 'integration_misconfigured');
    assert.match(
      refused.message,
      /port CalculatorSoap has no http\(s\) address \("REPLACE_WITH_ACTUAL_URL\/calculator"\); set config\.service_url/,
    );
    assert.deepEqual(refused.details, { field: 'config.service_url' });
    await put(s, 'placeholder', { endpoint_url: `${fake.url}/placeholder.wsdl`, service_url: soap.url('/calculator') });
    assert.deepEqual(ok(await call('placeholder', 'send', 'Add', { a: 1, b: 2 })), { AddResult: 3 });
  });

  test('a WSDL whose types come from an imported xsd', async () => {
    await put(s, 'greeter', { endpoint_url: soap.url('/imported?wsdl') });
    soap.clearLog();
    assert.deepEqual(ok(await call('greeter', 'receive', 'Greet', { name: 'Bo' })), { GreetResult: 'Hello, Bo!' });
    assert.deepEqual(gets(soap), ['/imported?wsdl', '/types.xsd']);
  });

  test('sync and batch', async () => {
    const add = { method: 'Add', params: { a: 2, b: 3 } };
    const echo = { method: 'Echo', params: { message: 'hi' } };
    assert.deepEqual(ok(await run(s, 'calc', { operation: 'sync', outbound: add, inbound: echo })), {
      message_count: 2,
      outbound: { AddResult: 5 },
      inbound: { EchoResult: 'hi' },
    });
    const fail = { method: 'Fail', params: { reason: 'nope' } };
    const entries = [add, fail, echo].map((data, i) => ({ operation: i === 0 ? 'send' : 'receive', data }));
    const fault = { fault_code: 'SOAP-ENV:Client', fault_string: 'nope', detail: { code: '42' } };
    assert.deepEqual(ok(await run(s, 'calc', { operation: 'batch', operations: entries })), {
      message_count: 2,
      succeeded: 2,
      failed: 1,
      skipped: 0,
      results: [
        { index: 0, operation: 'send', success: true, data: { AddResult: 5 } },
        { index: 1, operation: 'receive', success: false, error: { code: 'soap_fault', message: 'nope', details: fault } },
        { index: 2, operation: 'receive', success: true, data: { EchoResult: 'hi' } },
      ],
    });
    soap.clearLog();
    const bad = await run(s, 'calc', {
      operation: 'sync',
      outbound: add,
      inbound: { method: 'Echo', params: { 'bad name': 1 } },
    });
    assert.deepEqual(issuePaths(bad), ['inbound.params.bad name']);
    assert.deepEqual(soap.log(), [], 'the outbound part was not sent');
  });

  test('configuration: endpoint_url needed to run; header name, header value and soap_version checked at PUT', async () => {
    assert.equal((await put(s, 'empty', {})).statusCode, 201);
    const missing = assertError(await run(s, 'empty', { operation: 'test' }), 422, 'integration_misconfigured');
    assert.deepEqual(missing.details, { missing: ['config.endpoint_url'], circuit: 'closed' });
    const config = { auth_header: 'Bad Header', auth_value: 'a\r\nX-Evil: 1', soap_version: '1.3' };
    assert.deepEqual(issuePaths(await put(s, 'bad', config)), ['config.auth_header', 'config.auth_value', 'config.soap_version']);
    assert.deepEqual(issuePaths(await put(s, 'bad', { soap_version: '1.3' })), ['config.soap_version']);
    assert.deepEqual(issuePaths(await put(s, 'bad', { auth_value: 'x\ny' })), ['config.auth_value']);
    // A header the transport sets itself cannot carry the credential: the integration cannot run (never a 500).
    await put(s, 'framing', { endpoint_url: soap.url('/calculator?wsdl'), auth_header: 'Content-Length', auth_value: '3' });
    soap.clearLog();
    const framing = assertError(await run(s, 'framing', { operation: 'test' }), 422, 'integration_misconfigured');
    assert.deepEqual(framing.details, { field: 'config.auth_header', circuit: 'closed' });
    assert.deepEqual(soap.log(), []);
  });

  test('XML attacks and junk in a WSDL: refused, nothing expanded, no local file read', async () => {
    const cases: Array<[string, string, RegExp, object?]> = [
      ['/xxe.wsdl', 'upstream_invalid_response', /DTD/],
      ['/laughs.wsdl', 'upstream_invalid_response', /DTD/],
      ['/file-import.wsdl', 'upstream_invalid_response', /file:\/\/\/etc\/passwd, which is not an http\(s\) URL/],
      ['/page.wsdl', 'upstream_invalid_response', /WSDL could not be read/],
      ['/doctype-page.wsdl', 'upstream_invalid_response', /DTD/],
      [
        '/missing.wsdl',
        'upstream_http_error',
        /HTTP 404/,
        { upstream_status: 404, body_excerpt: 'no such WSDL', attempts: 1, circuit: 'closed' },
      ],
    ];
    for (const [path, code, message, details] of cases) {
      await put(s, 'evil', { endpoint_url: fake.url + path });
      const requests = fake.requests;
      const res = await run(s, 'evil', { operation: 'test' });
      const error = assertError(res, 502, code);
      assert.match(error.message, message, path);
      if (details) assert.deepEqual(error.details, details);
      assert.ok(!res.body.includes(passwd) && !res.body.includes('lollollol') && res.body.length < 2048, res.body);
      assert.equal(fake.requests - requests, 1, `${path}: the WSDL only`);
    }
  });

  test('the answer to a call is held to the contract: status, envelope, DTD (node-soap alone is lenient)', async () => {
    const envelope = (inner: string) => `<s:Envelope xmlns:s="${SOAP11}"><s:Body>${inner}</s:Body></s:Envelope>`;
    const result = (inner: string) => envelope(`<EchoResponse xmlns="${CALC}"><EchoResult>${inner}</EchoResult></EchoResponse>`);
    const echo = () => call('fake', 'send', 'Echo', { message: 'x' });
    answer = [200, result('<![CDATA[<!DOCTYPE html><p>report</p>]]>')];
    assert.deepEqual(ok(await echo()), { EchoResult: '<!DOCTYPE html><p>report</p>' });
    answer = [500, result('x')];
    assert.deepEqual(assertError(await echo(), 502, 'upstream_http_error').details, {
      upstream_status: 500,
      body_excerpt: answer[1],
      attempts: 1,
    });
    answer = [200, '<foo/>'];
    assert.equal(assertError(await echo(), 502, 'upstream_invalid_response').details?.upstream_status, 200);
    answer = [200, `<!DOCTYPE s:Envelope [<!ENTITY x SYSTEM "file:///etc/passwd">]>${result('&x;')}`];
    const xxe = await echo();
    assertError(xxe, 502, 'upstream_invalid_response');
    assert.ok(!xxe.body.includes(passwd));
    answer = [200, envelope('<s:Fault><faultcode>s:Server</faultcode><faultstring>down</faultstring></s:Fault>')];
    const fault = { fault_code: 's:Server', fault_string: 'down', detail: null, attempts: 1 };
    assert.deepEqual(assertError(await echo(), 502, 'soap_fault').details, fault);
  });
});
