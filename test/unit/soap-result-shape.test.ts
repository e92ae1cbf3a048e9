import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { shapeResult } from '../../src/connectors/soap/result-shape.ts';
import { type ComplexModel, simpleModelOf } from '../../src/connectors/soap/schema-model.ts';
import { operationLayout } from '../../src/connectors/soap/signature.ts';
import { loadWsdlDocuments } from '../../src/connectors/soap/wsdl-loader.ts';
import { compileWsdl } from '../../src/connectors/soap/wsdl-model.ts';

const wsdlText = readFileSync(new URL('../support/fixtures/soap/calculator.wsdl', import.meta.url), 'utf8');

/** The output model of an operation of the calculator fixture's first port. */
async function calculator(): Promise<{ outputModel: (name: string) => ComplexModel }> {
  const { schema, services } = compileWsdl(await loadWsdlDocuments('http://fixture.test/calculator.wsdl', async () => wsdlText));
  const [port] = services.find((s) => s.name === 'CalculatorService')?.ports ?? [];
  return {
    outputModel(name) {
      const operation = port.operations.find((o) => o.name === name);
      const output = operation && operationLayout(schema, operation).output;
      assert.ok(output, `${name} has an output`);
      return output.model;
    },
  };
}

test('a result follows the output schema: a repeatable element is a list even with one item, numbers typed', async () => {
  const model = (await calculator()).outputModel('GetOrder');
  const read = { GetOrderResult: { id: 'B-1', customer: 'ACME', lines: { sku: 'SKU-1', quantity: '1', price: '10.99' } } };
  assert.deepEqual(shapeResult(model, read), {
    GetOrderResult: { id: 'B-1', customer: 'ACME', lines: [{ sku: 'SKU-1', quantity: 1, price: '10.99' }] },
  });
  // Already a list, and already typed: unchanged.
  const listed = { GetOrderResult: { id: 'A', customer: 'ACME', lines: [{ sku: 'S', quantity: 2, price: 1.5 }] } };
  assert.deepEqual(shapeResult(model, listed), listed);
});

test('integers beyond 2^53 and text that is not a number stay text; unknown elements stay as read', async () => {
  const model = (await calculator()).outputModel('Add');
  assert.deepEqual(shapeResult(model, { AddResult: '9007199254740993' }), { AddResult: '9007199254740993' });
  assert.deepEqual(shapeResult(model, { AddResult: 'n/a' }), { AddResult: 'n/a' });
  assert.deepEqual(shapeResult(model, { AddResult: ' 42 ', Extra: { x: '1' } }), { AddResult: 42, Extra: { x: '1' } });
});

test('rpc/encoded answers: xsi:type on values is dropped, SOAP-encoded arrays are lists, declared attributes stay', () => {
  const string = simpleModelOf('string');
  const int = simpleModelOf('int');
  const item: ComplexModel = {
    kind: 'complex',
    type: 'RemoteItem',
    open: false,
    particles: [{ name: 'id', ns: '', required: true, repeated: false, nillable: false, model: int }],
  };
  const model: ComplexModel = {
    kind: 'complex',
    type: 'Answer',
    open: false,
    particles: [
      { name: 'count', ns: '', required: true, repeated: false, nillable: false, model: int },
      { name: 'names', ns: '', required: true, repeated: false, nillable: false, model: arrayOf(string) },
      { name: 'items', ns: '', required: true, repeated: false, nillable: false, model: arrayOf(item) },
      { name: 'phone', ns: '', required: true, repeated: false, nillable: false, model: item },
    ],
  };
  const read = {
    count: { $attributes: { type: 'xsd:int' }, $value: '2' },
    names: {
      $attributes: { type: 'soapenc:Array', arrayType: 'xsd:string[2]' },
      item: ['a', { $attributes: { type: 'xsd:string' }, $value: 'b' }],
    },
    items: { RemoteItem: { $attributes: { type: 'ns1:RemoteItem' }, id: { $attributes: { type: 'xsd:int' }, $value: '7' } } },
    // A declared attribute named `type` with a plain value is the element's own.
    phone: { $attributes: { type: 'mobile' }, id: '1' },
  };
  assert.deepEqual(shapeResult(model, read), {
    count: 2,
    names: ['a', 'b'],
    items: [{ id: 7 }],
    phone: { $attributes: { type: 'mobile' }, id: 1 },
  });
});

function arrayOf(items: ComplexModel['arrayOf'] & object): ComplexModel {
  return { kind: 'complex', type: 'soapenc:Array', particles: [], open: true, arrayOf: items };
}

test('an element named __proto__ (a valid XML name) stays an element of the result', () => {
  const model: ComplexModel = { kind: 'complex', type: 'Answer', open: true, particles: [] };
  const read = JSON.parse('{"__proto__": {"x": "1"}, "a": "2"}') as Record<string, unknown>;
  const shaped = shapeResult(model, read) as Record<string, unknown>;
  assert.ok(Object.hasOwn(shaped, '__proto__'));
  assert.equal(Object.getPrototypeOf(shaped), Object.prototype);
  assert.equal(JSON.stringify(shaped), '{"__proto__":{"x":"1"},"a":"2"}');
});
