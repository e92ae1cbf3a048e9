import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import fc from 'fast-check';
import {
  astFromValue,
  buildSchema,
  executeSync,
  type GraphQLArgument,
  type GraphQLInputType,
  type GraphQLOutputType,
  getVariableValues,
  isAbstractType,
  isEnumType,
  isInputObjectType,
  isListType,
  isNonNullType,
  isObjectType,
  isSpecifiedScalarType,
  type OperationDefinitionNode,
  parse,
  print,
  typeFromAST,
  type VariableDefinitionNode,
  validate,
} from 'graphql';
import type { CatalogOperation, JsonSchema } from '../../src/connectors/catalog.ts';
import { catalogDocumentIssues, graphqlCatalog, maxCatalogDocuments } from '../../src/connectors/graphql/catalog.ts';
import { maxEnumValues, maxSchemaCost } from '../../src/connectors/graphql/catalog-input.ts';
import { maxOutputDepth } from '../../src/connectors/graphql/catalog-output.ts';
import { maxRootFieldEntries } from '../../src/connectors/graphql/catalog-root-fields.ts';
import { countNonNullRootFields, pageOfAnswer } from '../../src/connectors/graphql/records.ts';
import type { ValidationIssue } from '../../src/core/errors.ts';
import { apiError } from '../support/assertions.ts';

/**
 * The GraphQL catalogue (docs/catalog.md) against graphql-js itself: the input schemas admit exactly the variables
 * graphql-js's input coercion admits, and the output schemas admit every answer graphql-js's execution gives, once
 * read into records as execute reads them.
 */

const longDescription = 'Lists the widgets. '.repeat(270);
const sdl = `
"An instant, e.g. 2024-01-15T09:30:00Z."
scalar DateTime
scalar JSON

enum Color { RED GREEN BLUE OLD @deprecated(reason: "Use RED.") }

input Filter {
  and: [Filter!]
  not: Filter
  name: String
  "The colour, RED unless given."
  color: Color = RED
  size: Int!
  ratio: Float
  at: DateTime
  meta: JSON!
  ids: [ID!]
  grid: [[Int]]
  legacy: Boolean @deprecated
}

input Pick @oneOf { id: ID, name: String, color: Color }

input WidgetInput { name: String!, color: Color! = GREEN, size: Int, tags: [String!]!, owner: Pick }

interface Node { id: ID! }
interface Named { name: String }

type Widget implements Node & Named {
  id: ID!
  name: String
  color: Color!
  size: Int
  ratio: Float
  on: Boolean
  tags: [String]!
  meta: JSON
  parts(first: Int, after: String): PartConnection!
  owner: Person
  old: String @deprecated
  secret(code: String!): String
}
type Person implements Node & Named { id: ID!, name: String, widgets: [Widget!], born: DateTime }
type Part implements Node { id: ID!, weight: Float! }
union Thing = Widget | Person | Part
type PartEdge { cursor: String!, node: Part }
type PageInfo { hasNextPage: Boolean!, endCursor: String }
type PartConnection { edges: [PartEdge], pageInfo: PageInfo!, totalCount: Int }
type WidgetConnection { nodes: [Widget!]!, totalCount: Int! }

type Query {
  "${longDescription}"
  widgets(filter: Filter, first: Int = 10, after: String): WidgetConnection!
  "Bell\\u0007 and \\u202Eright-to-left\\u0000 text"
  widget(id: ID!): Widget
  things(pick: Pick, colors: [Color!]): [Thing]
  node(id: ID!): Node
  parts(first: Int, after: String): PartConnection
  count(filter: Filter): Int!
  now: DateTime
  search(text: String!, limit: Int = 5): [Named!]!
  grid(rows: [[Int!]!]): [[Int]]
  widgetSelection(selection: String): Widget
}

type Mutation {
  createWidget(input: WidgetInput!): Widget!
  deleteWidget(id: ID!): Boolean
  widgets(ids: [ID!]!): [Widget]
  pick(by: Pick!): Thing
}
`;
const schema = buildSchema(sdl);

const documents = [
  {
    name: 'things',
    document: `query Things($pick: Pick, $colors: [Color!], $withColor: Boolean!) {
      things(pick: $pick, colors: $colors) {
        __typename
        ... on Widget { id name color @include(if: $withColor) parts { edges { node { id weight } } totalCount } }
        ... on Person { id aka: name widgets { id } }
        ...PartBits
      }
    }
    fragment PartBits on Part { weight }`,
  },
  { name: 'multi', document: 'query Multi($skip: Boolean!, $id: ID!) { widget(id: $id) { id } count @skip(if: $skip) now }' },
  {
    name: 'only-conditional',
    document: 'query Only($a: Boolean!, $b: Boolean = false) { now @include(if: $a) count @include(if: $b) }',
  },
  {
    name: 'nodes',
    document:
      'query Nodes($filter: Filter, $first: Int) { widgets(filter: $filter, first: $first) { totalCount nodes { id name size ratio on tags meta owner { id born } } } }',
  },
  { name: 'edges', document: '{ parts(first: 2) { edges { cursor node { id weight } } pageInfo { hasNextPage } totalCount } }' },
  { name: 'edges-without-node', document: '{ parts { edges { cursor } } }' },
  { name: 'edges-alias', document: '{ parts { edges: pageInfo { hasNextPage } nodes: totalCount } }' },
  { name: 'interface', document: 'query Iface($id: ID!) { node(id: $id) { id ... on Widget { name } ... on Named { name } } }' },
  {
    name: 'search',
    document: 'query Search($text: String!, $limit: Int) { search(text: $text, limit: $limit) { name ... on Person { born } } }',
  },
  { name: 'aliases', document: '{ __typename a: widget(id: "1") { __typename id } b: widget(id: "2") { id name } }' },
  { name: 'grid', document: 'query Grid($rows: [[Int!]!]) { grid(rows: $rows) }' },
  { name: 'literal-skip', document: '{ now @skip(if: true) count @include(if: true) }' },
  {
    name: 'make',
    document:
      'mutation Make($input: WidgetInput!, $id: ID!, $by: Pick!) { createWidget(input: $input) { id color tags parts { totalCount } } deleteWidget(id: $id) pick(by: $by) { ... on Node { id } } }',
    description: 'Makes a widget.',
  },
];

