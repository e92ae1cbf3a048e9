import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { listen } from 'soap';
import { assertError } from '../support/assertions.ts';
import { body, type Harness, harness } from '../support/harness.ts';

// An rpc/literal service: parameters are message parts, not children of a wrapper element.
const wsdl = `<?xml version="1.0" encoding="UTF-8"?>
<definitions xmlns="http://schemas.xmlsoap.org/wsdl/" xmlns:soap="http://schemas.xmlsoap.org/wsdl/soap/"
  xmlns:tns="http://example.com/inventory" xmlns:xsd="http://www.w3.org/2001/XMLSchema"
  targetNamespace="http://example.com/inventory" name="Inventory">
  <message name="ReserveRequest"><part name="sku" type="xsd:string"/><part name="quantity" type="xsd:int"/></message>
  <message name="ReserveResponse"><part name="reservation" type="xsd:string"/><part name="caller" type="xsd:string"/></message>
  <message name="VersionRequest"/>
  <message name="VersionResponse"><part name="version" type="xsd:string"/></message>
  <portType name="InventoryPort"><operation name="Reserve"><input message="tns:ReserveRequest"/><output message="tns:ReserveResponse"/></operation>
    <operation name="Version"><input message="tns:VersionRequest"/><output message="tns:VersionResponse"/></operation></portType>
  <binding name="InventoryBinding" type="tns:InventoryPort">
    <soap:binding style="rpc" transport="http://schemas.xmlsoap.org/soap/http"/>
    <operation name="Reserve"><soap:operation soapAction="http://example.com/inventory/Reserve"/>
      <input><soap:body use="literal" namespace="http://example.com/inventory"/></input>
      <output><soap:body use="literal" namespace="http://example.com/inventory"/></output></operation>
    <operation name="Version"><soap:operation soapAction="http://example.com/inventory/Version"/>
      <input><soap:body use="literal" namespace="http://example.com/inventory"/></input>
      <output><soap:body use="literal" namespace="http://example.com/inventory"/></output></operation>
  </binding>
  <service name="InventoryService"><port name="InventoryPort" binding="tns:InventoryBinding"><soap:address location="http://127.0.0.1:1/inventory"/></port></service>
</definitions>`;

