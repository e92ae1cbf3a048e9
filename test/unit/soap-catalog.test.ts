import assert from 'node:assert/strict';
import { test } from 'node:test';
import { soapCatalog } from '../../src/connectors/soap/catalog.ts';
import { ParamsSchemas } from '../../src/connectors/soap/params-schema.ts';
import { ResultSchemas } from '../../src/connectors/soap/result-schema.ts';
import { type ComplexModel, simpleModelOf } from '../../src/connectors/soap/schema-model.ts';
import type { SimpleModel } from '../../src/connectors/soap/type-model.ts';
import { catalogWithOperations, compiled, dataOf, executeTakes, modelOf, shopWsdl } from '../support/soap-catalog-fixture.ts';

const shop = await modelOf(shopWsdl);
const entries = catalogWithOperations(shop, ['Find']);
const named = (name: string) => {
  const found = entries.find((e) => e.entry.name === name);
  assert.ok(found, `an entry ${name}`);
  return found;
};
const placeOrder = named('PlaceOrder');
const takesParams = compiled(placeOrder.entry.input_schema);
const takesParamsAsserted = compiled(placeOrder.entry.input_schema, true);

/** A valid PlaceOrder params object, with `changes` on top (undefined: left out, as JSON has no undefined). */
const order = (changes: Record<string, unknown> = {}) =>
  JSON.parse(
    JSON.stringify({
      $attributes: { channel: 'web' },
      id: 7,
      status: 'open',
      when: '2024-01-02T03:04:05',
      lines: [{ sku: 'AB', quantity: 1 }],
      payment: 'card',
      ...changes,
    }),
  ) as Record<string, unknown>;

/** Each value's verdict from the schema equals execute's (params check and envelope writer). */
function agrees(values: Array<Record<string, unknown>>): void {
  for (const value of values) {
    const expected = executeTakes(placeOrder.layout.input, value);
    assert.equal(takesParams(value), expected, `${JSON.stringify(value)}: execute ${expected ? 'takes' : 'refuses'} it`);
  }
}

test('entries: the default port by operation name, others qualified, overloads ~2, read only when listed', () => {
  assert.deepEqual(
    entries.map((e) => [e.entry.name, e.entry.kind]),
    [
      ['ShopService.ShopSoap12.PlaceOrder', 'write'],
      ['PlaceOrder', 'write'],
      ['Find', 'read'],
      ['Find~2', 'write'],
      ['TagService.TagPort.Tag', 'write'],
    ],
  );
  assert.deepEqual(named('Find~2').entry.request({ name: 'x' }), {
    method: 'Find',
    service: 'ShopService',
    port: 'ShopSoap',
    input: 'FindByName',
    params: { name: 'x' },
  });
  // Not overloaded: no `input`; the port always, so that the call is exact.
  assert.deepEqual(named('ShopService.ShopSoap12.PlaceOrder').entry.request({}), {
    method: 'PlaceOrder',
    service: 'ShopService',
    port: 'ShopSoap12',
    params: {},
  });
  // A choice of port names the others by their operation.
  const chosen = soapCatalog(shop, { port: 'ShopSoap12' }, new Set());
  assert.deepEqual(chosen.map((e) => e.name).slice(0, 2), ['PlaceOrder', 'ShopService.ShopSoap.PlaceOrder']);
});

test('descriptions: the WSDL’s documentation, cleaned, else one generated line', () => {
  assert.equal(placeOrder.entry.description, 'Places an order.\nPays it.');
  assert.equal(named('Find').entry.description, 'SOAP operation Find of service ShopService, port ShopSoap (input FindById).');
});

test('every schema compiles under strict Ajv, formats as annotations and asserted', () => {
  for (const { entry } of entries) {
    for (const schema of [entry.input_schema, entry.output_schema]) {
      compiled(schema);
      compiled(schema, true);
    }
  }
});