const catalog = graphqlCatalog(schema, { documents, root_fields: true });
const entry = (name: string) => {
  const found = catalog.find((candidate) => candidate.name === name);
  assert.ok(found, `no entry ${name}`);
  return found;
};

const ajv = new Ajv2020({ strict: true, allErrors: true });
const validators = new Map<JsonSchema, ValidateFunction>();
function validator(schema: JsonSchema): ValidateFunction {
  let compiled = validators.get(schema);
  if (compiled === undefined) {
    compiled = ajv.compile(schema);
    validators.set(schema, compiled);
  }
  return compiled;
}
const json = <T>(value: T): T => JSON.parse(JSON.stringify(value));

describe('graphqlCatalog: the entries', () => {
  test('one entry per saved document, then per root field; a document or a Query field takes its name first', () => {
    assert.deepEqual(
      catalog.map((operation) => `${operation.kind} ${operation.name}`),
      [
        ...documents.map((saved) => `${saved.name === 'make' ? 'write' : 'read'} ${saved.name}`),
        // things, search and grid are documents' names.
        ...['widgets', 'widget', 'node', 'parts', 'count', 'now', 'widgetSelection'].map((name) => `read ${name}`),
        ...['createWidget', 'deleteWidget', 'pick'].map((name) => `write ${name}`),
      ],
    );
    const named = graphqlCatalog(schema, { documents: [{ name: 'widget', document: '{ now }' }], root_fields: true });
    assert.deepEqual(
      named.filter((operation) => operation.name === 'widget').map((operation) => operation.request({})),
      [{ query: '{ now }', variables: {} }],
    );
    assert.deepEqual(graphqlCatalog(schema, { documents }).length, documents.length);
    assert.deepEqual(graphqlCatalog(undefined, { documents, root_fields: true }).length, documents.length);
  });

  test('every schema compiles under strict Ajv 2020, with and without the upstream schema', () => {
    for (const operation of [...catalog, ...graphqlCatalog(undefined, { documents })]) {
      for (const schemaOf of [operation.input_schema, operation.output_schema]) {
        assert.doesNotThrow(() => validator(schemaOf), operation.name);
        assert.equal(JSON.stringify(schemaOf).includes('"$schema"'), false);
      }
    }
  });

  test('descriptions: the given one, the upstream field’s cleaned and bounded, or a generated line', () => {
    assert.equal(entry('make').description, 'Makes a widget.');
    assert.equal(entry('things').description, 'Query Things: reads things.');
    assert.equal(entry('edges').description, 'Query: reads parts.');
    assert.equal(entry('widget').description, 'Bell and right-to-left text');
    const long = entry('widgets').description;
    assert.equal(long.length, 1000);
    assert.ok(long.endsWith('…'));
    assert.equal(entry('now').description, 'The Query field now, returning DateTime.');
    for (const operation of catalog) {
      // biome-ignore lint/suspicious/noControlCharactersInRegex: no control character may remain
      assert.doesNotMatch(operation.description, /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e]/);
    }
  });

  test('document requests: the document as saved, its operation name, the input as variables', () => {
    assert.deepEqual(entry('multi').request({ skip: true, id: '1' }), {
      query: documents[1].document,
      operation_name: 'Multi',
      variables: { skip: true, id: '1' },
    });
    assert.deepEqual(entry('edges').request({}), { query: documents[4].document, variables: {} });
    assert.equal(entry('make').request({}).mutation, documents[12].document);
  });

  test('input schemas: variables typed, required when non-null without default, input objects in $defs', () => {
    const things = entry('things').input_schema;
    assert.deepEqual(things.required, ['withColor']);
    assert.deepEqual((things.$defs as Record<string, JsonSchema>).Pick, {
      type: 'object',
      properties: {
        id: { anyOf: [{ type: 'string' }, { type: 'integer' }] },
        name: { type: 'string' },
        color: { type: 'string', enum: ['RED', 'GREEN', 'BLUE', 'OLD'] },
      },
      minProperties: 1,
      maxProperties: 1,
      additionalProperties: false,
    });
    const filter = (entry('nodes').input_schema.$defs as Record<string, JsonSchema>).Filter;
    const properties = filter.properties as Record<string, JsonSchema>;
    assert.deepEqual(filter.required, ['size', 'meta']);
    assert.deepEqual(properties.not, { anyOf: [{ $ref: '#/$defs/Filter' }, { type: 'null' }] });
    assert.deepEqual(properties.size, { type: 'integer', minimum: -2147483648, maximum: 2147483647 });
    assert.deepEqual(properties.meta, { not: { type: 'null' } });
    assert.deepEqual(properties.at, {});
    assert.equal(properties.color.description, 'The colour, RED unless given.');
    assert.equal(properties.legacy.deprecated, true);
    const widgets = entry('widgets').input_schema.properties as Record<string, JsonSchema>;
    assert.deepEqual(Object.keys(widgets), ['filter', 'first', 'after', 'selection']);
    assert.match(String(widgets.selection.description), /^The fields to answer: a GraphQL selection set on WidgetConnection/);
    assert.equal('selection' in (entry('count').input_schema.properties as object), false);
    assert.deepEqual((entry('widgetSelection').input_schema.properties as Record<string, JsonSchema>).selection, {
      type: ['string', 'null'],
    });
  });

  test('without the schema: built-in scalars, lists and non-null from the declarations; other types unconstrained', () => {
    const [things, , , nodes] = graphqlCatalog(undefined, { documents });
    assert.deepEqual(things.input_schema, {
      type: 'object',
      properties: {
        pick: {},
        colors: { anyOf: [{ type: 'array', items: {} }, {}, { type: 'null' }] },
        withColor: { type: 'boolean' },
      },
      required: ['withColor'],
      additionalProperties: false,
    });
    assert.deepEqual((nodes.input_schema.properties as Record<string, JsonSchema>).first, {
      type: ['integer', 'null'],
      minimum: -2147483648,
      maximum: 2147483647,
    });
    assert.deepEqual(things.output_schema, {
      type: 'object',
      properties: {
        message_count: { type: 'integer', minimum: 0 },
        data: { type: 'array' },
        total_size: { type: 'integer', minimum: 0 },
      },
      required: ['message_count', 'data', 'total_size'],
      additionalProperties: false,
    });
    const make = graphqlCatalog(undefined, { documents }).at(-1)!;
    assert.deepEqual(Object.keys(make.output_schema.properties as object), ['message_count', 'data', 'response']);
  });

  test('records at the schema level: edges → node, nodes → items, several root fields → the data object', () => {
    const items = (name: string) => (entry(name).output_schema.properties as Record<string, JsonSchema>).data.items as JsonSchema;
    const part = {
      type: ['object', 'null'],
      properties: { id: { type: 'string' }, weight: { type: 'number' } },
      required: ['id', 'weight'],
      additionalProperties: false,
    };
    // A null edge is a null record; a null `edges` makes the connection itself the one record.
    const [none, node, connection] = items('edges').anyOf as JsonSchema[];
    assert.deepEqual([none, node], [{ type: 'null' }, part]);
    assert.deepEqual(Object.keys(connection.properties as object), ['edges', 'pageInfo', 'totalCount']);
    const [edge, whole] = items('edges-without-node').anyOf as JsonSchema[];
    assert.deepEqual(edge, { type: 'null' });
    assert.deepEqual(Object.keys(whole.properties as object), ['edges']);
    assert.deepEqual(Object.keys((items('edges-alias') as { properties: object }).properties), ['edges', 'nodes']);
    const nodes = items('nodes');
    assert.equal(nodes.type, 'object');
    assert.deepEqual(Object.keys(nodes.properties as object), ['id', 'name', 'size', 'ratio', 'on', 'tags', 'meta', 'owner']);
    // Three root fields, two always there: the data object is the one record.
    const multi = items('multi');
    assert.deepEqual(multi.required, ['widget', 'now']);
    assert.deepEqual(Object.keys(multi.properties as object), ['widget', 'count', 'now']);
    assert.equal(multi.minProperties, undefined);
    // Only conditional root fields: either one alone, or both.
    const only = items('only-conditional').anyOf as JsonSchema[];
    assert.deepEqual(only, [{ ...only[0], minProperties: 2 }, {}, { type: 'integer' }]);
    assert.deepEqual(items('literal-skip'), { type: 'integer' });
    assert.deepEqual(items('grid'), { type: ['array', 'null'], items: { type: ['integer', 'null'] } });
    const make = entry('make').output_schema.properties as Record<string, JsonSchema>;
    assert.deepEqual(make.message_count, { type: 'integer', minimum: 0, maximum: 3 });
    assert.deepEqual(make.response, {
      type: 'object',
      properties: { data: make.data },
      required: ['data'],
      additionalProperties: false,
    });
  });

  test('fragments on abstract types: one variant per possible type; __typename exact', () => {
    const things = (entry('things').output_schema.properties as Record<string, JsonSchema>).data.items as JsonSchema;
    const variants = things.anyOf as JsonSchema[];
    assert.deepEqual(
      variants.map((variant) => [
        (variant.properties as Record<string, JsonSchema> | undefined)?.__typename?.const,
        variant.required,
      ]),
      [
        ['Widget', ['__typename', 'id', 'name', 'parts']],
        ['Person', ['__typename', 'id', 'aka', 'widgets']],
        ['Part', ['__typename', 'weight']],
        [undefined, undefined],
      ],
    );
    assert.deepEqual(variants[3], { type: 'null' });
    assert.ok('color' in (variants[0].properties as object), '@include makes a field optional, not absent');
    const iface = ((entry('interface').output_schema.properties as Record<string, JsonSchema>).data.items as JsonSchema)
      .anyOf as JsonSchema[];
    assert.deepEqual(
      iface.map((variant) => variant.required),
      // Widget's and Person's variants are the same (no __typename asked): once. A null node is no record.
      [['id', 'name'], ['id']],
    );
  });
});

