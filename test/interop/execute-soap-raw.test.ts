import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { assertError, issuePaths, assertOk as ok } from '../support/assertions.ts';
import { type Harness, harness } from '../support/harness.ts';
import { type PhpSoapServer, type SoapLogEntry, startPhpSoapServer } from '../support/php-soap-server.ts';
import { closedPort, tcpUpstream } from '../support/raw-upstream.ts';

/** SOAP raw (non-WSDL) mode end to end through app.inject() against PHP's SoapServer and its static answers (docs/execute.md#raw-mode). */

type Auth = { key: string; tenant: string };
const RAW = 'http://example.com/raw';
const SOAP11 = 'http://schemas.xmlsoap.org/soap/envelope/';
const SOAP12 = 'http://www.w3.org/2003/05/soap-envelope';
const XSI = 'http://www.w3.org/2001/XMLSchema-instance';
const staticFile = (name: string) => readFileSync(new URL(`../support/fixtures/soap/static/${name}`, import.meta.url), 'utf8');
const passwd = readFileSync('/etc/passwd', 'utf8').split('\n')[0];

/** The envelope raw mode writes, exactly. */
function envelope(version: '1.1' | '1.2', body: string, header?: string): string {
  const ns = version === '1.1' ? SOAP11 : SOAP12;
  return (
    `<?xml version="1.0" encoding="utf-8"?><soap:Envelope xmlns:soap="${ns}" xmlns:xsi="${XSI}">` +
    `${header === undefined ? '' : `<soap:Header>${header}</soap:Header>`}<soap:Body>${body}</soap:Body></soap:Envelope>`
  );
}
/** How PHP's SoapServer (rpc/encoded) answers: the value with its xsi:type, as raw mode shows it. */
const typed = (type: string, value: string) => ({ $attributes: { type: `xsd:${type}` }, $value: value });

