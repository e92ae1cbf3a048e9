import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { typeLabels } from '../../src/connectors/soap/derived-types.ts';
import { ParamsSchemas } from '../../src/connectors/soap/params-schema.ts';
import { simpleFits } from '../../src/connectors/soap/scalar-schema.ts';
import { type ComplexModel, simpleModelOf } from '../../src/connectors/soap/schema-model.ts';
import type { MessageLayout } from '../../src/connectors/soap/signature.ts';
import type { Particle, SimpleModel, TypeModel } from '../../src/connectors/soap/type-model.ts';
import { catalogWithOperations, compiled, executeTakes, modelOf, shopWsdl } from '../support/soap-catalog-fixture.ts';

/**
 * The input schema says exactly what execute takes: for values generated from the types themselves (valid ones and
 * every kind of mistake, at every depth), Ajv's verdict against an entry's `input_schema` equals execute's (its params
 * check, param-checks.ts, and its envelope writer). The values stay where JSON Schema can say what the check does
 * (params-schema.ts and scalar-schema.ts list where it cannot: a number's text against a text facet, a decimal text
 * against bounds, a list's text of faceted items, texts past a pattern's checked length, names that are no XML
 * names); there, a second property holds one way: what execute takes, the schema takes.
 */

const runs = Number(process.env.IX_PROPERTY_RUNS ?? 400);
const shop = await modelOf(shopWsdl);
const entries = catalogWithOperations(shop);

type Json = unknown;

/** Scalars the checks care about: the edges of the ranges, lexical forms and near misses, the types' own enumerations. */
function candidates(model: SimpleModel): Json[] {
  const own = [model, model.list, ...(model.union ?? [])].flatMap((m) => m?.enumeration ?? []);
  const texts = ['', ' ', 'x', 'AB', 'ABC', 'abc', 'ABCD', 'open', 'closed', 'All', 'EUR', 'GBP', 'true', 'false', 'maybe'];
  const numbers = [
    0,
    1,
    -1,
    1.5,
    12.25,
    99,
    100,
    255,
    256,
    32767,
    32768,
    -32768,
    -32769,
    2147483647,
    2147483648,
    2 ** 53,
    2 ** 63,
    1e21,
  ];
  const numberTexts = [
    '1',
    '0',
    '+007',
    '-0',
    ' 42 ',
    '1e3',
    '.5',
    '5.',
    '.',
    '123.45',
    '1234.5',
    '0.125',
    '00012.300',
    'INF',
    'NaN',
  ];
  const bigTexts = ['9223372036854775807', '9223372036854775808', '-9223372036854775809', '18446744073709551615', '1'.repeat(30)];
  const others = ['2024-01-02T03:04:05', '2024-01-02T03:04:05Z', ' 2024-01-02T03:04:05.5+01:00 ', '2024-01-02', '2024-01-02Z'];
  const more = ['-12345-01-02', '2024-1-2', '03:04:05', 'P1DT2H', 'c2FtcGxl', 'c2Ft cGxl==', 'not base64!'];
  const lists = ['true 0 1', 'maybe true', '1 2 3', '1 2 3 4', '256', ' AB  ABC ', 'AB x'];
  const binary = ['AAAA', 'AAA=', 'AA==', 'AAAAAA==', 'AAAAAAA=', '=', 'A', ' AA AA ', '0A', 'ab12', 'abcdef', '0g'];
  const edges = ['999', '1000', '-999', '-1000', 999, 1000, -1000, '100000000000000000000', '99999999999999999999', 1e20];
  return [
    ...own,
    ...texts,
    ...numbers,
    ...numberTexts,
    ...bigTexts,
    ...others,
    ...more,
    ...lists,
    ...binary,
    ...edges,
    true,
    false,
  ];
}

/** Whether the schema cannot say everything the check does of this type's values (see the file's comment). */
function loose(model: SimpleModel): boolean {
  const facets = model.facets;
  const text = facets?.patterns !== undefined || facets?.length !== undefined || facets?.minLength !== undefined;
  const digits = facets?.totalDigits !== undefined || facets?.fractionDigits !== undefined;
  const bounds = [facets?.minInclusive, facets?.maxInclusive, facets?.minExclusive, facets?.maxExclusive].some(
    (b) => b !== undefined,
  );
  if (model.list !== undefined) return model.list.facets !== undefined || loose(model.list);
  if (model.union !== undefined) return model.union.some(loose) || text || digits || bounds || facets?.maxLength !== undefined;
  const fractional = ['decimal', 'float', 'double'].includes(model.builtin);
  return text || facets?.maxLength !== undefined || (model.builtin === 'decimal' && digits) || (fractional && bounds);
}