test('complex types: required elements, no unknown ones, a substitution group’s member for its head', () => {
  agrees([
    order(),
    order({ id: undefined }),
    order({ unknown: 1 }),
    order({ payment: undefined, card: 'visa' }),
    order({ payment: undefined, cash: 5 }),
    order({ payment: undefined, cash: 'five' }),
    order({ payment: undefined }),
    order({ $attributes: undefined }),
    order({ $attributes: { channel: 'web', other: 1 } }),
    order({ $attributes: { channel: 'web', 'xsi:type': 'x', xmlns: 'urn:x' } }),
    order({ $attributes: { channel: null } }),
    order({ $value: 'mixed text' }),
    order({ $value: { no: 1 } }),
  ]);
});

test('repeated elements take a list or one value; nillable and optional ones null', () => {
  agrees([
    order({ lines: { sku: 'AB', quantity: 1 } }),
    order({ lines: [] }),
    order({ lines: [{ sku: 'AB', quantity: 1 }, null] }),
    order({ lines: [[{ sku: 'AB', quantity: 1 }]] }),
    order({ note: null }),
    order({ id: null }),
    order({ note: ['a', 'b'] }),
    order({ tree: { label: 'a', child: [{ label: 'b', child: { label: 'c' } }] } }),
    order({ tree: { label: 'a', child: [{ label: 'b', child: { labl: 'c' } }] } }),
  ]);
});

test('attributes and simple content: $attributes by their types, $value, or the text alone', () => {
  const line = (price: unknown) => order({ lines: [{ sku: 'AB', quantity: 1, price }] });
  agrees([
    line({ $attributes: { currency: 'EUR' }, $value: '12.50' }),
    line({ $attributes: { currency: 'GBP' }, $value: '12.50' }),
    line({ $value: '12.50' }),
    line({ $attributes: { currency: 'EUR' }, $value: 'twelve' }),
    line({ $attributes: { currency: 'EUR' }, $value: 12.5 }),
    line({ $attributes: { currency: 'EUR' } }),
    line('12.50'),
    line(12.5),
    line(true),
    order({ lines: [{ sku: 'AB', quantity: 1, $attributes: { id: '3' } }] }),
    order({ lines: [{ sku: 'AB', quantity: 1, $attributes: { id: 'three' } }] }),
    order({ extra: { known: 'k', anything: { at: ['all'] }, $attributes: { free: 1 } } }),
    order({ extra: { known: 'k', $type: 'Nothing' } }),
    order({ id: { $value: 5, $attributes: { 'xsi:type': 'xs:int' } } }),
    order({ id: { $value: 'five' } }),
    order({ id: {} }),
  ]);
});

test('derived types: $type names one (its local name, or {namespace}name), the value then of its type', () => {
  agrees([
    order({ shape: { name: 's' } }),
    order({ shape: { $type: 'Circle', name: 'c', radius: 1.5 } }),
    order({ shape: { $type: '{urn:shop}Square', name: 'q', side: 3 } }),
    order({ shape: { $type: 'Square', name: 'q', side: -3 } }),
    order({ shape: { $type: 'Square', name: 'q', radius: 3 } }),
    order({ shape: { $type: 'Hexagon', name: 'h' } }),
    order({ shape: { name: 's', radius: 1 } }),
  ]);
  const shape = (placeOrder.entry.input_schema.properties as Record<string, Record<string, unknown>>).shape;
  assert.match(JSON.stringify(shape), /"enum":\["Circle","\{urn:shop\}Circle"\]/);
});

test('built-ins: integers in range as numbers or their texts, booleans, decimals’ digits, dates, base64', () => {
  agrees([
    ...[2147483647, -2147483648, 2147483648, 1.5, '2147483647', ' -2147483648 ', '+007', '2147483648', '1e3', ''].map((id) =>
      order({ id }),
    ),
    ...[2 ** 53 + 2, '9223372036854775807', '9223372036854775808', '-9223372036854775808', 2 ** 63].map((big) => order({ big })),
    ...[true, 'false', ' 1 ', 0, 'yes'].map((yes) => order({ yes })),
    ...['123.45', '-0.10', '1234.5', '0.125', '00012.300', 12.5, '.5', '5.', '.'].map((total) => order({ total })),
    ...['2024-01-02T03:04:05Z', '2024-01-02T03:04:05.5+01:00', ' 2024-01-02T03:04:05 ', '2024-01-02', 20240102].map((when) =>
      order({ when }),
    ),
    ...['2024-01-02', '2024-01-02Z', '-12345-01-02', '2024-1-2'].map((day) => order({ day })),
    ...['c2FtcGxl', 'c2Ft cGxl\n', 'not base64!', 5].map((blob) => order({ blob })),
  ]);
});