/** Values that break most types: out of range, of the wrong kind, empty containers. */
const junk = fc.oneof(
  fc.constantFrom(null, 2 ** 31, -(2 ** 31) - 1, 2 ** 53, 1.5, -0, '1', 'RED', 'x', true, 0, [], {}, [null], [[1]], { zzz: 1 }),
  fc.jsonValue({ maxDepth: 2 }),
);

/**
 * Input values of `type`: valid ones (`noisy` false: what coercion accepts, by construction), or valid-looking ones
 * with junk anywhere, keys left out and unknown keys added (`noisy` true).
 */
function inputValue(type: GraphQLInputType, noisy: boolean, depth = 0): fc.Arbitrary<unknown> {
  const value = isNonNullType(type)
    ? nonNullInput(type.ofType, noisy, depth)
    : fc.oneof({ weight: 1, arbitrary: fc.constant(null) }, { weight: 4, arbitrary: nonNullInput(type, noisy, depth) });
  return noisy ? fc.oneof({ weight: 6, arbitrary: value }, { weight: 1, arbitrary: junk }) : value;
}

function nonNullInput(type: GraphQLInputType, noisy: boolean, depth: number): fc.Arbitrary<unknown> {
  if (isNonNullType(type)) return nonNullInput(type.ofType, noisy, depth);
  if (isListType(type)) {
    const items = fc.array(inputValue(type.ofType, noisy, depth + 1), { maxLength: depth > 2 ? 0 : 3 });
    // A single item where a list is expected is a list of one.
    return fc.oneof({ weight: 3, arbitrary: items }, { weight: 1, arbitrary: nonNullInput(type.ofType, noisy, depth + 1) });
  }
  if (isEnumType(type)) return fc.constantFrom(...type.getValues().map((value) => value.name));
  if (isInputObjectType(type)) {
    const fields = Object.values(type.getFields()).filter(
      (field) => depth <= 3 || (isNonNullType(field.type) && field.defaultValue === undefined),
    );
    if (type.isOneOf && !noisy) {
      return fc.oneof(
        ...fields.map((field) => nonNullInput(field.type, noisy, depth + 1).map((value) => ({ [field.name]: value }))),
      );
    }
    const model = Object.fromEntries(fields.map((field) => [field.name, inputValue(field.type, noisy, depth + 1)]));
    const requiredKeys = noisy
      ? []
      : fields.filter((field) => isNonNullType(field.type) && field.defaultValue === undefined).map((field) => field.name);
    const record = fc.record(model, { requiredKeys });
    return noisy ? fc.tuple(record, fc.boolean()).map(([object, extra]) => (extra ? { ...object, zzz: 1 } : object)) : record;
  }
  if (!isSpecifiedScalarType(type)) return fc.jsonValue({ maxDepth: 2 }).filter((value) => value !== null);
  const scalars: Record<string, fc.Arbitrary<unknown>> = {
    Int: fc.oneof(fc.integer(), fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 })),
    Float: fc.double({ noNaN: true, noDefaultInfinity: true }),
    String: fc.string(),
    ID: fc.oneof(fc.string(), fc.integer(), fc.constant(1e21)),
    Boolean: fc.boolean(),
  };
  return scalars[type.name];
}