/** What a value of `model` may be (`exact`: only where the schema says exactly what the check does). */
function allowed(model: SimpleModel, exact: boolean): (value: Json) => boolean {
  if (!exact || !loose(model)) return () => true;
  // A bounded decimal's or float's texts, and a text-faceted type's numbers, are where the schema takes more.
  const facets = model.facets;
  const bounded =
    ['decimal', 'float', 'double'].includes(model.builtin) &&
    [facets?.minInclusive, facets?.maxInclusive, facets?.minExclusive, facets?.maxExclusive].some((b) => b !== undefined);
  return (value) => (bounded ? typeof value !== 'string' : typeof value !== 'number');
}

/** One of `good` mostly, else one of `bad` (each falling back to the other when empty). */
function mostly(good: fc.Arbitrary<Json>[], bad: fc.Arbitrary<Json>[]): fc.Arbitrary<Json> {
  const weighted = [
    ...good.map((arbitrary) => ({ weight: 25, arbitrary })),
    ...bad.map((arbitrary) => ({ weight: 1, arbitrary })),
  ];
  return fc.oneof(...weighted);
}

const fitting = (model: SimpleModel) => (value: Json) => simpleFits(model, value);

/** A simple element's value: a scalar, a list's items, `{$value, $attributes}`, null; mostly one that fits. */
function simpleValue(model: SimpleModel, exact: boolean): fc.Arbitrary<Json> {
  const pool = candidates(model).filter(allowed(model, exact));
  const good = pool.filter(fitting(model));
  const bad = pool.filter((v) => !fitting(model)(v));
  const scalar = (values: Json[]) => (values.length === 0 ? [] : [fc.constantFrom(...values)]);
  const items = model.list ? candidates(model.list).filter(allowed(model.list, exact)) : [];
  return mostly(
    [
      ...scalar(good),
      ...scalar(good).map((g) => g.map(($value) => ({ $value }))),
      ...(model.list ? [fc.array(fc.constantFrom(...items.filter(fitting(model.list))), { maxLength: 4 })] : []),
    ],
    [
      ...scalar(bad),
      ...(allowed(model, exact)('x') ? [fc.string({ maxLength: 6 })] : []),
      fc.array(fc.constantFrom(...(items.length > 0 ? items : pool)), { maxLength: 4 }),
      fc.record({
        $value: fc.oneof(fc.constantFrom(...pool), fc.constant(null)),
        $attributes: fc.constantFrom({ 'p:x': 1 }, null, {}),
      }),
      fc.constantFrom(null, {}, { other: 1 }, [[1]], { $value: { $value: 1 } }),
    ],
  );
}

/** A complex element's value: its elements (required ones mostly there), attributes, text, `$type`; mostly fitting. */
function complexValue(model: ComplexModel, depth: number, exact: boolean): fc.Arbitrary<Json> {
  if (model.arrayOf) return fc.oneof(fc.array(fc.string({ maxLength: 3 }), { maxLength: 3 }), fc.constant('x'));
  const variants = [
    objectValue(model, undefined, depth, exact),
    ...typeLabels(model).map((label) => {
      const derived = [...(model.subtypes?.values() ?? [])].find((_, i) => typeLabels(model)[i] === label) as ComplexModel;
      return objectValue(derived, label, depth, exact);
    }),
  ];
  const object = mostly(variants, [objectValue(model, 'Hexagon', depth, exact)]);
  if (!model.text) return object;
  // param-checks lets `$attributes: null` through where an attribute is required (the schema does not): left out.
  const required = model.attributes?.some((a) => a.required);
  const text = simpleValue(model.text, exact).filter(
    (v) => !(required && (v as { $attributes?: unknown })?.$attributes === null),
  );
  return mostly([object, text], []);
}

/** An object of `model`'s members, with `$type` when given. */
function objectValue(model: ComplexModel, type: string | undefined, depth: number, exact: boolean): fc.Arbitrary<Json> {
  const members: Array<[string, fc.Arbitrary<Json>, number]> = [];
  const seen = new Set<string>();
  for (const particle of model.particles) {
    if (seen.has(particle.name)) continue;
    seen.add(particle.name);
    members.push([particle.name, particleValue(particle, depth + 1, exact), particle.required ? 0.95 : 0.3]);
  }
  const attributes = attributesValue(model);
  if (attributes) members.push(['$attributes', attributes, model.attributes?.some((a) => a.required) ? 0.95 : 0.2]);
  if (model.text) members.push(['$value', fc.oneof(simpleValue(model.text, exact), fc.constant(null)), 0.5]);
  else members.push(['$value', fc.constantFrom('mixed', 5, null, { no: 1 }), 0.03]);
  members.push(['extra', fc.constantFrom('x', { deep: ['a', 'b'] }, 5), 0.03]);
  return fc.tuple(...members.map(([key, value, p]) => fc.tuple(fc.constant(key), value, chance(p)))).map((picked) => ({
    ...(type !== undefined && { $type: type }),
    ...Object.fromEntries(picked.filter(([, , there]) => there).map(([key, value]) => [key, value])),
  }));
}

