import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { type GraphQLSchema, parse, validate } from 'graphql';
import type { CatalogOperation } from '../../src/connectors/catalog.ts';
import { graphqlCatalog } from '../../src/connectors/graphql/catalog.ts';
import { countNonNullRootFields, pageOfAnswer } from '../../src/connectors/graphql/records.ts';
import { readGraphqlResponse } from '../../src/connectors/graphql/response.ts';
import { introspectionQuery, schemaOfIntrospection } from '../../src/connectors/graphql/upstream-schema.ts';
import { startGrapheneServer } from '../support/graphene-server.ts';
import { type CountingGraphqlServer, startYogaServer } from '../support/yoga-server.ts';

/**
 * The GraphQL catalogue against servers the project did not write (graphql-yoga and graphene 2, both serving
 * test/support/fixtures/graphql-realistic/schema.graphql): each one's schema read by introspection as the connector
 * reads it, its catalogue built with root fields, every read entry's default request sent with fetch, the answer
 * read into records as execute reads it, and checked against the entry's output schema.
 */

const servers = [
  { name: 'graphql-yoga', start: startYogaServer },
  { name: 'graphene', start: startGrapheneServer },
];

/** Saved documents beside the root fields: fragments on the interface and the union, a mutation with an input object. */
const documents = [
  {
    name: 'shop',
    document: `query Shop($id: ID!) {
      node(id: $id) { ...NodeId ... on Customer { name tier tags address { city } createdAt metadata } }
      people: search(text: "hopper") { ...NodeId ... on Customer { email } }
      sales: search(text: "so-1002") { ...NodeId ... on Order { number status total customer { name } } }
    }
    fragment NodeId on Node { __typename id }`,
  },
  {
    name: 'page',
    document: 'query Page($after: String) { customers(first: 2, after: $after) { totalCount edges { node { id } } } }',
  },
  {
    name: 'create',
    document: `mutation Create($input: CreateCustomerInput!) {
      createCustomer(input: $input) { clientMutationId customer { id name tier tags address { city country } } }
    }`,
  },
];

/** What required arguments and variables are given, by name. */
const inputs: Record<string, Record<string, unknown>> = {
  node: { id: 'customer-1' },
  customer: { id: 'customer-2' },
  search: { text: 'o' },
  shop: { id: 'customer-1' },
  page: {},
  create: { input: { name: 'Barbara Liskov', tags: 'theory', address: { street: '1 Main St', city: 'Boston', country: 'US' } } },
  setOrderStatus: { orderId: 'order-1', status: 'PAID', expectedVersion: 1 },
};

async function post(url: string, fields: Record<string, unknown>) {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json, application/json' },
    body: JSON.stringify({
      query: fields.query ?? fields.mutation,
      variables: fields.variables,
      ...(typeof fields.operation_name === 'string' && { operationName: fields.operation_name }),
    }),
  });
  const body = Buffer.from(await response.arrayBuffer());
  return readGraphqlResponse(response.status, Object.fromEntries(response.headers), body);
}

/** The `data` execute answers for an entry's call, from the upstream's answer. */
function answerOf(operation: CatalogOperation, data: Record<string, unknown>): unknown {
  if (operation.kind === 'write') return { message_count: countNonNullRootFields(data), data, response: { data } };
  const page = pageOfAnswer({ data });
  const records = page.records as unknown[];
  return { message_count: records.length, data: records, total_size: page.totalSize };
}

for (const server of servers) {
  describe(`the catalogue of ${server.name}'s schema`, () => {
    let upstream: CountingGraphqlServer;
    let schema: GraphQLSchema;
    let catalog: CatalogOperation[];
    const ajv = new Ajv2020({ strict: true, allErrors: true });

    before(async () => {
      upstream = await server.start();
      const response = await fetch(upstream.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json' },
        body: JSON.stringify({ query: introspectionQuery() }),
      });
      const body = Buffer.from(await response.arrayBuffer());
      const answer = readGraphqlResponse(response.status, Object.fromEntries(response.headers), body);
      const known = schemaOfIntrospection(answer.data, body.length);
      assert.ok(known.available, known.available ? '' : known.reason);
      schema = known.schema.schema;
      catalog = graphqlCatalog(schema, { documents, root_fields: true });
    });
    after(() => upstream?.close());

    test('entries: the saved documents, then every Query and Mutation field', () => {
      assert.deepEqual(
        catalog.map((operation) => `${operation.kind} ${operation.name}`),
        [
          'read shop',
          'read page',
          'write create',
          ...['node', 'customer', 'customers', 'orders', 'search', 'serverTime'].map((name) => `read ${name}`),
          'write createCustomer',
          'write setOrderStatus',
        ],
      );
      for (const operation of catalog) {
        ajv.compile(operation.input_schema);
        ajv.compile(operation.output_schema);
      }
    });

    test('every read entry answers, by its default request, data that its output schema admits', async () => {
      for (const operation of catalog.filter((candidate) => candidate.kind === 'read')) {
        const input = inputs[operation.name] ?? {};
        assert.ok(ajv.validate(operation.input_schema, input), `${operation.name}: ${ajv.errorsText()}`);
        const fields = operation.request(input);
        assert.deepEqual(validate(schema, parse(String(fields.query))), [], operation.name);
        const answer = answerOf(operation, (await post(upstream.url, fields)).data);
        assert.ok(
          ajv.validate(operation.output_schema, answer),
          `${operation.name}: ${ajv.errorsText()} in ${JSON.stringify(answer)}`,
        );
        if (!['serverTime'].includes(operation.name)) {
          assert.ok((answer as { message_count: number }).message_count > 0, `${operation.name} answered records`);
        }
      }
    });

    test('a selection given in place of the default, and the writes, answer what their schemas admit', async () => {
      const calls: Array<[string, Record<string, unknown>]> = [
        ['customers', { first: 3, selection: '{ total: totalCount edges { cursor node { id name orders { totalCount } } } }' }],
        ['orders', { selection: '{ nodes: totalCount }' }],
        ['search', { text: 'o', selection: '{ __typename ... on Order { lines { sku quantity } } }' }],
        ['create', inputs.create],
        ['createCustomer', { input: { name: 'Alan Kay', tier: 'PRO' } }],
        ['setOrderStatus', inputs.setOrderStatus],
      ];
      for (const [name, input] of calls) {
        const operation = catalog.find((candidate) => candidate.name === name)!;
        assert.ok(ajv.validate(operation.input_schema, input), `${name}: ${ajv.errorsText()}`);
        const answer = answerOf(operation, (await post(upstream.url, operation.request(input))).data);
        assert.ok(ajv.validate(operation.output_schema, answer), `${name}: ${ajv.errorsText()} in ${JSON.stringify(answer)}`);
        assert.ok((answer as { message_count: number }).message_count > 0, `${name} answered`);
      }
    });
  });
}
