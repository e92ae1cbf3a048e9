import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { assertError, assertOk as ok } from '../support/assertions.ts';
import type { FixtureProcess } from '../support/fixture-process.ts';
import { type Harness, harness } from '../support/harness.ts';
import { type JaxwsSoapServer, jaxwsNamespace, startJaxwsSoapServer } from '../support/jaxws-soap-server.ts';
import { spyneNamespace, startSpyneServer, type ZeepAnswer, zeepCalls } from '../support/spyne-server.ts';
import { compareXml } from '../support/xml-compare.ts';

/**
 * WSDL mode end to end against WSDLs that generators write, not ones written for Interchange (issue 9, docs/execute.md#wsdl-mode):
 * a real spyne service (test/support/fixtures/spyne/service.py) and a JAX-WS-style WSDL (test/support/fixtures/soap/jaxws-orders.wsdl)
 * answered by PHP's SoapServer. Both declare each wrapper as `<xs:element name="Op" type="tns:Op"/>` with the
 * parameters in the named complexType. python-zeep, an independent client, checks the fixtures themselves.
 */

type Auth = { key: string; tenant: string };
const SOAP11 = 'http://schemas.xmlsoap.org/soap/envelope/';
const spyneOperations = ['CreateOrder', 'Echo', 'Fail', 'Multiply', 'Slow'];
const jaxwsOperations = ['getCustomer', 'placeOrder'];

const acme = {
  name: 'ACME Corp',
  address: { street: '1 Main St', city: 'Springfield', country: 'US' },
  customerId: 42,
  email: 'buyer@acme.test',
};
/** placeOrder's params, shaped as its signature: the customer's base-type fields, the imported orderLine, a nil note, a ref. */
const placeOrder = {
  customer: acme,
  lines: [
    { sku: 'A-1', quantity: 2, unitPrice: 10.5 },
    { sku: 'B-2', quantity: 1, unitPrice: 3.25 },
  ],
  priority: 'EXPRESS',
  giftWrap: true,
  note: null,
  couponCode: 'SPRING',
};
/** What JaxwsOrderService computes from `placeOrder`, at every level of it. */
const placeOrderResult = {
  orderId: 'ORD-42-2',
  customerId: 42,
  shipTo: 'ACME Corp, 1 Main St, Springfield, US',
  lineCount: 2,
  totalQuantity: 3,
  total: 24.25,
  priority: 'EXPRESS',
  giftWrap: true,
  skus: ['A-1', 'B-2'],
  noteStatus: 'nil',
  coupon: 'SPRING',
};

const inputsOf = (overloads: unknown) => (overloads as Array<{ input: string }>).map((o) => o.input);
const pathsOf = (issues: unknown) => (issues as Array<{ path: string }>).map((i) => i.path);

/** The issue paths of an invalid_soap_params answer, sorted. */
function soapParamIssues(res: LightMyRequestResponse): string[] {
  const issues = assertError(res, 400, 'invalid_soap_params').details?.issues;
  assert.ok(Array.isArray(issues) && issues.length > 0, JSON.stringify(issues));
  return issues.map((issue) => issue.path).sort();
}

/** The one answer zeep gave as a result (a fault or a comparison fails the test). */
function zeepResult(answer: ZeepAnswer): unknown {
  assert.ok('result' in answer, JSON.stringify(answer));
  return answer.result;
}

/** POSTs a hand-built SOAP 1.1 envelope and returns status and body. */
async function postEnvelope(url: string, soapAction: string, payload: string): Promise<[number, string]> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'text/xml; charset=utf-8', soapaction: soapAction },
    body: `<?xml version="1.0" encoding="utf-8"?><soap:Envelope xmlns:soap="${SOAP11}"><soap:Body>${payload}</soap:Body></soap:Envelope>`,
  });
  return [response.status, await response.text()];
}