/** A root field's arguments as the variable definitions that stand for them, their defaults included. */
function argumentDefinitions(args: readonly GraphQLArgument[]): readonly VariableDefinitionNode[] | undefined {
  if (args.length === 0) return [];
  const declared = args.map((argument) => {
    const value = argument.defaultValue === undefined ? undefined : astFromValue(argument.defaultValue, argument.type);
    return `$${argument.name}: ${String(argument.type)}${value ? ` = ${print(value)}` : ''}`;
  });
  return (parse(`query (${declared.join(', ')}) { __typename }`).definitions[0] as OperationDefinitionNode).variableDefinitions;
}

interface Slot {
  name: string;
  type: GraphQLInputType;
  required: boolean;
}

/** What an entry takes: its document's variables, or its root field's arguments (`selection` apart). */
function entryInputs(operation: CatalogOperation): { slots: Slot[]; definitions: readonly VariableDefinitionNode[] } {
  const saved = documents.find((candidate) => candidate.name === operation.name);
  const root = (operation.kind === 'read' ? schema.getQueryType() : schema.getMutationType())!;
  const definitions =
    (saved
      ? (parse(saved.document).definitions[0] as OperationDefinitionNode).variableDefinitions
      : argumentDefinitions(root.getFields()[operation.name].args)) ?? [];
  const slots = definitions.map((definition) => ({
    name: definition.variable.name.value,
    type: typeFromAST(schema, definition.type) as GraphQLInputType,
    required: isNonNullType(typeFromAST(schema, definition.type)) && definition.defaultValue === undefined,
  }));
  return { slots, definitions };
}

/** Variables (or arguments) for `slots`: valid ones, or noisy ones with any of them left out. */
function inputObject(slots: Slot[], noisy: boolean): fc.Arbitrary<Record<string, unknown>> {
  const model = Object.fromEntries(slots.map((slot) => [slot.name, inputValue(slot.type, noisy)]));
  return fc.record(model, { requiredKeys: noisy ? [] : slots.filter((slot) => slot.required).map((slot) => slot.name) });
}

