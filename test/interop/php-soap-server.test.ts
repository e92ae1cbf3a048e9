import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { XMLParser } from 'fast-xml-parser';
import { type PhpSoapServer, startPhpSoapServer } from '../support/php-soap-server.ts';

const SOAP11 = 'http://schemas.xmlsoap.org/soap/envelope/';
const SOAP12 = 'http://www.w3.org/2003/05/soap-envelope';
const CALC = 'http://example.com/calculator';

// Values stay strings; namespace prefixes are dropped (the tests check namespaces on the raw text).
const parser = new XMLParser({ removeNSPrefix: true, parseTagValue: false, ignoreAttributes: false, attributeNamePrefix: '@' });
// biome-ignore lint/suspicious/noExplicitAny: a test reads parsed XML by its known shape.
type Xml = any;

function envelope(body: string, version: '1.1' | '1.2' = '1.1'): string {
  const ns = version === '1.1' ? SOAP11 : SOAP12;
  return `<?xml version="1.0" encoding="utf-8"?><soap:Envelope xmlns:soap="${ns}"><soap:Body>${body}</soap:Body></soap:Envelope>`;
}

/** Posts a SOAP call the way a 1.1 (SOAPAction header) or 1.2 (action in the Content-Type) client does. */
async function call(
  url: string,
  operation: string,
  inner: string,
  options: { version?: '1.1' | '1.2'; ns?: string; headers?: Record<string, string> } = {},
) {
  const version = options.version ?? '1.1';
  const ns = options.ns ?? CALC;
  const action = `${ns}/${operation}`;
  const headers: Record<string, string> =
    version === '1.1'
      ? { 'content-type': 'text/xml; charset=utf-8', soapaction: `"${action}"` }
      : { 'content-type': `application/soap+xml; charset=utf-8; action="${action}"` };
  const response = await fetch(url, {
    method: 'POST',
    headers: { ...headers, ...options.headers },
    body: envelope(`<${operation} xmlns="${ns}">${inner}</${operation}>`, version),
  });
  const text = await response.text();
  const xml: Xml = parser.parse(text);
  return { status: response.status, contentType: response.headers.get('content-type') ?? '', text, body: xml.Envelope?.Body };
}

async function get(url: string, headers: Record<string, string> = {}) {
  const response = await fetch(url, { headers });
  return { status: response.status, contentType: response.headers.get('content-type') ?? '', text: await response.text() };
}

