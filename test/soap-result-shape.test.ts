import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { open_wsdl, type WSDL } from 'soap/lib/wsdl/index.js';
import { shapeResult } from '../src/connectors/soap/result-shape.ts';
import { SchemaModel } from '../src/connectors/soap/schema-model.ts';
import { outputModel } from '../src/connectors/soap/signature.ts';

const wsdlText = readFileSync(new URL('./fixtures/soap/calculator.wsdl', import.meta.url), 'utf8');

async function calculator(): Promise<{ schema: SchemaModel; method: (name: string) => unknown }> {
  const wsdl = await new Promise<WSDL>((resolve, reject) =>
    open_wsdl(wsdlText as never, {}, (error: unknown, parsed?: WSDL) => (error || !parsed ? reject(error) : resolve(parsed))),
  );
  // biome-ignore lint/suspicious/noExplicitAny: node-soap's parsed WSDL is untyped.
  const services = (wsdl.definitions as any).services;
  const port = Object.values(services.CalculatorService.ports)[0] as { binding: { methods: Record<string, unknown> } };
  return { schema: new SchemaModel(wsdl), method: (name) => port.binding.methods[name] };
}

test('a result follows the output schema: a repeatable element is a list even with one item, numbers typed', async () => {
  const { schema, method } = await calculator();
  const model = outputModel(schema, method('GetOrder'));
  const read = { GetOrderResult: { id: 'B-1', customer: 'ACME', lines: { sku: 'SKU-1', quantity: '1', price: '10.99' } } };
  assert.deepEqual(shapeResult(model, read), {
    GetOrderResult: { id: 'B-1', customer: 'ACME', lines: [{ sku: 'SKU-1', quantity: 1, price: '10.99' }] },
  });
  // Already a list, and already typed: unchanged.
  const listed = { GetOrderResult: { id: 'A', customer: 'ACME', lines: [{ sku: 'S', quantity: 2, price: 1.5 }] } };
  assert.deepEqual(shapeResult(model, listed), listed);
});

test('integers beyond 2^53 and text that is not a number stay text; unknown elements stay as read', async () => {
  const { schema, method } = await calculator();
  const model = outputModel(schema, method('Add'));
  assert.deepEqual(shapeResult(model, { AddResult: '9007199254740993' }), { AddResult: '9007199254740993' });
  assert.deepEqual(shapeResult(model, { AddResult: 'n/a' }), { AddResult: 'n/a' });
  assert.deepEqual(shapeResult(model, { AddResult: ' 42 ', Extra: { x: '1' } }), { AddResult: 42, Extra: { x: '1' } });
});