describe('input schemas admit exactly what graphql-js input coercion admits', () => {
  for (const operation of catalog) {
    const { slots, definitions } = entryInputs(operation);
    if (slots.length === 0) continue;
    test(`${operation.name}: ${slots.map((slot) => `$${slot.name}: ${String(slot.type)}`).join(', ')}`, () => {
      const admits = validator(operation.input_schema);
      const seen = { accepted: 0, refused: 0 };
      fc.assert(
        fc.property(fc.oneof(inputObject(slots, false), inputObject(slots, true)), (generated) => {
          const input = json(generated);
          const coerced = getVariableValues(schema, definitions, input);
          const accepted = coerced.errors === undefined;
          seen[accepted ? 'accepted' : 'refused']++;
          const admitted = admits(input);
          const why = accepted ? ajv.errorsText(admits.errors) : coerced.errors?.[0].message;
          assert.equal(admitted, accepted, `${JSON.stringify(input)}: ${why}`);
        }),
        { numRuns: 250 },
      );
      // Both sides exercised (a nullable scalar's noise is refused seldom: 7 of 250 was seen).
      assert.ok(seen.accepted >= 10 && seen.refused >= 3, JSON.stringify(seen));
    });
  }
});

/**
 * Values a resolver-less schema's default resolvers read (a root value of `type`): mostly what each type serializes,
 * sometimes what it cannot (so that graphql-js answers errors and propagates nulls), keys left out, nesting cut off.
 */
const outputValues = new Map<string, fc.Arbitrary<unknown>>();
function outputValue(type: GraphQLOutputType, depth: number): fc.Arbitrary<unknown> {
  const key = `${String(type)}@${depth}`;
  let arbitrary = outputValues.get(key);
  if (arbitrary === undefined) {
    arbitrary = isNonNullType(type)
      ? fc.oneof({ weight: 12, arbitrary: nonNullOutput(type.ofType, depth) }, { weight: 1, arbitrary: fc.constant(null) })
      : fc.oneof({ weight: 1, arbitrary: fc.constant(null) }, { weight: 5, arbitrary: nonNullOutput(type, depth) });
    outputValues.set(key, arbitrary);
  }
  return arbitrary;
}

function nonNullOutput(type: GraphQLOutputType, depth: number): fc.Arbitrary<unknown> {
  if (isNonNullType(type)) return nonNullOutput(type.ofType, depth);
  if (isListType(type)) {
    if (depth > 4) return fc.constant([]);
    const items = fc.array(outputValue(type.ofType, depth + 1), { maxLength: 3 });
    return fc.oneof({ weight: 10, arbitrary: items }, { weight: 1, arbitrary: fc.constant('not a list') });
  }
  if (isEnumType(type)) {
    return fc.oneof(
      { weight: 10, arbitrary: fc.constantFrom(...type.getValues().map((v) => v.name)) },
      { weight: 1, arbitrary: fc.constant('NOPE') },
    );
  }
  if (isAbstractType(type)) return fc.oneof(...schema.getPossibleTypes(type).map((object) => nonNullOutput(object, depth)));
  if (isObjectType(type)) {
    if (depth > 4) return fc.constant(null);
    const fields = Object.values(type.getFields());
    const model = Object.fromEntries(fields.map((field) => [field.name, outputValue(field.type, depth + 1)]));
    return fc.record(model, { requiredKeys: [] }).map((object) => ({ ...object, __typename: type.name }));
  }
  if (!isSpecifiedScalarType(type)) return fc.jsonValue({ maxDepth: 2 });
  const odd = fc.constantFrom(2 ** 40, 1.5, '7', 'x', {});
  const scalars: Record<string, fc.Arbitrary<unknown>> = {
    Int: fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 }),
    Float: fc.oneof(fc.double({ noNaN: true, noDefaultInfinity: true }), fc.constant('1.5')),
    String: fc.oneof(fc.string(), fc.integer(), fc.boolean()),
    ID: fc.oneof(fc.string(), fc.integer()),
    Boolean: fc.oneof(fc.boolean(), fc.integer()),
  };
  return fc.oneof({ weight: 10, arbitrary: scalars[type.name] }, { weight: 1, arbitrary: odd });
}

/** The `data` execute answers for an entry's call, from the upstream's data as execute reads it. */
function answerOf(operation: CatalogOperation, data: Record<string, unknown>): unknown {
  if (operation.kind === 'write') return { message_count: countNonNullRootFields(data), data, response: { data } };
  const page = pageOfAnswer({ data });
  const records = page.records as unknown[];
  return { message_count: records.length, data: records, total_size: page.totalSize };
}

/** Selections a caller may give some root fields, besides the default one. */
const selections: Record<string, string[]> = {
  widgets: ['{ total: totalCount nodes { id } }', '{ nodes: totalCount }', '{ __typename }'],
  parts: ['{ edges { cursor } }', '{ edges { node: cursor } totalCount }', '{ nodes: edges { node { id } } }'],
  widget: ['{ id node: name owner { widgets { id } } }'],
  things: ['{ __typename ... on Person { edges: widgets { id } } }'],
  createWidget: ['{ id name: color }'],
  pick: ['{ ... on Part { weight } }'],
};