/** `$attributes`: declared ones (required ones mostly), the caller's own (prefixed, xmlns), an unknown plain name. */
function attributesValue(model: ComplexModel): fc.Arbitrary<Json> | undefined {
  const members: Array<[string, fc.Arbitrary<Json>, number]> = [];
  for (const attribute of model.attributes ?? []) {
    const pool = candidates(attribute.model);
    const good = pool.filter(fitting(attribute.model));
    const value = mostly(good.length > 0 ? [fc.constantFrom(...good)] : [], [fc.constantFrom(...pool, null)]);
    members.push([attribute.name, value, attribute.required ? 0.95 : 0.3]);
  }
  members.push(['xsi:type', fc.constant('t:x'), 0.1], ['xmlns', fc.constant('urn:x'), 0.05], ['stray', fc.constant('1'), 0.03]);
  const object = fc
    .tuple(...members.map(([key, value, p]) => fc.tuple(fc.constant(key), value, chance(p))))
    .map((picked) => Object.fromEntries(picked.filter(([, , there]) => there).map(([key, value]) => [key, value])));
  // param-checks lets `$attributes: null` through where an attribute is required (the schema does not): left out.
  return model.attributes?.some((a) => a.required) ? object : mostly([object], [fc.constant(null)]);
}

/** True with probability `p` (unbiased: fast-check otherwise favours the ends of a range). */
function chance(p: number): fc.Arbitrary<boolean> {
  return fc.noBias(fc.integer({ min: 0, max: 999 })).map((n) => n < p * 1000);
}

function particleValue(particle: Particle, depth: number, exact: boolean): fc.Arbitrary<Json> {
  const one = typeValue(particle.model, depth, exact);
  const list = fc.array(one, { maxLength: 3 });
  const nullable = particle.nillable || !particle.required;
  return mostly(
    [one, ...(particle.repeated ? [list] : []), ...(nullable ? [fc.constant(null)] : [])],
    [...(particle.repeated ? [] : [list]), ...(nullable ? [] : [fc.constant(null)])],
  );
}

function typeValue(model: TypeModel, depth: number, exact: boolean): fc.Arbitrary<Json> {
  if (model.kind === 'simple') return simpleValue(model, exact);
  // Deep enough: a recursive type's last level is an empty object, or a text.
  if (depth > 3) return fc.constantFrom({}, 'x');
  return complexValue(model, depth, exact);
}

/** Ajv's verdict and execute's, for params as JSON carries them. */
function verdicts(validate: (value: Json) => boolean, layout: MessageLayout, params: Json): [boolean, boolean] {
  const json = JSON.parse(JSON.stringify(params));
  return [validate(json), executeTakes(layout, json)];
}

const shopEntries = entries.filter((e) => ['PlaceOrder', 'Find', 'TagService.TagPort.Tag'].includes(e.entry.name));

test('property: for values at every depth, the input schema takes exactly what execute takes', () => {
  for (const { entry, layout } of shopEntries) {
    const validate = compiled(entry.input_schema);
    const seen = { taken: 0, refused: 0 };
    fc.assert(
      fc.property(complexValue(layout.input.model, 0, true), (params) => {
        const [schema, execute] = verdicts(validate, layout.input, params);
        seen[execute ? 'taken' : 'refused']++;
        assert.equal(schema, execute, `${entry.name}: execute ${execute ? 'takes' : 'refuses'} ${JSON.stringify(params)}`);
      }),
      { numRuns: runs },
    );
    assert.ok(seen.taken > runs / 50 && seen.refused > runs / 50, `${entry.name}: ${JSON.stringify(seen)}`);
  }
});