describe('the PHP SoapServer test upstream', () => {
  let soap: PhpSoapServer;
  before(async () => {
    soap = await startPhpSoapServer();
  });
  after(() => soap.close());

  test('serves calculator.wsdl with its real address, under every usual spelling', async () => {
    for (const path of ['/calculator?wsdl', '/calculator?WSDL', '/calculator?singleWsdl', '/calculator.wsdl']) {
      const { status, contentType, text } = await get(soap.url(path));
      assert.equal(status, 200, path);
      assert.match(contentType, /^text\/xml/);
      assert.doesNotMatch(text, /__BASE_URL__/);
      const wsdl: Xml = parser.parse(text).definitions;
      assert.equal(wsdl['@targetNamespace'], CALC);
      assert.equal(wsdl.service['@name'], 'CalculatorService');
      assert.deepEqual(
        wsdl.service.port.map((port: Xml) => [port['@name'], port.address['@location']]),
        [
          ['CalculatorSoap', `${soap.origin}/calculator`],
          ['CalculatorSoap12', `${soap.origin}/calculator12`],
        ],
      );
      assert.match(text, /<soap12:binding /);
      assert.match(text, /soapAction="http:\/\/example\.com\/calculator\/WhoAmI"/);
    }
  });

  test('SOAP 1.1: Add(2, 3) answers AddResult 5 in a 1.1 envelope', async () => {
    const { status, contentType, text, body } = await call(soap.url('/calculator'), 'Add', '<a>2</a><b>3</b>');
    assert.equal(status, 200);
    assert.match(contentType, /^text\/xml; charset=utf-8/);
    assert.ok(text.includes(SOAP11));
    assert.equal(body.AddResponse.AddResult, '5');
  });

  test('SOAP 1.2: Add answers a 1.2 envelope as application/soap+xml', async () => {
    const { status, contentType, text, body } = await call(soap.url('/calculator12'), 'Add', '<a>40</a><b>2</b>', {
      version: '1.2',
    });
    assert.equal(status, 200);
    assert.match(contentType, /^application\/soap\+xml; charset=utf-8/);
    assert.ok(text.includes(SOAP12));
    assert.ok(!text.includes(SOAP11));
    assert.equal(body.AddResponse.AddResult, '42');
  });

  test('Fail answers a fault with HTTP 500 and the detail, in the version of the request', async () => {
    const v11 = await call(soap.url('/calculator'), 'Fail', '<reason>out of stock</reason>');
    assert.equal(v11.status, 500);
    assert.deepEqual(v11.body.Fault, { faultcode: 'SOAP-ENV:Client', faultstring: 'out of stock', detail: { code: '42' } });

    const v12 = await call(soap.url('/calculator12'), 'Fail', '<reason>out of stock</reason>', { version: '1.2' });
    assert.equal(v12.status, 500);
    assert.match(v12.contentType, /^application\/soap\+xml/);
    assert.equal(v12.body.Fault.Code.Value, 'env:Sender');
    assert.equal(v12.body.Fault.Reason.Text, 'out of stock');
    assert.deepEqual(v12.body.Fault.Detail, { code: '42' });
  });

  test('Echo: the optional note comes back only when sent; a missing message is a Client fault', async () => {
    assert.deepEqual((await call(soap.url('/calculator'), 'Echo', '<message>hi</message>')).body.EchoResponse, {
      EchoResult: 'hi',
    });
    assert.deepEqual((await call(soap.url('/calculator'), 'Echo', '<message>hi</message><note>n</note>')).body.EchoResponse, {
      EchoResult: 'hi',
      NoteResult: 'n',
    });
    const missing = await call(soap.url('/calculator'), 'Echo', '<note>n</note>');
    assert.equal(missing.status, 500);
    assert.equal(missing.body.Fault.faultstring, 'message is required');
  });

  test('SumList sums repeated numbers, one number included', async () => {
    const three = await call(soap.url('/calculator'), 'SumList', '<numbers>1</numbers><numbers>2</numbers><numbers>4</numbers>');
    assert.equal(three.body.SumListResponse.SumListResult, '7');
    const one = await call(soap.url('/calculator'), 'SumList', '<numbers>9</numbers>');
    assert.equal(one.body.SumListResponse.SumListResult, '9');
  });

  test('GetOrder returns an Order with repeated lines (an id ending in -N has N lines)', async () => {
    const { body } = await call(soap.url('/calculator'), 'GetOrder', '<id>ORD-7</id>');
    const order = body.GetOrderResponse.GetOrderResult;
    assert.equal(order.id, 'ORD-7');
    assert.equal(order.customer, 'ACME Corp');
    assert.equal(order.lines.length, 7);
    assert.deepEqual(order.lines[1], { sku: 'SKU-2', quantity: '2', price: '20.99' });

    assert.equal(
      (await call(soap.url('/calculator'), 'GetOrder', '<id>X</id>')).body.GetOrderResponse.GetOrderResult.lines.length,
      2,
    );
    assert.deepEqual(
      (await call(soap.url('/calculator'), 'GetOrder', '<id>A-1</id>')).body.GetOrderResponse.GetOrderResult.lines,
      {
        sku: 'SKU-1',
        quantity: '1',
        price: '10.99',
      },
    );
    assert.equal(
      (await call(soap.url('/calculator'), 'GetOrder', '<id>A-0</id>')).body.GetOrderResponse.GetOrderResult.lines,
      undefined,
    );
  });

  test('WhoAmI returns the X-Auth-Token header it received', async () => {
    const withToken = await call(soap.url('/calculator'), 'WhoAmI', '', { headers: { 'x-auth-token': 'tok-123' } });
    assert.equal(withToken.body.WhoAmIResponse.WhoAmIResult, 'tok-123');
    const without = await call(soap.url('/calculator'), 'WhoAmI', '');
    assert.equal(without.body.WhoAmIResponse.WhoAmIResult, '');
  });

  test('Slow(3) answers after three seconds, while other calls are answered meanwhile', async () => {
    const started = performance.now();
    const finished: string[] = [];
    const slow = call(soap.url('/calculator'), 'Slow', '<seconds>3</seconds>').then((answer) => {
      finished.push('slow');
      return answer;
    });
    // A request arriving within a few ms may be accepted by the worker that then sleeps: wait a little.
    await new Promise((r) => setTimeout(r, 200));
    const quick = await call(soap.url('/calculator'), 'Add', '<a>1</a><b>1</b>');
    finished.push('quick');
    assert.equal(quick.body.AddResponse.AddResult, '2');
    assert.equal((await slow).body.SlowResponse.SlowResult, '3');
    // The order, not a time: Add did not wait for Slow.
    assert.deepEqual(finished, ['quick', 'slow']);
    assert.ok(performance.now() - started >= 2950);
  });

  test('imported.wsdl takes its types from types.xsd by an absolute schemaLocation; Greet answers', async () => {
    const wsdl = await get(soap.url('/imported?wsdl'));
    assert.equal(wsdl.status, 200);
    assert.ok(wsdl.text.includes(`schemaLocation="${soap.origin}/types.xsd"`));
    assert.ok(wsdl.text.includes(`location="${soap.origin}/imported"`));
    const xsd = await get(soap.url('/types.xsd'));
    assert.equal(xsd.status, 200);
    assert.match(xsd.text, /<xsd:element name="GreetResponse">/);
    const { body } = await call(soap.url('/imported'), 'Greet', '<name>Ada</name>', { ns: 'http://example.com/greeter/types' });
    assert.equal(body.GreetResponse.GreetResult, 'Hello, Ada!');
  });

  test('large?wsdl&ops=300 has 300 operations, and Op299 answers at the address it gives', async () => {
    const { status, text } = await get(soap.url('/large?wsdl&ops=300'));
    assert.equal(status, 200);
    const wsdl: Xml = parser.parse(text).definitions;
    assert.equal(wsdl.portType.operation.length, 300);
    assert.equal(wsdl.binding.operation.length, 300);
    const address = wsdl.service.port.address['@location'];
    assert.equal(address, `${soap.origin}/large?ops=300`);
    const { body } = await call(address, 'Op299', '<value>v</value>', { ns: 'http://example.com/large' });
    assert.equal(body.Op299Response.Op299Result, 'Op299:v');
    assert.equal(parser.parse((await get(soap.url('/large?wsdl'))).text).definitions.portType.operation.length, 300);
    assert.equal(parser.parse((await get(soap.url('/large?wsdl&ops=5'))).text).definitions.portType.operation.length, 5);
  });

  test('raw (non-WSDL) mode: Add, Echo and Fail at /raw', async () => {
    const ns = 'http://example.com/raw';
    const add = await call(soap.url('/raw'), 'Add', '<a>2</a><b>3</b>', { ns });
    assert.equal(add.status, 200);
    assert.equal(add.body.AddResponse.AddResult['#text'], '5');
    const echo = await call(soap.url('/raw'), 'Echo', '<message>hello</message>', { ns, version: '1.2' });
    assert.ok(echo.text.includes(SOAP12));
    assert.equal(echo.body.EchoResponse.EchoResult['#text'], 'hello');
    const fail = await call(soap.url('/raw'), 'Fail', '', { ns });
    assert.equal(fail.status, 500);
    assert.deepEqual(fail.body.Fault, { faultcode: 'SOAP-ENV:Client', faultstring: 'Raw failure', detail: { code: '42' } });
  });

  test('the static misbehaving endpoints answer as-is', async () => {
    const expected: Array<[string, number, RegExp, RegExp]> = [
      ['/html500', 500, /^text\/html/, /<h1>Internal Server Error<\/h1>/],
      ['/notxml', 200, /^text\/plain/, /^OK: /],
      ['/fault12', 500, /^application\/soap\+xml/, /<soap:Value>soap:Sender<\/soap:Value>[\s\S]*<soap:Subcode>/],
      ['/fault11-200', 200, /^text\/xml/, /<faultcode>soap:Server<\/faultcode>/],
      ['/xxe', 200, /^text\/xml/, /<!ENTITY xxe SYSTEM "file:\/\/\/etc\/passwd">[\s\S]*&xxe;/],
      ['/laughs', 200, /^text\/xml/, /<!ENTITY lol9 [\s\S]*&lol9;/],
    ];
    for (const [path, status, type, body] of expected) {
      const response = await fetch(soap.url(path), { method: 'POST', body: envelope('') });
      assert.equal(response.status, status, path);
      assert.match(response.headers.get('content-type') ?? '', type, path);
      assert.match(await response.text(), body, path);
    }
  });

  test('unknown paths are 404', async () => {
    assert.equal((await get(soap.url('/nothing-here'))).status, 404);
  });

  test('the log records method, path, query, the headers that matter and the body', async () => {
    soap.clearLog();
    await get(soap.url('/calculator?wsdl'), { 'x-auth-token': 'abc' });
    await call(soap.url('/calculator'), 'Add', '<a>1</a><b>2</b>', { headers: { 'x-auth-token': 'abc' } });
    await call(soap.url('/calculator12'), 'Add', '<a>1</a><b>2</b>', { version: '1.2' });
    const log = soap.log();
    assert.equal(log.length, 3);
    assert.deepEqual(
      log.map(({ method, path, query, authToken, soapAction, contentType }) => ({
        method,
        path,
        query,
        authToken,
        soapAction,
        contentType,
      })),
      [
        { method: 'GET', path: '/calculator', query: 'wsdl', authToken: 'abc', soapAction: null, contentType: null },
        {
          method: 'POST',
          path: '/calculator',
          query: '',
          authToken: 'abc',
          soapAction: `"${CALC}/Add"`,
          contentType: 'text/xml; charset=utf-8',
        },
        {
          method: 'POST',
          path: '/calculator12',
          query: '',
          authToken: null,
          soapAction: null,
          contentType: `application/soap+xml; charset=utf-8; action="${CALC}/Add"`,
        },
      ],
    );
    assert.match(log[1].body, /<Add xmlns="http:\/\/example\.com\/calculator"><a>1<\/a><b>2<\/b><\/Add>/);
    assert.equal(log[0].body, '');
    assert.equal(typeof log[0].time, 'number');
  });
});