describe('execute with the SOAP connector in raw mode', () => {
  let h: Harness;
  let auth: Auth;
  let soap: PhpSoapServer;
  let secured: PhpSoapServer;

  const put = (id: string, config: Record<string, unknown>) =>
    h.call(auth, { method: 'PUT', url: `/api/v1/integrations/${id}`, payload: { connector: 'soap-1.0.0', config } });
  const run = (id: string, payload: Record<string, unknown>) =>
    h.call(auth, { method: 'POST', url: `/api/v1/integrations/${id}/execute`, payload });
  const call = (id: string, method: string, params?: object, extra: object = {}) =>
    run(id, { operation: 'send', method, params, ...extra });
  /** The one request the server received since its log was cleared; clears the log. */
  function received(server: PhpSoapServer = soap): SoapLogEntry {
    const log = server.log();
    server.clearLog();
    assert.equal(log.length, 1, JSON.stringify(log));
    return log[0];
  }

  before(async () => {
    [h, soap, secured] = await Promise.all([harness(), startPhpSoapServer(), startPhpSoapServer({ requireToken: 'tok-1' })]);
    await h.tenant('acme');
    auth = { key: (await h.key('acme', ['integrations.*'])).key, tenant: 'acme' };
    for (const [id, config] of Object.entries({
      raw: { endpoint_url: soap.url('/raw'), namespace: RAW },
      raw12: { endpoint_url: soap.url('/raw'), namespace: RAW, soap_version: '1.2' },
      slash: { endpoint_url: soap.url('/raw'), namespace: `${RAW}/` },
      bare: { endpoint_url: soap.url('/raw') },
    })) {
      assert.equal((await put(id, config)).statusCode, 201);
    }
    soap.clearLog();
  });
  after(async () => {
    await Promise.all([h.close(), soap.close(), secured.close()]);
  });

  test('Add with the configured namespace: a SOAP 1.1 envelope, SOAPAction namespace/method, values as strings', async () => {
    for (const operation of ['send', 'receive']) {
      assert.deepEqual(ok(await run('raw', { operation, method: 'Add', params: { a: 2, b: 3 } })), {
        AddResult: typed('int', '5'),
      });
      const sent = received();
      assert.deepEqual(
        [sent.method, sent.path, sent.contentType, sent.soapAction],
        ['POST', '/raw', 'text/xml; charset=utf-8', `"${RAW}/Add"`],
      );
      assert.equal(sent.body, envelope('1.1', `<Add xmlns="${RAW}"><a>2</a><b>3</b></Add>`));
    }
  });

  test('namespace: a per-request one wins; one ending in "/" gives no doubled slash; none leaves the method unqualified', async () => {
    assert.deepEqual(ok(await call('raw', 'Add', { a: 1, b: 1 }, { namespace: 'urn:other/' })), { AddResult: typed('int', '2') });
    let sent = received();
    assert.equal(sent.soapAction, '"urn:other/Add"');
    assert.equal(sent.body, envelope('1.1', '<Add xmlns="urn:other/"><a>1</a><b>1</b></Add>'));
    ok(await call('raw', 'Echo', { message: 'x' }, { namespace: 'urn:calc' }));
    assert.equal(received().soapAction, '"urn:calc/Echo"');
    ok(await call('slash', 'Echo', { message: 'x' }));
    sent = received();
    assert.equal(sent.soapAction, `"${RAW}/Echo"`);
    assert.equal(sent.body, envelope('1.1', `<Echo xmlns="${RAW}/"><message>x</message></Echo>`));
    assert.deepEqual(ok(await call('bare', 'Echo', { message: 'x' })), { EchoResult: typed('string', 'x') });
    sent = received();
    assert.equal(sent.soapAction, '"Echo"');
    assert.equal(sent.body, envelope('1.1', '<Echo><message>x</message></Echo>'));
  });

  test('soap_version 1.2: a 1.2 envelope, the action in the Content-Type, no SOAPAction header', async () => {
    assert.deepEqual(ok(await call('raw12', 'Echo', { message: 'hi' })), {
      $attributes: { encodingStyle: 'http://www.w3.org/2003/05/soap-encoding' },
      result: 'EchoResult',
      EchoResult: typed('string', 'hi'),
    });
    const sent = received();
    assert.equal(sent.contentType, `application/soap+xml; charset=utf-8; action="${RAW}/Echo"`);
    assert.equal(sent.soapAction, null);
    assert.equal(sent.body, envelope('1.2', `<Echo xmlns="${RAW}"><message>hi</message></Echo>`));
  });

  test('soap_action given is sent as given, "" as an empty one, in SOAP 1.1 and 1.2', async () => {
    const cases: Array<[string, string, keyof SoapLogEntry, string]> = [
      ['raw', 'urn:custom:Echo', 'soapAction', '"urn:custom:Echo"'],
      ['raw', '', 'soapAction', '""'],
      ['raw12', 'urn:custom:Echo', 'contentType', 'application/soap+xml; charset=utf-8; action="urn:custom:Echo"'],
      ['raw12', '', 'contentType', 'application/soap+xml; charset=utf-8; action=""'],
    ];
    for (const [id, action, header, expected] of cases) {
      ok(await call(id, 'Echo', { message: 'x' }, { soap_action: action }));
      assert.equal(received()[header], expected);
    }
  });

  test('params: objects nest, arrays repeat, $attributes, $value, null and escaping of < & " \'', async () => {
    const params = {
      message: `<&"'>`,
      extra: { $attributes: { id: 7, note: `a"b<'` }, $value: 'text & more', item: [{ n: 1 }, { n: 2 }], flag: true, none: null },
      empty: [],
    };
    assert.deepEqual(ok(await call('raw', 'Echo', params)), { EchoResult: typed('string', `<&"'>`) });
    const extra =
      '<extra id="7" note="a&quot;b&lt;&apos;">text &amp; more<item><n>1</n></item><item><n>2</n></item>' +
      '<flag>true</flag><none xsi:nil="true"/></extra>';
    assert.equal(
      received().body,
      envelope('1.1', `<Echo xmlns="${RAW}"><message>&lt;&amp;&quot;&apos;&gt;</message>${extra}</Echo>`),
    );
  });

  test('a name XML cannot carry: 400 validation_failed listing every one, and nothing sent', async () => {
    const params = { 'bad name': 1, ok: { $attributes: { 'x y': 1 }, '1st': 2 } };
    const res = await call('raw', 'Echo', params, { soap_headers: { 'a:b:c': 'x' } });
    assert.deepEqual(
      issuePaths(res),
      ['params.bad name', 'params.ok.$attributes.x y', 'params.ok.1st', 'soap_headers.a:b:c'].sort(),
    );
    assert.deepEqual(issuePaths(await call('raw', 'Not a method', {})), ['method']);
    assert.deepEqual(soap.log(), []);
  });

  test('soap_headers go into a Header element', async () => {
    const soapHeaders = { Auth: { $attributes: { xmlns: 'urn:h', 'soap:mustUnderstand': '0' }, token: 't&1' } };
    ok(await call('raw', 'Echo', { message: 'x' }, { soap_headers: soapHeaders }));
    assert.equal(
      received().body,
      envelope(
        '1.1',
        `<Echo xmlns="${RAW}"><message>x</message></Echo>`,
        '<Auth xmlns="urn:h" soap:mustUnderstand="0"><token>t&amp;1</token></Auth>',
      ),
    );
  });

  test('faults, SOAP 1.1 and 1.2, on HTTP 500 or 200: 502 soap_fault with normalised details', async () => {
    const cases: Array<[string, string, Record<string, unknown>]> = [
      ['/raw', 'Fail', { fault_code: 'SOAP-ENV:Client', fault_string: 'Raw failure', detail: { code: '42' } }],
      [
        '/fault12',
        'Echo',
        {
          fault_code: 'soap:Sender/app:InvalidInput',
          fault_string: 'Quantity must be positive',
          detail: { error: { code: '42', field: 'quantity' } },
        },
      ],
      ['/fault11-200', 'Echo', { fault_code: 'soap:Server', fault_string: 'Backend unavailable', detail: { code: '503' } }],
    ];
    for (const [path, method, details] of cases) {
      await put('faulty', { endpoint_url: soap.url(path), namespace: RAW });
      const error = assertError(await call('faulty', method), 502, 'soap_fault');
      assert.equal(error.message, details.fault_string);
      assert.deepEqual(error.details, { ...details, attempts: 1 }, path);
    }
  });

  test('an HTML error page, text, XXE and billion laughs: upstream_http_error / upstream_invalid_response, nothing expanded', async () => {
    await put('junk', { endpoint_url: soap.url('/html500') });
    const html = assertError(await call('junk', 'Echo'), 502, 'upstream_http_error');
    assert.deepEqual(html.details, { upstream_status: 500, body_excerpt: staticFile('html500.html'), attempts: 1 });
    await put('junk', { endpoint_url: soap.url('/notxml') });
    const text = assertError(await call('junk', 'Echo'), 502, 'upstream_invalid_response');
    assert.deepEqual(text.details, {
      upstream_status: 200,
      content_type: 'text/plain; charset=utf-8',
      body_excerpt: staticFile('notxml.txt'),
      attempts: 1,
    });
    for (const path of ['/xxe', '/laughs']) {
      await put('junk', { endpoint_url: soap.url(path) });
      const res = await call('junk', 'Echo', { message: 'x' });
      const error = assertError(res, 502, 'upstream_invalid_response');
      assert.equal(error.message, 'The upstream answer declares a DTD, which is refused.');
      assert.equal(error.details?.upstream_status, 200);
      assert.ok(!res.body.includes(passwd) && !res.body.includes('lollol') && res.body.length < 2048, res.body);
    }
  });

  test('test: any HTTP status is an answer (details.http_status); no answer: 502 upstream_unreachable', async () => {
    const cases: Array<[string, number]> = [
      ['/raw', 405],
      ['/html500', 500],
      ['/notxml', 200],
      ['/fault12', 500],
      ['/nothing-here', 404],
    ];
    for (const [path, status] of cases) {
      await put('probe', { endpoint_url: soap.url(path) });
      soap.clearLog();
      assert.deepEqual(ok(await run('probe', { operation: 'test' })), {
        message: 'SOAP connection test succeeded',
        details: { endpoint_url: soap.url(path), mode: 'raw', http_status: status, circuit: 'closed' },
      });
      const probe = received();
      assert.deepEqual([probe.method, probe.path, probe.body], ['GET', path, '']);
    }
    await put('probe', { endpoint_url: `http://127.0.0.1:${await closedPort()}/raw` });
    const error = assertError(await run('probe', { operation: 'test' }), 502, 'upstream_unreachable');
    assert.deepEqual(error.details, { cause: 'refused', attempts: 3, circuit: 'closed' });
  });

  test('a connection reset: send is tried once, receive max_attempts (3) times', async () => {
    const resetting = await tcpUpstream((socket) => socket.destroy());
    try {
      await put('reset', { endpoint_url: `${resetting.url}/raw`, namespace: RAW });
      for (const [operation, attempts] of Object.entries({ send: 1, receive: 3 })) {
        const before = resetting.requests;
        const error = assertError(await run('reset', { operation, method: 'Echo' }), 502, 'upstream_unreachable');
        assert.deepEqual(error.details, { cause: 'reset', attempts });
        assert.equal(resetting.requests - before, attempts, operation);
      }
    } finally {
      await resetting.close();
    }
  });

  test('auth_header/auth_value are sent on calls and on test; with a wrong value the server’s 401 is upstream_http_error', async () => {
    await put('sec', { endpoint_url: secured.url('/raw'), namespace: RAW, auth_header: 'X-Auth-Token', auth_value: 'tok-1' });
    assert.deepEqual(ok(await call('sec', 'Echo', { message: 'x' })), { EchoResult: typed('string', 'x') });
    assert.deepEqual(ok(await run('sec', { operation: 'test' })).details.http_status, 405);
    assert.deepEqual(
      secured.log().map((e) => [e.method, e.authToken]),
      [
        ['POST', 'tok-1'],
        ['GET', 'tok-1'],
      ],
    );
    secured.clearLog();
    await put('sec', {
      endpoint_url: secured.url('/raw'),
      namespace: RAW,
      auth_header: 'X-Auth-Token',
      auth_value: 'not-the-token-7',
    });
    const error = assertError(await call('sec', 'Echo', { message: 'x' }), 502, 'upstream_http_error');
    assert.deepEqual(error.details, {
      upstream_status: 401,
      body_excerpt: 'Unauthorized: missing or wrong X-Auth-Token\n',
      attempts: 1,
    });
    assert.equal(received(secured).authToken, 'not-the-token-7');
  });
});