/** Hand-made types whose every rule JSON Schema says exactly, each an optional element of one input. */
function exactModel(): ComplexModel {
  const restricted = (builtin: string, facets: SimpleModel['facets'], extra: Partial<SimpleModel> = {}): SimpleModel => ({
    ...simpleModelOf(builtin),
    type: `exact-${builtin}`,
    ...(facets && { facets }),
    ...extra,
  });
  const token = restricted('string', undefined, { enumeration: ['AB', 'ABC', '1.5', '2', 'true'] });
  const models: SimpleModel[] = [
    restricted('base64Binary', { minLength: 2, maxLength: 4 }),
    restricted('hexBinary', { length: 2 }),
    restricted('long', { totalDigits: 3 }),
    restricted('integer', { maxInclusive: 1e20, minExclusive: -1000 }),
    restricted('unsignedLong', undefined),
    restricted('float', { minExclusive: 0 }),
    restricted('date', undefined),
    restricted('time', undefined),
    restricted('duration', undefined),
    token,
    { kind: 'simple', type: 'tokens', builtin: 'anySimpleType', list: token, facets: { minLength: 1, maxLength: 2 } },
    {
      kind: 'simple',
      type: 'either',
      builtin: 'anySimpleType',
      union: [restricted('byte', undefined), restricted('date', undefined)],
    },
  ];
  const particle = (model: SimpleModel, i: number): Particle => ({
    name: `p${i}`,
    ns: '',
    required: false,
    repeated: i % 3 === 0,
    nillable: i % 2 === 0,
    model,
  });
  return { kind: 'complex', type: 'Exact', open: false, particles: models.map(particle) };
}

test('property: for every built-in and restriction JSON Schema can say, the schema takes exactly what execute takes', () => {
  const model = exactModel();
  const layout: MessageLayout = { wrapper: { ns: 'urn:exact', local: 'Exact' }, model, name: 'Exact', headers: model };
  const validate = compiled(new ParamsSchemas().params(model));
  const seen = { taken: 0, refused: 0 };
  fc.assert(
    fc.property(complexValue(model, 0, true), (params) => {
      const [schema, execute] = verdicts(validate, layout, params);
      seen[execute ? 'taken' : 'refused']++;
      assert.equal(schema, execute, `execute ${execute ? 'takes' : 'refuses'} ${JSON.stringify(params)}`);
    }),
    { numRuns: runs },
  );
  assert.ok(seen.taken > runs / 50 && seen.refused > runs / 50, JSON.stringify(seen));
});

/** Hand-made types with what JSON Schema cannot say exactly (see the file's comment). */
function looseModels(): ComplexModel {
  const restricted = (builtin: string, facets: SimpleModel['facets'], extra: Partial<SimpleModel> = {}): SimpleModel => ({
    ...simpleModelOf(builtin),
    type: `loose-${builtin}`,
    facets,
    ...extra,
  });
  const code = restricted('string', { patterns: [['[A-Z]{2,3}']], patternTexts: [['[A-Z]{2,3}']], maxLength: 3 });
  const models: SimpleModel[] = [
    code,
    restricted('decimal', { minInclusive: 0, maxExclusive: 100, fractionDigits: 1 }),
    restricted('int', { patterns: [['\\p{Nd}{2}']], patternTexts: [['\\d{2}']] }),
    { kind: 'simple', type: 'codes', builtin: 'anySimpleType', list: code, facets: { maxLength: 2 } },
    {
      kind: 'simple',
      type: 'either',
      builtin: 'anySimpleType',
      union: [code, simpleModelOf('boolean')],
      facets: { minLength: 2 },
    },
  ];
  const particle = (model: SimpleModel, i: number): Particle => ({
    name: `p${i}`,
    ns: '',
    required: false,
    repeated: i % 2 === 0,
    nillable: false,
    model,
  });
  return { kind: 'complex', type: 'Loose', open: false, particles: models.map(particle) };
}

test('property: where the schema cannot say everything, it still takes all that execute takes', () => {
  const model = looseModels();
  const layout: MessageLayout = { wrapper: { ns: 'urn:loose', local: 'Loose' }, model, name: 'Loose', headers: model };
  const validate = compiled(new ParamsSchemas().params(model));
  let taken = 0;
  fc.assert(
    fc.property(complexValue(model, 0, false), (params) => {
      const [schema, execute] = verdicts(validate, layout, params);
      if (execute) taken++;
      if (execute) assert.equal(schema, true, `execute takes ${JSON.stringify(params)}`);
    }),
    { numRuns: runs },
  );
  assert.ok(taken > runs / 20, `${taken} taken`);
  // And the shop's operations, with every kind of value.
  for (const { entry, layout: shopLayout } of shopEntries) {
    const takes = compiled(entry.input_schema);
    fc.assert(
      fc.property(complexValue(shopLayout.input.model, 0, false), (params) => {
        const [schema, execute] = verdicts(takes, shopLayout.input, params);
        if (execute) assert.equal(schema, true, `${entry.name}: execute takes ${JSON.stringify(params)}`);
      }),
      { numRuns: runs },
    );
  }
});