describe('the PHP SoapServer test upstream with requireToken', () => {
  let soap: PhpSoapServer;
  before(async () => {
    soap = await startPhpSoapServer({ requireToken: 's3cret' });
  });
  after(() => soap.close());

  test('answers 401 (plain text) to the WSDL fetch and to calls without the right X-Auth-Token', async () => {
    for (const headers of [{}, { 'x-auth-token': 'wrong' }] as Array<Record<string, string>>) {
      const wsdl = await get(soap.url('/calculator?wsdl'), headers);
      assert.equal(wsdl.status, 401);
      assert.match(wsdl.contentType, /^text\/plain/);
      const added = await call(soap.url('/calculator'), 'Add', '<a>2</a><b>3</b>', { headers });
      assert.equal(added.status, 401);
    }
    assert.equal((await get(soap.url('/types.xsd'))).status, 401);
  });

  test('works with the token, and WhoAmI sees it', async () => {
    const headers = { 'x-auth-token': 's3cret' };
    assert.equal((await get(soap.url('/calculator?wsdl'), headers)).status, 200);
    const { status, body } = await call(soap.url('/calculator'), 'WhoAmI', '', { headers });
    assert.equal(status, 200);
    assert.equal(body.WhoAmIResponse.WhoAmIResult, 's3cret');
  });

  test('rejected requests are logged too', () => {
    const log = soap.log();
    assert.ok(log.some((entry) => entry.path === '/calculator' && entry.method === 'GET' && entry.authToken === null));
    assert.ok(log.some((entry) => entry.authToken === 'wrong'));
  });
});