test('RFC 3339 formats are said only of texts in their shape: asserting them refuses no text execute takes but impossible dates', () => {
  for (const when of ['2024-01-02T03:04:05', '2024-01-02T03:04:05Z', ' 2024-01-02T03:04:05+01:00', '12024-01-02T03:04:05Z']) {
    assert.equal(takesParamsAsserted(order({ when })), true, when);
  }
  assert.equal(takesParamsAsserted(order({ when: '2024-02-30T03:04:05Z' })), false);
  assert.equal(takesParams(order({ when: '2024-02-30T03:04:05Z' })), true, 'as an annotation, the pattern decides');
  const when = JSON.stringify((placeOrder.entry.input_schema.properties as Record<string, unknown>).when);
  assert.match(when, /"format":"date-time"/);
  assert.match(JSON.stringify(placeOrder.entry.input_schema), /"contentEncoding":"base64"/);
});

test('restrictions: enumerations (a number whose text is one too), patterns, lengths, bounds, lists, unions', () => {
  agrees([
    ...['open', 'closed', 'Open', '1', 1, 1.0, '01'].map((status) => order({ status })),
    ...['AB', 'ABC', 'A', 'ABCD', 'ab', 'AB1'].map((sku) => order({ lines: [{ sku, quantity: 1 }] })),
    ...[0, 99, 100, -1, '50', '100', ' 99 '].map((discount) => order({ discount })),
    ...['true 0 1', [true, false], ['1', 'nope'], '', 'maybe', true, 1, [[true]]].map((flags) => order({ flags })),
    ...['1 2 3', '1 2 3 4', [255, '0'], [256], [1, 2, 3, 4], 7, ''].map((sizes) => order({ sizes })),
    ...['All', 'all', 32767, '-32768', 32768, 'x'].map((limit) => order({ limit })),
  ]);
});

test('SOAP-encoded arrays are sent as given; only null is refused, where the element is neither nillable nor optional', () => {
  const tag = named('TagService.TagPort.Tag');
  const validate = compiled(tag.entry.input_schema);
  for (const names of [['a', 'b'], [], 'a', { item: 'a' }, null]) {
    assert.equal(validate({ names, count: 2 }), executeTakes(tag.layout.input, { names, count: 2 }), JSON.stringify(names));
  }
  const names = tag.layout.input.model.particles[0];
  const model: ComplexModel = {
    kind: 'complex',
    type: 'T',
    open: false,
    particles: [{ ...names, name: 'names', nillable: false }],
  };
  const layout = { ...tag.layout.input, model };
  const strict = compiled(new ParamsSchemas().params(model));
  for (const value of [null, ['a', null], 'a']) {
    assert.equal(strict({ names: value }), executeTakes(layout, { names: value }), JSON.stringify(value));
  }
});

test('a type that contains itself is a $ref to itself; past the size bound a deeper level is {}, never a refusal', () => {
  const schema = placeOrder.entry.input_schema;
  const defs = schema.$defs as Record<string, Record<string, unknown>>;
  assert.match(JSON.stringify(defs.Node), /"\$ref":"#\/\$defs\/Node"/);
  const small = new ParamsSchemas(2_000).params(placeOrder.layout.input.model);
  assert.ok(JSON.stringify(small).length < JSON.stringify(schema).length);
  const validate = compiled(small);
  assert.equal(validate(order({ tree: { label: 'a', child: { label: 'b', child: { labl: 'c', anything: 1 } } } })), true);
  assert.equal(validate(order({ unknown: 1 })), false, 'the top level is always constrained');
});

/** A one-element input of a simple type, for the value rules. */
function holder(model: SimpleModel): ComplexModel {
  return {
    kind: 'complex',
    type: 'T',
    open: false,
    particles: [{ name: 'v', ns: '', required: true, repeated: false, nillable: false, model }],
  };
}