describe('output schemas admit what graphql-js answers, read into records as execute reads them', () => {
  for (const operation of catalog) {
    test(`${operation.kind} ${operation.name}`, () => {
      const { slots } = entryInputs(operation);
      const admits = validator(operation.output_schema);
      const root = operation.kind === 'read' ? schema.getQueryType()! : schema.getMutationType()!;
      const selection = fc.constantFrom(undefined, ...(selections[operation.name] ?? []));
      const answered = { data: 0, records: 0 };
      fc.assert(
        fc.property(nonNullOutput(root, 0), inputObject(slots, false), selection, (rootValue, input, chosen) => {
          const fields = operation.request(json(chosen === undefined ? input : { ...input, selection: chosen }));
          const document = parse(String(fields.query ?? fields.mutation));
          assert.deepEqual(validate(schema, document), []);
          const variableValues = fields.variables as Record<string, unknown>;
          const result = executeSync({ schema, document, rootValue, variableValues });
          // No data: execute answers graphql_errors, not data.
          if (result.data == null) return;
          const answer = json(answerOf(operation, result.data as Record<string, unknown>));
          answered.data++;
          answered.records += operation.kind === 'read' ? (answer as { data: unknown[] }).data.length : 0;
          assert.ok(admits(answer), `${JSON.stringify(answer)}: ${ajv.errorsText(admits.errors)}`);
        }),
        { numRuns: 100 },
      );
      assert.ok(answered.data > 10, JSON.stringify(answered));
    });
  }
});

/** The issues of a `validation_failed` that `fn` throws. */
function issuesOf(fn: () => unknown): ValidationIssue[] {
  return apiError(fn, 'validation_failed').details?.issues as ValidationIssue[];
}

describe('root-field requests', () => {
  test('a document declaring a variable per argument given, typed as the schema types it, and the default selection', () => {
    const widgets = entry('widgets');
    const request = widgets.request({ filter: { size: 1, meta: {} }, after: null });
    assert.deepEqual(request.variables, { filter: { size: 1, meta: {} }, after: null });
    assert.equal(
      request.query,
      'query ($filter: Filter, $after: String) { widgets(filter: $filter, after: $after) { totalCount nodes { id name color size ratio on tags meta parts { totalCount edges { node { id weight } } } owner { id name born } } } }',
    );
    assert.deepEqual(entry('now').request({}), { query: 'query { now }', variables: {} });
    assert.deepEqual(entry('deleteWidget').request({ id: 7 }), {
      mutation: 'mutation ($id: ID!) { deleteWidget(id: $id) }',
      variables: { id: 7 },
    });
    assert.deepEqual(entry('widgetSelection').request({ selection: '{ id }' }).variables, { selection: '{ id }' });
    assert.deepEqual(entry('widget').request({ id: '1', selection: ' { id } ' }), {
      query: 'query ($id: ID!) { widget(id: $id) { id }\n}',
      variables: { id: '1' },
    });
  });

  test('default selections: scalar and enum fields two levels deep, through connections, unions by member', () => {
    const query = (name: string) => String(entry(name).request({}).query ?? entry(name).request({}).mutation);
    assert.equal(query('parts'), 'query { parts { totalCount edges { node { id weight } } } }');
    assert.equal(query('node'), 'query { node { __typename id } }');
    assert.equal(
      query('widget'),
      'query { widget { id name color size ratio on tags meta parts { totalCount edges { node { id weight } } } owner { id name born } } }',
    );
    assert.equal(
      query('pick'),
      'mutation { pick { __typename ... on Widget { id name color size ratio on tags meta parts { totalCount edges { node { id weight } } } owner { id name born } } ... on Person { id name born widgets { id name color size ratio on tags meta } } ... on Part { id weight } } }',
    );
    for (const operation of catalog) {
      const { slots } = entryInputs(operation);
      const input = Object.fromEntries(slots.filter((slot) => slot.required).map((slot) => [slot.name, null]));
      const fields = operation.request(input);
      assert.deepEqual(validate(schema, parse(String(fields.query ?? fields.mutation))), [], operation.name);
    }
  });

  test('an input that is no argument is refused, named', () => {
    assert.deepEqual(
      issuesOf(() => entry('widget').request({ id: '1', ids: [] })),
      [{ path: 'ids', message: 'is not an argument of widget.' }],
    );
    assert.deepEqual(
      issuesOf(() => entry('count').request({ selection: '{ id }' })),
      [{ path: 'selection', message: 'is not an argument of count.' }],
    );
  });

  test('a selection that is more than one selection set is refused: nothing can be injected', () => {
    const attempts = [
      '{ id } } mutation M { deleteWidget(id: "1") }',
      '{ id } } query Other { now',
      '{ id } } fragment F on Query { now',
      '{ id }} mutation { deleteWidget(id: "1") { x }',
      '{ id } other: widget(id: "2") { id }',
      '{ id } now',
      '{ id } , now }',
      '{ id } } { now }',
      '{ id } }\nmutation M { deleteWidget(id: "1") }\nquery Q { widget(id: "1") {',
      '{ ...F } } fragment F on Widget { id } query Q { widget(id: "1") { id }',
      '{ id } #',
      '{ id # }',
      '{ id',
      'id name',
      '',
      '   ',
      '{ id } }',
      '{ id }\n}\nquery X { now }\n#',
      '{ id } @skip(if: true)',
      `{ ${'a { '.repeat(5000)}id${' }'.repeat(5000)} }`,
      `{ ${'id '.repeat(30_000)}}`,
    ];
    for (const selection of attempts) {
      const issues = issuesOf(() => entry('widget').request({ id: '1', selection }));
      assert.deepEqual(
        issues.map((issue) => issue.path),
        ['selection'],
        selection,
      );
    }
    assert.deepEqual(
      issuesOf(() => entry('widget').request({ selection: 3 })),
      [{ path: 'selection', message: 'must be a string: a GraphQL selection set such as "{ id name }".' }],
    );
    for (const selection of [
      '{ id name }',
      '  { id ... on Widget { name } }  ',
      '{ id # a comment\n }',
      '{ a: id b: name @skip(if: false) }',
    ]) {
      const fields = entry('widget').request({ id: '1', selection });
      assert.deepEqual(validate(schema, parse(String(fields.query))), [], selection);
    }
  });
});