describe('SOAP WSDL mode against node-soap’s own server (rpc/literal)', () => {
  let h: Harness;
  let server: Server;
  let auth: { key: string; tenant: string };
  const seen: Array<{ args: Record<string, unknown>; headers: unknown }> = [];

  before(async () => {
    server = createServer((_req, res) => {
      res.statusCode = 404;
      res.end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const service = {
      InventoryService: {
        InventoryPort: {
          Reserve(args: Record<string, unknown>, _callback: unknown, headers: unknown) {
            seen.push({ args, headers });
            if (args.sku === 'none') {
              throw { Fault: { faultcode: 'soap:Client', faultstring: 'Out of stock', detail: { sku: 'none' } } };
            }
            return { reservation: `R-${args.sku}-${args.quantity}`, caller: 'ok' };
          },
          Version() {
            return { version: '1.2.3' };
          },
        },
      },
    };
    listen(server, '/inventory', service, wsdl.replace('http://127.0.0.1:1', origin));
    h = await harness();
    await h.tenant('acme');
    auth = { key: (await h.key('acme', ['integrations.*'])).key, tenant: 'acme' };
    const put = await h.call(auth, {
      method: 'PUT',
      url: '/api/v1/integrations/inventory',
      payload: { connector: 'soap-1.0.0', config: { endpoint_url: `${origin}/inventory?wsdl` } },
    });
    assert.equal(put.statusCode, 201, put.body);
  });
  after(async () => {
    await h.close();
    await new Promise((resolve) => server.close(resolve));
  });

  const execute = (payload: object) => h.call(auth, { method: 'POST', url: '/api/v1/integrations/inventory/execute', payload });

  test('an rpc call: parts as params, the parts of the answer as data', async () => {
    const res = await execute({ operation: 'send', method: 'Reserve', params: { sku: 'ABC', quantity: 2 } });
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(body(res).data, { reservation: 'R-ABC-2', caller: 'ok' });
    // node-soap's server hands rpc parts to the service as the text it read.
    assert.deepEqual(seen.at(-1)?.args, { sku: 'ABC', quantity: '2' });
  });

  test('rpc parts are all required, and unknown ones are named, before any call', async () => {
    const calls = seen.length;
    const res = await execute({ operation: 'send', method: 'Reserve', params: { sku: 'ABC', colour: 'red' } });
    assert.equal(res.statusCode, 400);
    const error = body(res).error;
    assert.equal(error.code, 'invalid_soap_params');
    assert.deepEqual(error.details.issues.map((i: { path: string }) => i.path).sort(), ['params.colour', 'params.quantity']);
    assert.deepEqual(error.details.expected, [
      { name: 'sku', type: 'xs:string', required: true, repeated: false, nillable: true },
      { name: 'quantity', type: 'xs:int', required: true, repeated: false, nillable: true },
    ]);
    assert.equal(seen.length, calls, 'nothing reached the server');
  });

  test('soap_headers reach the server in the SOAP Header', async () => {
    const res = await execute({
      operation: 'send',
      method: 'Reserve',
      params: { sku: 'H', quantity: 1 },
      soap_headers: { TraceId: 'trace-123' },
    });
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(seen.at(-1)?.headers, { TraceId: 'trace-123' });
    // Headers belong to one call: the next call sends none.
    await execute({ operation: 'send', method: 'Reserve', params: { sku: 'I', quantity: 1 } });
    assert.equal(seen.at(-1)?.headers, undefined);
  });

  test('a fault thrown by a node-soap service is a normalised soap_fault', async () => {
    const res = await execute({ operation: 'send', method: 'Reserve', params: { sku: 'none', quantity: 1 } });
    assert.equal(res.statusCode, 502);
    const error = body(res).error;
    assert.equal(error.code, 'soap_fault');
    assert.equal(error.message, 'Out of stock');
    assert.deepEqual(error.details, {
      fault_code: 'soap:Client',
      fault_string: 'Out of stock',
      detail: { sku: 'none' },
      attempts: 1,
    });
  });

  test('an rpc operation whose input message has no parts is called with an empty wrapper (it was a 500)', async () => {
    const res = await execute({ operation: 'send', method: 'Version' });
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(body(res).data, { version: '1.2.3' });
    const extra = await execute({ operation: 'send', method: 'Version', params: { verbose: true } });
    assert.equal(extra.statusCode, 400, extra.body);
    assert.deepEqual(body(extra).error.details.issues, [{ path: 'params.verbose', message: 'is not a parameter of Version' }]);
  });

  test('test lists the rpc service', async () => {
    const res = await execute({ operation: 'test' });
    const int = { type: 'xs:int', required: true, repeated: false, nillable: true };
    assert.deepEqual(body(res).data.details.services, [
      {
        name: 'InventoryService',
        ports: [
          {
            name: 'InventoryPort',
            soap_version: '1.1',
            operations: ['Reserve', 'Version'],
            signatures: [
              {
                operation: 'Reserve',
                input: 'ReserveRequest',
                parameters: [
                  { name: 'sku', type: 'xs:string', required: true, repeated: false, nillable: true },
                  { name: 'quantity', ...int },
                ],
                output: 'ReserveResponse',
              },
              { operation: 'Version', input: 'VersionRequest', parameters: [], output: 'VersionResponse' },
            ],
          },
        ],
      },
    ]);
  });
});

describe('SOAP sync checks both parts against the WSDL before either runs', () => {
  let h: Harness;
  let server: Server;
  let auth: { key: string; tenant: string };
  let calls = 0;

  before(async () => {
    server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const service = {
      InventoryService: {
        InventoryPort: {
          Reserve(args: Record<string, unknown>) {
            calls += 1;
            return { reservation: `R-${args.sku}`, caller: 'ok' };
          },
        },
      },
    };
    listen(server, '/inventory', service, wsdl.replace('http://127.0.0.1:1', origin));
    h = await harness();
    await h.tenant('acme');
    auth = { key: (await h.key('acme', ['integrations.*'])).key, tenant: 'acme' };
    await h.call(auth, {
      method: 'PUT',
      url: '/api/v1/integrations/inv',
      payload: { connector: 'soap-1.0.0', config: { endpoint_url: `${origin}/inventory?wsdl` } },
    });
  });
  after(async () => {
    await h.close();
    await new Promise((resolve) => server.close(resolve));
  });

  const sync = (inbound: object) =>
    h.call(auth, {
      method: 'POST',
      url: '/api/v1/integrations/inv/execute',
      payload: { operation: 'sync', outbound: { method: 'Reserve', params: { sku: 'A', quantity: 1 } }, inbound },
    });

  test('an inbound method the WSDL lacks: 400 unknown_soap_method, stage inbound, and the outbound was not sent', async () => {
    const res = await sync({ method: 'Release', params: {} });
    assert.equal(res.statusCode, 400);
    const error = body(res).error;
    assert.equal(error.code, 'unknown_soap_method');
    assert.equal(error.details.stage, 'inbound');
    assert.equal(error.details.outbound, null);
    assert.deepEqual(error.details.available_methods, ['Reserve', 'Version']);
    assert.equal(calls, 0);
  });

  test('inbound params that do not fit: 400 invalid_soap_params with paths under inbound, and nothing sent', async () => {
    const res = await sync({ method: 'Reserve', params: { sku: 'B' } });
    assert.equal(res.statusCode, 400);
    const error = body(res).error;
    assert.equal(error.code, 'invalid_soap_params');
    assert.deepEqual(
      error.details.issues.map((i: { path: string }) => i.path),
      ['inbound.params.quantity'],
    );
    assert.equal(calls, 0);
  });

  test('both parts fine: both run', async () => {
    const res = await sync({ method: 'Reserve', params: { sku: 'C', quantity: 2 } });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(body(res).data.message_count, 2);
    assert.equal(calls, 2);
  });

  test('a part’s own field problems come before the other part’s WSDL problem: one 400 validation_failed, no stage', async () => {
    const before = calls;
    const res = await h.call(auth, {
      method: 'POST',
      url: '/api/v1/integrations/inv/execute',
      payload: {
        operation: 'sync',
        outbound: { method: 'Release', params: {} },
        inbound: { method: 'Reserve', params: { 'bad name': 1, sku: 'D', quantity: 1 } },
      },
    });
    const error = assertError(res, 400, 'validation_failed');
    assert.deepEqual(Object.keys(error.details ?? {}), ['issues'], 'no stage: the request was refused as a whole');
    assert.deepEqual(
      error.details?.issues?.map((issue) => issue.path),
      ['inbound.params.bad name'],
    );
    assert.equal(calls, before);
  });

  test('a request refused for its own fields loads no WSDL; a fine one loads it once', async () => {
    let gets = 0;
    const count = (req: IncomingMessage) => {
      if (req.method === 'GET') gets += 1;
    };
    server.on('request', count);
    try {
      const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      await h.call(auth, {
        method: 'PUT',
        url: '/api/v1/integrations/fresh',
        payload: { connector: 'soap-1.0.0', config: { endpoint_url: `${origin}/inventory?wsdl` } },
      });
      const execute = (payload: object) => h.call(auth, { method: 'POST', url: '/api/v1/integrations/fresh/execute', payload });
      const bad = { method: 'Reserve', params: { 'bad name': 1 } };
      assertError(await execute({ operation: 'receive', ...bad }), 400, 'validation_failed');
      assertError(await execute({ operation: 'sync', outbound: bad, inbound: bad }), 400, 'validation_failed');
      const batch = body(await execute({ operation: 'batch', operations: [{ operation: 'receive', data: bad }] })).data;
      assert.equal(batch.results[0].error.code, 'validation_failed');
      assert.deepEqual(batch.results[0].error.details.issues[0].path, 'operations.0.data.params.bad name');
      assert.equal(gets, 0, 'the WSDL was not loaded');
      const fine = { method: 'Reserve', params: { sku: 'E', quantity: 1 } };
      const ran = await execute({ operation: 'sync', outbound: fine, inbound: fine });
      assert.equal(ran.statusCode, 200, ran.body);
      assert.equal(gets, 1, 'both parts were prepared with one load of the WSDL');
    } finally {
      server.off('request', count);
    }
  });
});