test('integer types: exactly their range, as numbers and as texts, at the edges of each', () => {
  const layout = (model: ComplexModel) => ({ wrapper: undefined, model, name: 'T', headers: holder(simpleModelOf('string')) });
  const edges: Record<string, bigint[]> = {
    unsignedLong: [0n, 2n ** 64n - 1n],
    long: [-(2n ** 63n), 2n ** 63n - 1n],
    byte: [-128n, 127n],
    positiveInteger: [1n],
    negativeInteger: [-1n],
  };
  for (const [builtin, bounds] of Object.entries(edges)) {
    const model = holder(simpleModelOf(builtin));
    const validate = compiled(new ParamsSchemas().params(model));
    for (const n of bounds.flatMap((b) => [b - 1n, b, b + 1n])) {
      for (const v of [n.toString(), `-0${n < 0n ? -n : n}`, Number(n)]) {
        assert.equal(validate({ v }), executeTakes(layout(model), { v }), `${builtin} ${JSON.stringify(v)}`);
      }
    }
  }
});

test('the output schema takes the data execute reads: lists, typed values, text kept, nil, attributes, $type, unknowns', () => {
  const output = placeOrder.layout.output;
  const validate = compiled(placeOrder.entry.output_schema, true);
  const replies = [
    '<PlaceOrderResponse xmlns="urn:shop"><orderId>9007199254740993</orderId><lines><sku>AB</sku><quantity>2</quantity></lines><gone xmlns:i="http://www.w3.org/2001/XMLSchema-instance" i:nil="true"/></PlaceOrderResponse>',
    '<PlaceOrderResponse xmlns="urn:shop"><orderId>5</orderId><price currency="EUR">12.50</price><ratio>INF</ratio><ok>1</ok><tags>a</tags><tags>b</tags><flags>true 0</flags><gone>3</gone><surprise><x>1</x></surprise></PlaceOrderResponse>',
    '<PlaceOrderResponse xmlns="urn:shop" xmlns:i="http://www.w3.org/2001/XMLSchema-instance"><orderId>n/a</orderId><shape i:type="Circle"><name>c</name><radius>1.5</radius></shape><price>7</price><gone/><extra><known>k</known><free a="1">x</free></extra></PlaceOrderResponse>',
    '<PlaceOrderResponse xmlns="urn:shop"><orderId>1</orderId><lines/><shape><name>s</name></shape><gone>1</gone></PlaceOrderResponse>',
  ];
  for (const reply of replies) {
    const data = dataOf(output, reply);
    assert.equal(validate(data), true, `${JSON.stringify(data)}: ${JSON.stringify(validate.errors)}`);
  }
  const typed = dataOf(output, replies[1]) as Record<string, unknown>;
  assert.deepEqual([typed.orderId, typed.ok, typed.tags, typed.flags], [5, true, ['a', 'b'], [true, false]]);
  // What the reader never makes: a single value where a list is, text where a number is typed, an undeclared $type.
  for (const wrong of [{ tags: 'a' }, { ok: 5 }, { lines: [{ quantity: 1.5 }] }, { shape: { $type: 'Hexagon', name: 'h' } }]) {
    assert.equal(validate({ orderId: 1, ...wrong }), false, JSON.stringify(wrong));
  }
});

test('a one-way operation’s data is an object; rpc outputs are their parts', () => {
  assert.deepEqual(new ResultSchemas().data(undefined), { type: 'object' });
  const tag = named('TagService.TagPort.Tag');
  const data = dataOf(
    tag.layout.output,
    '<t:TagResponse xmlns:t="urn:shop"><names><item>a</item><item>b</item></names></t:TagResponse>',
  );
  assert.deepEqual(data, { names: ['a', 'b'] });
  assert.equal(compiled(tag.entry.output_schema)(data), true);
});

test('an element named __proto__ is a property like any other', () => {
  const model = holder(simpleModelOf('int'));
  model.particles = [{ ...model.particles[0], name: '__proto__' }];
  const schema = new ParamsSchemas().params(model);
  assert.ok(Object.hasOwn(schema.properties as object, '__proto__'));
  assert.match(JSON.stringify(schema), /^\{"type":"object","properties":\{"__proto__":\{"anyOf":\[\{"type":"integer"/);
  assert.deepEqual(schema.required, ['__proto__']);
});