describe('catalogDocumentIssues: catalog.documents as PUT and PATCH check it', () => {
  test('a valid list, or none, has no issues', () => {
    assert.deepEqual(catalogDocumentIssues(documents, schema), []);
    assert.deepEqual(catalogDocumentIssues(documents, undefined), []);
    assert.deepEqual(catalogDocumentIssues(undefined, schema), []);
    assert.deepEqual(catalogDocumentIssues([], schema), []);
  });

  test('every problem, each at its path', () => {
    const saved: unknown[] = [
      { name: 'ok', document: '{ now }' },
      { name: 'ok', document: '{ now }', extra: 1 },
      { name: 'white space', document: 'subscription { now }' },
      { name: 'x'.repeat(129), document: '{ nope }', description: 'd'.repeat(1001) },
      { name: '', document: 'query A { now } query B { count }', description: 3 },
      { document: 7 },
      'not an object',
      { name: 'syntax', document: '{ now' },
      { name: 'mutation-ok', document: 'mutation { deleteWidget(id: 1) }' },
      { name: 'types', document: 'type Query { a: Int }' },
      { name: 'empty', document: ' ' },
    ];
    assert.deepEqual(catalogDocumentIssues(saved, schema), [
      { path: 'catalog.documents[1].extra', message: 'is not a field of a saved document (name, document, description).' },
      { path: 'catalog.documents[1].name', message: '"ok" names an earlier document too; names must be unique.' },
      { path: 'catalog.documents[2].name', message: 'must be 1 to 128 characters of A-Z, a-z, 0-9, "_", "." and "-".' },
      { path: 'catalog.documents[2].document', message: 'holds a subscription; subscriptions are not supported.' },
      { path: 'catalog.documents[3].name', message: 'must be 1 to 128 characters of A-Z, a-z, 0-9, "_", "." and "-".' },
      {
        path: 'catalog.documents[3].document',
        message: `does not fit the upstream's schema: Cannot query field "nope" on type "Query". Did you mean "node" or "now"? (line 1, column 3)`,
      },
      { path: 'catalog.documents[3].description', message: 'must be a string of at most 1000 characters.' },
      { path: 'catalog.documents[4].name', message: 'must be 1 to 128 characters of A-Z, a-z, 0-9, "_", "." and "-".' },
      {
        path: 'catalog.documents[4].document',
        message: 'holds several operations; a saved document holds one (fragments beside it are fine).',
      },
      { path: 'catalog.documents[4].description', message: 'must be a string of at most 1000 characters.' },
      { path: 'catalog.documents[5].name', message: 'must be 1 to 128 characters of A-Z, a-z, 0-9, "_", "." and "-".' },
      { path: 'catalog.documents[5].document', message: 'must be a string holding a GraphQL query or mutation.' },
      { path: 'catalog.documents[6]', message: 'must be an object {name, document, description?}.' },
      {
        path: 'catalog.documents[7].document',
        message: 'is not valid GraphQL: Syntax Error: Expected Name, found <EOF>. (line 1, column 6)',
      },
      {
        path: 'catalog.documents[9].document',
        message: 'holds a type system definition (ObjectTypeDefinition); only operations and fragments can be sent.',
      },
      { path: 'catalog.documents[10].document', message: 'is empty; send a GraphQL document.' },
    ]);
    // Without the schema, only the document's own rules.
    assert.equal(
      catalogDocumentIssues(saved, undefined).some((issue) => issue.message.includes('schema')),
      false,
    );
  });

  test('the list itself: an array of at most maxCatalogDocuments', () => {
    assert.deepEqual(catalogDocumentIssues({}, schema), [
      { path: 'catalog.documents', message: 'must be an array of saved documents ({name, document, description?}).' },
    ]);
    const many = Array.from({ length: maxCatalogDocuments + 1 }, (_, index) => ({ name: `d${index}`, document: '{ now }' }));
    assert.deepEqual(catalogDocumentIssues(many, schema), [
      {
        path: 'catalog.documents',
        message: `has ${maxCatalogDocuments + 1} documents; at most ${maxCatalogDocuments} can be saved.`,
      },
    ]);
    assert.deepEqual(catalogDocumentIssues(many.slice(1), schema), []);
  });

  test('a schema graphql-js finds invalid does not make every document invalid', () => {
    const invalid = buildSchema('type Query { a: Empty } type Empty', { assumeValidSDL: true });
    assert.deepEqual(catalogDocumentIssues([{ name: 'a', document: '{ a { __typename } }' }], invalid), []);
  });
});

