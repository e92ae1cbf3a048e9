import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { assertError, assertOk as ok } from '../support/assertions.ts';
import type { FixtureProcess } from '../support/fixture-process.ts';
import { type Auth, type Harness, harness, integrationCalls } from '../support/harness.ts';
import { startSpyneServer } from '../support/spyne-server.ts';

/**
 * Derived types (`xsi:type`) both ways, and facets, against a real spyne service (test/support/fixtures/spyne/service.py at
 * /shapes, issue 23): spyne writes `xsi:type` for a subclass where the base class is declared, reads one in a
 * request, and its lxml validator refuses a value outside a facet with a Client fault.
 */

describe('WSDL mode against spyne: derived types and facets', () => {
  let spyne: FixtureProcess;
  let h: Harness;
  let auth: Auth;
  const { put, execute } = integrationCalls(() => ({ h, auth }));
  const send = (method: string, params: Record<string, unknown>) => execute('shapes', { operation: 'send', method, params });

  before(async () => {
    spyne = await startSpyneServer();
    h = await harness();
    await h.tenant('shapes');
    auth = await h.auth('shapes', ['*']);
    const shapes = await put('shapes', 'soap-1.0.0', { endpoint_url: spyne.url('/shapes?wsdl') });
    assert.equal(shapes.statusCode, 201, shapes.body);
    const raw = await put('shapes-raw', 'soap-1.0.0', {
      endpoint_url: spyne.url('/shapes'),
      namespace: 'http://example.com/shapes',
    });
    assert.equal(raw.statusCode, 201, raw.body);
  });
  after(async () => {
    await h?.close();
    await spyne?.close();
  });

  test('an answer whose xsi:type names a derived type is shaped by it and says which in $type', async () => {
    assert.deepEqual(ok(await send('Largest', { kind: 'circle' })), {
      LargestResult: { $type: 'Circle', name: 'c', radius: 2.5 },
    });
    assert.deepEqual(ok(await send('Largest', { kind: 'square' })), { LargestResult: { $type: 'Square', name: 's', side: 4 } });
    // The declared type itself: no xsi:type, no $type.
    assert.deepEqual(ok(await send('Largest', { kind: 'plain' })), { LargestResult: { name: 'plain' } });
  });

  test("test's signature lists the types derived from a parameter's type", async () => {
    const details = ok(await execute('shapes', { operation: 'test' })).details;
    const describe = details.services[0].ports[0].signatures.find((s: { operation: string }) => s.operation === 'Describe');
    assert.deepEqual(describe.parameters[0], {
      name: 'shape',
      type: 'Shape',
      required: true,
      repeated: false,
      nillable: true,
      derived_types: ['Circle', 'Square'],
      children: [{ name: 'name', type: 'xs:string', required: false, repeated: false, nillable: true }],
    });
  });

  test('$type sends a derived type where its base is declared, as spyne reads it', async () => {
    assert.deepEqual(ok(await send('Describe', { shape: { $type: 'Circle', name: 'x', radius: 3 } })), {
      DescribeResult: 'Circle(name=x, radius=3.0)',
    });
    assert.deepEqual(ok(await send('Describe', { shape: { $type: 'Square', name: 'q', side: 4 } })), {
      DescribeResult: 'Square(name=q, side=4)',
    });
    assert.deepEqual(ok(await send('Describe', { shape: { name: 'b' } })), { DescribeResult: 'Shape(name=b)' });
  });

  test('a $type that names no derived type, or content the named type lacks: 400 invalid_soap_params', async () => {
    const unknown = assertError(await send('Describe', { shape: { $type: 'Triangle', name: 'x' } }), 400, 'invalid_soap_params');
    assert.deepEqual(unknown.details?.issues, [
      { path: 'params.shape.$type', message: 'must name a type derived from Shape: Circle, Square' },
    ]);
    const wrong = assertError(await send('Describe', { shape: { $type: 'Square', radius: 1 } }), 400, 'invalid_soap_params');
    assert.deepEqual(wrong.details?.issues, [{ path: 'params.shape.radius', message: 'is not an element of Square' }]);
  });

  test('facets are checked before sending, every problem at once; spyne refuses each of those values itself', async () => {
    const res = await send('Reserve', { code: 'ab', seats: 10, price: 1.234 });
    const issues = assertError(res, 400, 'invalid_soap_params').details?.issues;
    assert.deepEqual(issues, [
      { path: 'params.code', message: 'must be at least 3 characters long (minLength)' },
      { path: 'params.seats', message: 'must be at most 9 (maxInclusive)' },
      { path: 'params.price', message: 'must have at most 2 digits after the point (fractionDigits)' },
    ]);
    const pattern = assertError(await send('Reserve', { code: 'abc', seats: 1, price: 1 }), 400, 'invalid_soap_params');
    assert.deepEqual(pattern.details?.issues, [
      { path: 'params.code', message: 'must match the pattern [A-Z]+[0-9]* (pattern)' },
    ]);
    const long = assertError(await send('Reserve', { code: 'ABCDEFGHI', seats: 1, price: 1 }), 400, 'invalid_soap_params');
    assert.deepEqual(long.details?.issues, [{ path: 'params.code', message: 'must be at most 8 characters long (maxLength)' }]);
    const digits = assertError(await send('Reserve', { code: 'ABC', seats: 1, price: 123456.7 }), 400, 'invalid_soap_params');
    assert.deepEqual(digits.details?.issues, [{ path: 'params.price', message: 'must have at most 6 digits (totalDigits)' }]);

    // Values just inside every facet go through.
    assert.deepEqual(ok(await send('Reserve', { code: 'ABCDEFG1', seats: 9, price: '1234.56' })), {
      ReserveResult: 'ABCDEFG1 9 1234.56',
    });

    // The same refused values sent as they are (raw mode checks nothing): spyne's validator refuses each.
    const valid = { code: 'ABC', seats: 1, price: '1' };
    for (const [field, value] of [
      ['code', 'ab'],
      ['code', 'abc'],
      ['code', 'ABCDEFGHI'],
      ['seats', '10'],
      ['seats', '0'],
      ['price', '1.234'],
      ['price', '123456.7'],
    ]) {
      const fault = assertError(
        await execute('shapes-raw', { operation: 'send', method: 'Reserve', params: { ...valid, [field]: value } }),
        502,
        'soap_fault',
      );
      assert.match(String(fault.details?.fault_code), /SchemaValidationError/, `${field}=${value}`);
    }
  });
});