describe('execute in WSDL mode against a spyne service and a JAX-WS-style WSDL on PHP SoapServer', () => {
  let h: Harness;
  let auth: Auth;
  let spyne: FixtureProcess;
  let jaxws: JaxwsSoapServer;
  const put = (id: string, endpointUrl: string) =>
    h.call(auth, {
      method: 'PUT',
      url: `/api/v1/integrations/${id}`,
      payload: { connector: 'soap-1.0.0', config: { endpoint_url: endpointUrl } },
    });
  const run = (id: string, payload: Record<string, unknown>) =>
    h.call(auth, { method: 'POST', url: `/api/v1/integrations/${id}/execute`, payload });
  const send = (id: string, method: string, params: Record<string, unknown>) => run(id, { operation: 'send', method, params });

  before(async () => {
    [h, spyne, jaxws] = await Promise.all([harness(), startSpyneServer(), startJaxwsSoapServer()]);
    await h.tenant('acme');
    auth = { key: (await h.key('acme', ['integrations.*'])).key, tenant: 'acme' };
    assert.equal((await put('spyne', spyne.url('/?wsdl'))).statusCode, 201);
    assert.equal((await put('jaxws', jaxws.url('/orders?wsdl'))).statusCode, 201);
  });
  after(async () => {
    await Promise.all([h?.close(), spyne?.close(), jaxws?.close()]);
  });

  test('the fixtures: spyne writes the named-type wrapper, and both servers answer a hand-built envelope', async () => {
    const wsdl = await (await fetch(spyne.url('/?wsdl'))).text();
    assert.match(wsdl, /<xs:element name="Multiply" type="tns:Multiply"\/>/);
    assert.match(wsdl, /<xs:complexType name="Multiply"><xs:sequence><xs:element name="a" type="xs:integer"/);

    const multiply = `<s:Multiply xmlns:s="${spyneNamespace}"><s:a>6</s:a><s:b>7</s:b></s:Multiply>`;
    const [status, answer] = await postEnvelope(spyne.url('/'), 'Multiply', multiply);
    assert.equal(status, 200, answer);
    assert.match(answer, /<(\w+:)?MultiplyResult>42<\/(\w+:)?MultiplyResult>/);
    // spyne validates requests against its schema: children of the wrapper must be qualified.
    const unqualified = `<s:Multiply xmlns:s="${spyneNamespace}"><a>6</a><b>7</b></s:Multiply>`;
    const [refused, fault] = await postEnvelope(spyne.url('/'), 'Multiply', unqualified);
    assert.equal(refused, 500);
    assert.match(fault, /<faultcode>\w+:Client\.SchemaValidationError<\/faultcode>/);

    const getCustomer = `<o:getCustomer xmlns:o="${jaxwsNamespace}"><customerId>7</customerId></o:getCustomer>`;
    const [phpStatus, phpAnswer] = await postEnvelope(jaxws.url('/orders'), '""', getCustomer);
    assert.equal(phpStatus, 200, phpAnswer);
    assert.match(phpAnswer, /<return><name>Customer 7<\/name><address><street>7 Main St<\/street>.*<customerId>7<\/customerId>/);
  });

  test('the fixtures answer python-zeep, an independent client, as these tests expect Interchange to be answered', async () => {
    const spyneWsdl = spyne.url('/?wsdl');
    const jaxwsWsdl = jaxws.url('/orders?wsdl');
    const order = {
      customer: 'ACME',
      lines: {
        OrderLine: [
          { sku: 'A-1', quantity: 2 },
          { sku: 'B-2', quantity: 5 },
          { sku: 'C-3', quantity: 1 },
        ],
      },
      status: 'confirmed',
    };
    const answers = await zeepCalls([
      { wsdl: spyneWsdl, operation: 'Multiply', params: { a: 6, b: 7 } },
      { wsdl: spyneWsdl, operation: 'CreateOrder', params: { order } },
      { wsdl: spyneWsdl, operation: 'Fail', params: { reason: 'no stock' } },
      { wsdl: jaxwsWsdl, operation: 'placeOrder', params: placeOrder },
      { wsdl: jaxwsWsdl, operation: 'getCustomer', params: { customerId: 7 } },
    ]);
    assert.equal(zeepResult(answers[0]), 42);
    assert.deepEqual(zeepResult(answers[1]), {
      customer: 'ACME',
      line_count: 3,
      total_quantity: 8,
      status: 'confirmed',
      skus: { string: ['A-1', 'B-2', 'C-3'] },
    });
    assert.deepEqual(answers[2], { fault: { code: 'soap11env:Client.Invalid', message: 'no stock' } });
    // zeep keeps decimals as decimal.Decimal, printed as a string.
    assert.deepEqual(zeepResult(answers[3]), { ...placeOrderResult, total: '24.25' });
    assert.deepEqual(zeepResult(answers[4]), {
      name: 'Customer 7',
      address: { street: '7 Main St', city: 'Springfield', postalCode: null, country: 'US' },
      customerId: 7,
      email: 'c7@example.com',
    });
  });

  test('test lists each port with its operations', async () => {
    const spyneTest = ok(await run('spyne', { operation: 'test' }));
    assert.equal(spyneTest.message, 'SOAP connection test succeeded');
    assert.equal(spyneTest.details.mode, 'wsdl');
    const ports = (data: { details: { services: Array<{ name: string; ports: Array<Record<string, unknown>> }> } }) =>
      data.details.services.map((service) => ({
        name: service.name,
        ports: service.ports.map((port) => ({
          name: port.name,
          soap_version: port.soap_version,
          operations: [...(port.operations as string[])].sort(),
        })),
      }));
    assert.deepEqual(ports(spyneTest), [
      { name: 'CalculatorService', ports: [{ name: 'SpyneCalculator', soap_version: '1.1', operations: spyneOperations }] },
    ]);
    assert.deepEqual(ports(ok(await run('jaxws', { operation: 'test' }))), [
      { name: 'OrderService', ports: [{ name: 'OrderServicePort', soap_version: '1.1', operations: jaxwsOperations }] },
    ]);
  });

  test('test gives each operation the signature of its named wrapper type: nested, inherited, imported', async () => {
    // biome-ignore lint/suspicious/noExplicitAny: a signature is read by its documented shape.
    type Param = { name: string; type: string; required: boolean; repeated: boolean; enum?: string[]; children?: any[] };
    const signatures = async (id: string): Promise<Record<string, { input: string; parameters: Param[] }>> => {
      const data = ok(await run(id, { operation: 'test' }));
      const port = data.details.services[0].ports[0];
      return Object.fromEntries(port.signatures.map((s: { operation: string }) => [s.operation, s]));
    };
    const names = (params: Param[] | undefined) => (params ?? []).map((p) => p.name);
    /** The fields docs/execute.md#signatures gives every param (a signature may say more, e.g. whether it is nillable). */
    const basics = (params: Param[] | undefined) =>
      (params ?? []).map(({ name, type, required, repeated }) => ({ name, type, required, repeated }));
    const child = (param: Param | undefined, name: string): Param => {
      const found = param?.children?.find((c: Param) => c.name === name);
      assert.ok(found, `${param?.name} has no child ${name}: ${JSON.stringify(param)}`);
      return found;
    };

    const spyneSignatures = await signatures('spyne');
    assert.deepEqual(Object.keys(spyneSignatures).sort(), spyneOperations);
    assert.equal(spyneSignatures.Multiply.input, 'Multiply');
    assert.deepEqual(basics(spyneSignatures.Multiply.parameters), [
      { name: 'a', type: 'xs:integer', required: true, repeated: false },
      { name: 'b', type: 'xs:integer', required: true, repeated: false },
    ]);
    const order = spyneSignatures.CreateOrder.parameters[0];
    assert.equal(order.name, 'order');
    assert.deepEqual(names(order.children), ['customer', 'lines', 'status']);
    assert.deepEqual(child(order, 'status').enum, ['pending', 'confirmed', 'shipped']);
    const orderLine = child(child(order, 'lines'), 'OrderLine');
    assert.equal(orderLine.repeated, true);
    assert.deepEqual(basics(orderLine.children), [
      { name: 'sku', type: 'xs:string', required: true, repeated: false },
      { name: 'quantity', type: 'xs:integer', required: true, repeated: false },
    ]);

    const jaxwsSignatures = await signatures('jaxws');
    assert.deepEqual(Object.keys(jaxwsSignatures).sort(), jaxwsOperations);
    const params = jaxwsSignatures.placeOrder.parameters;
    assert.deepEqual(names(params), ['customer', 'lines', 'priority', 'giftWrap', 'note', 'couponCode']);
    const customer = params[0];
    // The base type's fields first (complexContent extension of tns:party), then the extension's.
    assert.deepEqual(names(customer.children), ['name', 'address', 'customerId', 'email']);
    assert.deepEqual(names(child(customer, 'address').children), ['street', 'city', 'postalCode', 'country']);
    assert.equal(child(customer, 'customerId').type, 'xs:long');
    assert.equal(params[1].repeated, true);
    assert.deepEqual(basics(params[1].children), [
      { name: 'sku', type: 'xs:string', required: true, repeated: false },
      { name: 'quantity', type: 'xs:int', required: true, repeated: false },
      { name: 'unitPrice', type: 'xs:decimal', required: true, repeated: false },
    ]);
    assert.deepEqual(params[2].enum, ['LOW', 'NORMAL', 'EXPRESS']);
    assert.deepEqual(
      params.slice(3).map((p) => [p.name, p.required]),
      [
        ['giftWrap', false],
        ['note', false],
        ['couponCode', false],
      ],
    );
  });

  test('spyne: Multiply 6 × 7 is 42; Echo and Slow answer typed values', async () => {
    assert.deepEqual(ok(await send('spyne', 'Multiply', { a: 6, b: 7 })), { MultiplyResult: 42 });
    assert.deepEqual(ok(await send('spyne', 'Echo', { message: 'héllo <&> wörld' })), { EchoResult: 'héllo <&> wörld' });
    assert.deepEqual(ok(await send('spyne', 'Slow', { seconds: 0.25 })), { SlowResult: 0.25 });
  });

  test('spyne: CreateOrder takes the nested order and answers the summary it computed', async () => {
    const order = (lines: Array<{ sku: string; quantity: number }>) => ({
      order: { customer: 'ACME', lines: { OrderLine: lines }, status: 'confirmed' },
    });
    const three = [
      { sku: 'A-1', quantity: 2 },
      { sku: 'B-2', quantity: 5 },
      { sku: 'C-3', quantity: 1 },
    ];
    assert.deepEqual(ok(await send('spyne', 'CreateOrder', order(three))), {
      CreateOrderResult: {
        customer: 'ACME',
        line_count: 3,
        total_quantity: 8,
        status: 'confirmed',
        skus: { string: ['A-1', 'B-2', 'C-3'] },
      },
    });
    // A maxOccurs="unbounded" element is an array even with one item.
    assert.deepEqual(ok(await send('spyne', 'CreateOrder', order([{ sku: 'A-1', quantity: 4 }]))), {
      CreateOrderResult: { customer: 'ACME', line_count: 1, total_quantity: 4, status: 'confirmed', skus: { string: ['A-1'] } },
    });
  });

  test('spyne: Fail is 502 soap_fault with the Client.Invalid fault code and the reason', async () => {
    const fault = assertError(await send('spyne', 'Fail', { reason: 'no stock' }), 502, 'soap_fault');
    assert.equal(fault.message, 'no stock');
    assert.equal(fault.details?.fault_code, 'soap11env:Client.Invalid');
    assert.equal(fault.details?.fault_string, 'no stock');
  });

  test('spyne: params that do not fit the named types are refused at every depth, before anything is sent', async () => {
    assert.deepEqual(soapParamIssues(await send('spyne', 'Multiply', { a: 'six', b: 7 })), ['params.a']);
    assert.deepEqual(soapParamIssues(await send('spyne', 'Multiply', { a: 6 })), ['params.b']);
    const bad = {
      order: {
        lines: {
          OrderLine: [
            { sku: 'A-1', quantity: 1 },
            { sku: 'B-2', quantity: 'two' },
          ],
        },
        status: 'lost',
        colour: 'red',
      },
    };
    assert.deepEqual(soapParamIssues(await send('spyne', 'CreateOrder', bad)), [
      'params.order.colour',
      'params.order.customer',
      'params.order.lines.OrderLine[1].quantity',
      'params.order.status',
    ]);
  });

  test('JAX-WS on PHP: placeOrder with a nested customer (an extension of party), imported lines, a ref and a nil', async () => {
    const result = ok(await send('jaxws', 'placeOrder', placeOrder));
    // xs:decimal stays the exact lexical string the service sent (a double could not hold every decimal).
    assert.equal(result.return?.total, '24.25');
    assert.deepEqual({ ...result, return: { ...result.return, total: 24.25 } }, { return: placeOrderResult });

    // A maxOccurs="unbounded" element is an array even with one item; a note with text, no gift wrap.
    const one = { ...placeOrder, lines: [placeOrder.lines[0]], note: 'leave at the door', giftWrap: false };
    const oneResult = ok(await send('jaxws', 'placeOrder', one)).return;
    assert.equal(oneResult?.total, '21.00');
    assert.deepEqual(
      { ...oneResult, total: 21 },
      {
        ...placeOrderResult,
        orderId: 'ORD-42-1',
        lineCount: 1,
        totalQuantity: 2,
        total: 21,
        giftWrap: false,
        skus: ['A-1'],
        noteStatus: 'given: leave at the door',
      },
    );
  });

  test('JAX-WS on PHP: the placeOrder envelope is the one zeep builds, with the empty SOAPAction', async () => {
    // SoapServer takes children in any namespace, so the answer alone does not show this: wrapper qualified, its
    // children not (no elementFormDefault), the element ref'd (a global element) qualified, note xsi:nil.
    jaxws.clearLog();
    ok(await send('jaxws', 'placeOrder', placeOrder));
    const posts = jaxws.posts();
    assert.equal(posts.length, 1);
    assert.equal(posts[0].soapAction, '""');
    const [comparison] = await zeepCalls([
      { wsdl: jaxws.url('/orders?wsdl'), operation: 'placeOrder', params: placeOrder, sent: posts[0].body },
    ]);
    assert.ok('same' in comparison, JSON.stringify(comparison));
    assert.deepEqual(comparison.sent, comparison.zeep);
  });

  test('JAX-WS on PHP: getCustomer answers the extension with its inherited fields; a fault is 502', async () => {
    assert.deepEqual(ok(await send('jaxws', 'getCustomer', { customerId: 7 })), {
      return: {
        name: 'Customer 7',
        address: { street: '7 Main St', city: 'Springfield', country: 'US' },
        customerId: 7,
        email: 'c7@example.com',
      },
    });
    const fault = assertError(await send('jaxws', 'getCustomer', { customerId: 0 }), 502, 'soap_fault');
    assert.equal(fault.details?.fault_string, 'no customer 0');
  });

  test('JAX-WS on PHP: params are checked against the inherited, imported and enumerated types', async () => {
    jaxws.clearLog();
    const bad = {
      ...placeOrder,
      customer: { ...acme, address: { street: '1 Main St', country: 'US' }, customerId: 'forty-two' },
      lines: [placeOrder.lines[0], { sku: 'B-2', quantity: 1.5, unitPrice: 'cheap' }],
      priority: 'URGENT',
    };
    assert.deepEqual(soapParamIssues(await send('jaxws', 'placeOrder', bad)), [
      'params.customer.address.city',
      'params.customer.customerId',
      'params.lines[1].quantity',
      'params.lines[1].unitPrice',
      'params.priority',
    ]);
    assert.deepEqual(jaxws.posts(), [], 'nothing was sent');
  });

  test('overloads: test lists one signature per overload of Find, each with its input, under one operation name', async () => {
    assert.equal((await put('directory', jaxws.url('/directory?wsdl'))).statusCode, 201);
    const [service] = ok(await run('directory', { operation: 'test' })).details.services;
    const [port] = service.ports;
    assert.deepEqual(port.operations, ['Find']);
    const string = (name: string) => ({ name, type: 'xs:string', required: true, repeated: false });
    // The binding's order (ByName, ById, ByAlias), each bound to its portType overload by the input's name.
    assert.deepEqual(port.signatures, [
      {
        operation: 'Find',
        input: 'FindByName',
        parameters: [string('name'), { name: 'exact', type: 'xs:boolean', required: false, repeated: false }],
        output: 'FindByNameResponse',
      },
      {
        operation: 'Find',
        input: 'FindById',
        parameters: [{ name: 'id', type: 'xs:int', required: true, repeated: false }],
        // The binding's soap:header, by its part's name.
        headers: [
          { name: 'auth', type: 'anonymous', required: false, repeated: false, nillable: true, children: [string('token')] },
        ],
        output: 'FindByIdResponse',
      },
      { operation: 'Find', input: 'FindByAlias', parameters: [string('name')], output: 'FindByAliasResponse' },
    ]);
  });

  test('overloads: the params choose the one overload they fit, and the server runs that one', async () => {
    jaxws.clearLog();
    assert.deepEqual(ok(await send('directory', 'Find', { id: 7 })), { return: 'by id 7' });
    assert.deepEqual(ok(await send('directory', 'Find', { name: 'ann', exact: true })), { return: 'by name ann (exact)' });
    const [byId, byName] = jaxws.posts();
    assert.equal(byId.soapAction, '"urn:directory/FindById"');
    const envelope = (inner: string) => `<s:Envelope xmlns:s="${SOAP11}"><s:Body>${inner}</s:Body></s:Envelope>`;
    // The input element in the schema's namespace, its children unqualified (the schema has no elementFormDefault).
    assert.deepEqual(compareXml(byId.body, envelope('<d:FindById xmlns:d="urn:directory"><id>7</id></d:FindById>')), []);
    assert.equal(byName.soapAction, '"urn:directory/FindByName"');
    // A header the binding declares is written by its schema: the global element Auth in its namespace.
    jaxws.clearLog();
    const auth = { auth: { token: 't-1' } };
    assert.deepEqual(ok(await run('directory', { operation: 'send', method: 'Find', params: { id: 8 }, soap_headers: auth })), {
      return: 'by id 8',
    });
    const [withHeader] = jaxws.posts();
    const expected =
      `<s:Envelope xmlns:s="${SOAP11}"><s:Header><d:Auth xmlns:d="urn:directory"><token>t-1</token></d:Auth></s:Header>` +
      '<s:Body><d:FindById xmlns:d="urn:directory"><id>8</id></d:FindById></s:Body></s:Envelope>';
    assert.deepEqual(compareXml(withHeader.body, expected), []);
    const badHeader = assertError(
      await run('directory', {
        operation: 'send',
        method: 'Find',
        params: { id: 8 },
        soap_headers: { auth: { token: 't', x: 1 } },
      }),
      400,
      'invalid_soap_params',
    );
    assert.deepEqual(pathsOf(badHeader.details?.issues), ['soap_headers.auth.x']);
    assert.equal(jaxws.posts().length, 1, 'nothing was sent for the refused header');
    assert.deepEqual(
      compareXml(
        byName.body,
        envelope('<d:FindByName xmlns:d="urn:directory"><name>ann</name><exact>true</exact></d:FindByName>'),
      ),
      [],
    );
  });

  test('overloads: `input` chooses; params that fit several are 400 ambiguous_soap_method, none: invalid_soap_params', async () => {
    jaxws.clearLog();
    assert.deepEqual(
      ok(await run('directory', { operation: 'send', method: 'Find', input: 'FindByAlias', params: { name: 'ann' } })),
      {
        return: 'by alias ann',
      },
    );
    assert.deepEqual(
      ok(await run('directory', { operation: 'send', method: 'Find', input: 'FindByName', params: { name: 'ann' } })),
      {
        return: 'by name ann',
      },
    );
    assert.equal(jaxws.posts().length, 2);
    jaxws.clearLog();

    const ambiguous = assertError(await send('directory', 'Find', { name: 'ann' }), 400, 'ambiguous_soap_method');
    assert.deepEqual(inputsOf(ambiguous.details?.overloads), ['FindByName', 'FindByAlias']);
    assert.match(ambiguous.message, /input/);

    const none = assertError(await send('directory', 'Find', { id: 'seven' }), 400, 'invalid_soap_params');
    // The problems of the closest overload (FindById: one), and every overload for the caller to choose from.
    assert.deepEqual(pathsOf(none.details?.issues), ['params.id']);
    assert.deepEqual(inputsOf(none.details?.overloads), ['FindByName', 'FindById', 'FindByAlias']);
    assert.deepEqual(none.details?.expected, [{ name: 'id', type: 'xs:int', required: true, repeated: false }]);

    const unknownInput = assertError(
      await run('directory', { operation: 'send', method: 'Find', input: 'FindByPhone', params: {} }),
      400,
      'validation_failed',
    );
    assert.deepEqual(unknownInput.details?.issues, [
      { path: 'input', message: 'is not an input of Find; inputs: FindByName, FindById, FindByAlias' },
    ]);
    // `input` names an overload: the params must fit that one, even when another would take them.
    const wrongOne = assertError(
      await run('directory', { operation: 'send', method: 'Find', input: 'FindByAlias', params: { id: 7 } }),
      400,
      'invalid_soap_params',
    );
    assert.deepEqual(pathsOf(wrongOne.details?.issues), ['params.id', 'params.name']);
    assert.deepEqual(jaxws.posts(), [], 'nothing was sent for a refused call');
  });
});