describe('bounds: a schema of thousands of types and fields', () => {
  const types = 400;
  const lines = [
    `enum Huge { ${Array.from({ length: maxEnumValues + 1 }, (_, i) => `V${i}`).join(' ')} }`,
    'interface Iface { id: ID! }',
  ];
  for (let i = 0; i < types; i++) {
    const next = (k: number) => `T${(i + k) % types}`;
    const fields = ['id: ID!', ...Array.from({ length: 15 }, (_, k) => `s${k}: String`), 'e: Huge'];
    fields.push(...Array.from({ length: 5 }, (_, k) => `n${k}: ${next(k + 1)}`), `list: [${next(1)}]`);
    lines.push(`type T${i}${i < 500 ? ' implements Iface' : ''} { ${fields.join(' ')} }`);
    lines.push(
      `input I${i} { next: I${(i + 1) % types} "${'An input field. '.repeat(20)}" a: Int b: Huge c: [I${(i + 2) % types}!] }`,
    );
  }
  const roots = Array.from({ length: types }, (_, i) => `"A root field." f${i}(in: I${i}, e: Huge): T${i}`);
  // Past maxRootFieldEntries, fields that cost little: the bound is on the number of entries.
  roots.push(...Array.from({ length: maxRootFieldEntries }, (_, i) => `g${i}: Int`));
  lines.push(`type Query { iface: Iface ${roots.join(' ')} }`);
  const big = buildSchema(lines.join('\n'));
  const bomb = Array.from({ length: 20 }, (_, k) => `fragment F${k} on T0 { s${k % 15} ...F${k + 1} ...F${k + 1} }`);
  const saved = [
    { name: 'bomb', document: `{ f0 { ...F0 } } ${bomb.join(' ')} fragment F20 on T0 { s1 }` },
    { name: 'narrow', document: '{ iface { id ... on T1 { s0 } ... on T2 { s1 } } }' },
    { name: 'deep', document: `{ f0 ${'{ n0 '.repeat(100)}{ id }${' }'.repeat(100)} }` },
    { name: 'vars', document: 'query ($in: I0, $e: Huge) { f0(in: $in, e: $e) { id e } }' },
  ];
  const started = performance.now();
  const operations = graphqlCatalog(big, { documents: saved, root_fields: true });
  const elapsed = performance.now() - started;
  const named = (name: string) => operations.find((operation) => operation.name === name)!;
  const items = (name: string) => (named(name).output_schema.properties as Record<string, JsonSchema>).data.items as JsonSchema;

  test(`at most maxRootFieldEntries root fields, each entry's schemas within about ${maxSchemaCost} units`, (t) => {
    assert.equal(operations.length, saved.length + maxRootFieldEntries);
    // iface, then f0…, then g0…: the last entry is the one that reaches the bound.
    assert.equal(operations.at(-1)?.name, `g${maxRootFieldEntries - types - 2}`);
    const sizes = operations.map((operation) => JSON.stringify([operation.input_schema, operation.output_schema]).length);
    t.diagnostic(`${operations.length} entries in ${elapsed.toFixed(0)} ms; the largest ${Math.max(...sizes)} characters`);
    assert.ok(Math.max(...sizes) < 96 * 1024, `largest entry ${Math.max(...sizes)} characters`);
    // Generous for a shared test machine: an entry of this schema took about half a millisecond here.
    assert.ok(elapsed / types < 10, `${elapsed.toFixed(0)} ms for ${operations.length} entries`);
    for (const operation of [named('vars'), named('f0'), named(`f${types - 1}`), named('narrow')]) {
      validator(operation.input_schema);
      validator(operation.output_schema);
    }
  });

  test('past the budget: input objects as {type: object}, enumerations past maxEnumValues as strings', () => {
    const input = named('vars').input_schema;
    const defs = input.$defs as Record<string, JsonSchema>;
    assert.ok(Object.keys(defs).length < 200, `${Object.keys(defs).length} $defs`);
    assert.ok(Object.values(defs).some((def) => JSON.stringify(def) === '{"type":"object"}'));
    for (const text of JSON.stringify(defs).match(/"\$ref":"#\/\$defs\/\w+"/g) ?? []) {
      assert.ok(text.slice(16, -1) in defs, `${text} has a definition`);
    }
    assert.deepEqual((input.properties as Record<string, JsonSchema>).e, { type: ['string', 'null'] });
    const record = items('vars');
    assert.deepEqual((record.properties as Record<string, JsonSchema>).e, { type: ['string', 'null'] });
  });

  test('a fragment spread a million times, a selection 100 deep, 500 possible types: permissive, not exhaustive', () => {
    assert.deepEqual(items('bomb'), {});
    let depth = 0;
    for (let at = items('deep'); at.properties !== undefined; at = (at.properties as Record<string, JsonSchema>).n0) depth++;
    assert.ok(depth > 10 && depth <= maxOutputDepth + 1, `${depth} levels described`);
    assert.deepEqual(items('narrow'), {
      type: 'object',
      properties: { id: { type: 'string' }, s0: { type: ['string', 'null'] }, s1: { type: ['string', 'null'] } },
      required: ['id'],
      additionalProperties: false,
    });
  });
});

describe('a schema graphql-js would call invalid still gives schemas that compile', () => {
  test('an interface without implementations, an enumeration without values', () => {
    const odd = buildSchema('interface Lonely { id: ID } enum Empty type Query { lonely(e: Empty): Lonely empty: Empty }', {
      assumeValidSDL: true,
    });
    const saved = [{ name: 'lonely', document: '{ lonely { __typename id } empty }' }];
    for (const operation of graphqlCatalog(odd, { documents: saved, root_fields: true })) {
      new Ajv2020({ strict: true }).compile(operation.input_schema);
      new Ajv2020({ strict: true }).compile(operation.output_schema);
    }
  });
});
