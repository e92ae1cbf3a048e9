import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import {
  buildClientSchema,
  buildSchema,
  findBreakingChanges,
  type GraphQLSchema,
  getIntrospectionQuery,
  type IntrospectionQuery,
  lexicographicSortSchema,
  printSchema,
} from 'graphql';
import { startGrapheneServer } from '../support/graphene-server.ts';
import type { Json } from '../support/processes.ts';
import {
  type CountingGraphqlServer,
  type RealisticServerOptions,
  realisticSchemaPath,
  startYogaServer,
} from '../support/yoga-server.ts';

/**
 * The GraphQL servers the project did not write that the schema-aware GraphQL tests run against (issue 22):
 * graphql-yoga and graphene 2, both serving test/support/fixtures/graphql-realistic/schema.graphql over data.json. This
 * checks the fixtures themselves, so that a failure there is not taken for one in Interchange.
 */

interface ServerUnderTest {
  name: string;
  start(options?: RealisticServerOptions): Promise<CountingGraphqlServer>;
  /** The status of a document that fails validation (a request error: no `data`). */
  validationStatus: number;
  /** `CreateCustomerInput.tier`'s `defaultValue` as introspection answers it. */
  tierDefault: string;
  /** What findBreakingChanges(schema.graphql, the introspected schema) finds. */
  breaking: string[];
  /** schema.graphql printed as the introspected schema prints. */
  printed(sdl: string): string;
}

const servers: ServerUnderTest[] = [
  {
    name: 'graphql-yoga',
    start: startYogaServer,
    // Yoga answers a validation failure 200 to a client that accepts application/json (GraphQL over HTTP's legacy watershed).
    validationStatus: 200,
    tierDefault: 'FREE',
    breaking: [],
    printed: (sdl) => sdl,
  },
  {
    name: 'graphene',
    start: startGrapheneServer,
    validationStatus: 400,
    // graphql-core 2 prints an enum default as a string literal (it passes the input value, not its type, to
    // ast_from_value), which is no CustomerTier: buildClientSchema drops it.
    tierDefault: '"FREE"',
    // graphql-core 2 introspects only @include and @skip; it serves deprecations all the same (isDeprecated, deprecationReason).
    breaking: ['deprecated was removed.', 'specifiedBy was removed.', 'oneOf was removed.'],
    printed: (sdl) => sdl.replace('tier: CustomerTier = FREE', 'tier: CustomerTier'),
  },
];

const expectedSchema = buildSchema(readFileSync(realisticSchemaPath, 'utf8'));
const print = (schema: GraphQLSchema) => printSchema(lexicographicSortSchema(schema));
const cursor = (offset: number) => Buffer.from(`arrayconnection:${offset}`).toString('base64');

/** How many requests post() sent to each server. */
const sent = new Map<CountingGraphqlServer, number>();

/** Sends a GraphQL request and checks that the server counted it, and only it. */
async function post(server: CountingGraphqlServer, body: { query: string; variables?: unknown }) {
  const counted = { requests: server.requests, introspections: server.introspections, bodies: server.bodies.length };
  const response = await fetch(server.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json' },
    body: JSON.stringify(body),
  });
  const answer: Json = await response.json();
  sent.set(server, (sent.get(server) ?? 0) + 1);
  assert.equal(server.requests, counted.requests + 1);
  assert.equal(server.bodies.length, counted.bodies + 1);
  assert.deepEqual(server.bodies.at(-1), body);
  assert.equal(server.introspections, counted.introspections + (body.query.includes('__schema') ? 1 : 0));
  return { status: response.status, answer };
}

const shopQuery = `
  query Shop($id: ID!) {
    node(id: $id) { ...NodeId ... on Customer { name tier tags address { city } createdAt metadata } }
    people: search(text: "hopper") { ...NodeId ... on Customer { email } }
    sales: search(text: "so-1002") { ...NodeId ... on Order { number status total customer { name } } }
  }
  fragment NodeId on Node { __typename id }
`;

const createCustomer = `
  mutation Create($input: CreateCustomerInput!) {
    createCustomer(input: $input) { clientMutationId customer { id name tier tags address { city country } createdAt metadata } }
  }
`;

for (const server of servers) {
  describe(`${server.name} serving schema.graphql`, () => {
    let upstream: CountingGraphqlServer;
    before(async () => {
      upstream = await server.start();
    });
    after(() => upstream?.close());

    test('a query with fragments on the interface and the union answers the seed', async () => {
      const { status, answer } = await post(upstream, { query: shopQuery, variables: { id: 'customer-1' } });
      assert.equal(status, 200);
      assert.deepEqual(answer, {
        data: {
          node: {
            __typename: 'Customer',
            id: 'customer-1',
            name: 'Ada Lovelace',
            tier: 'PRO',
            tags: ['vip', 'newsletter'],
            address: { city: 'London' },
            createdAt: '2024-01-15T09:30:00Z',
            metadata: { source: 'import', score: 42, flags: ['early'] },
          },
          people: [{ __typename: 'Customer', id: 'customer-2', email: 'grace@example.com' }],
          sales: [
            {
              __typename: 'Order',
              id: 'order-2',
              number: 'SO-1002',
              status: 'SHIPPED',
              total: 8.75,
              customer: { name: 'Ada Lovelace' },
            },
          ],
        },
      });
    });

    test('connections page with base64 cursors', async () => {
      const query = `query Page($after: String) {
        customers(first: 2, after: $after) { totalCount pageInfo { hasNextPage endCursor } edges { cursor node { id orders(first: 1) { totalCount } } } }
      }`;
      const first = await post(upstream, { query });
      assert.deepEqual(first.answer.data.customers, {
        totalCount: 4,
        pageInfo: { hasNextPage: true, endCursor: cursor(1) },
        edges: [
          { cursor: cursor(0), node: { id: 'customer-1', orders: { totalCount: 2 } } },
          { cursor: cursor(1), node: { id: 'customer-2', orders: { totalCount: 1 } } },
        ],
      });
      const second = await post(upstream, { query, variables: { after: cursor(1) } });
      assert.deepEqual(
        second.answer.data.customers.edges.map((edge: Json) => edge.node.id),
        ['customer-3', 'customer-4'],
      );
      assert.equal(second.answer.data.customers.pageInfo.hasNextPage, false);
      const broken = await post(upstream, { query, variables: { after: 'not-a-cursor' } });
      assert.equal(broken.status, 200);
      assert.deepEqual(broken.answer.data, null);
      assert.equal(broken.answer.errors[0].message, 'Invalid cursor: not-a-cursor');
      assert.deepEqual(broken.answer.errors[0].path, ['customers']);
    });

    test('a mutation with an input object creates a customer that later queries see', async () => {
      const input = {
        name: 'Edsger Dijkstra',
        tags: ['algorithms'],
        address: { street: '1 University Station', city: 'Austin', country: 'US' },
        metadata: { source: 'api', ids: [1, 2] },
        clientMutationId: 'create-1',
      };
      const { status, answer } = await post(upstream, { query: createCustomer, variables: { input } });
      assert.equal(status, 200);
      assert.deepEqual(answer.data.createCustomer, {
        clientMutationId: 'create-1',
        customer: {
          id: 'customer-5',
          name: 'Edsger Dijkstra',
          tier: 'FREE',
          tags: ['algorithms'],
          address: { city: 'Austin', country: 'US' },
          createdAt: '2024-06-01T12:00:00Z',
          metadata: { source: 'api', ids: [1, 2] },
        },
      });
      const read = await post(upstream, { query: '{ customer(id: "customer-5") { name } customers { totalCount } }' });
      assert.deepEqual(read.answer.data, { customer: { name: 'Edsger Dijkstra' }, customers: { totalCount: 5 } });
    });

    test('a mutation with scalar and enum arguments checks the version it is given', async () => {
      const query =
        'mutation { setOrderStatus(orderId: "order-3", status: PAID, expectedVersion: VERSION) { id status version } }';
      const stale = await post(upstream, { query: query.replace('VERSION', '7') });
      assert.equal(stale.status, 200);
      assert.equal(stale.answer.data, null);
      assert.equal(stale.answer.errors[0].message, 'Order order-3 is at version 1, not 7');
      const current = await post(upstream, { query: query.replace('VERSION', '1') });
      assert.deepEqual(current.answer, { data: { setOrderStatus: { id: 'order-3', status: 'PAID', version: 2 } } });
    });

    test('a variable of the wrong type or an unknown field is a request error', async () => {
      const wrongType = await post(upstream, {
        query: 'query ($first: Int) { customers(first: $first) { totalCount } }',
        variables: { first: 'ten' },
      });
      assert.equal(wrongType.status, 400);
      assert.equal('data' in wrongType.answer, false);
      assert.ok(wrongType.answer.errors.length > 0);
      for (const error of wrongType.answer.errors) assert.equal(typeof error.message, 'string');
      const unknownField = await post(upstream, { query: '{ nope }' });
      assert.equal(unknownField.status, server.validationStatus);
      assert.equal('data' in unknownField.answer, false);
      assert.match(unknownField.answer.errors[0].message, /Cannot query field "nope" on type "Query"/);
      assert.deepEqual(unknownField.answer.errors[0].locations, [{ line: 1, column: 3 }]);
    });

    test('the standard introspection query answers the types of schema.graphql', async () => {
      const { status, answer } = await post(upstream, { query: getIntrospectionQuery() });
      assert.equal(status, 200);
      const introspection = answer.data as IntrospectionQuery;
      const served = buildClientSchema(introspection);
      assert.deepEqual(
        findBreakingChanges(expectedSchema, served).map((change) => change.description),
        server.breaking,
      );
      assert.deepEqual(findBreakingChanges(served, expectedSchema), []);
      assert.equal(print(served), server.printed(print(expectedSchema)));
      const input = introspection.__schema.types.find((type) => type.name === 'CreateCustomerInput');
      const tier = input?.kind === 'INPUT_OBJECT' ? input.inputFields.find((field) => field.name === 'tier') : undefined;
      assert.equal(tier?.defaultValue, server.tierDefault);
    });

    test('the counters count every request, GET included, and no readiness probe', async () => {
      const response = await fetch(`${upstream.url}?query=${encodeURIComponent('{ __typename }')}`);
      assert.deepEqual(await response.json(), { data: { __typename: 'Query' } });
      // What this suite sent: the POSTs, then this GET without a body; the readiness probes went around the front.
      assert.equal(upstream.requests, sent.get(upstream)! + 1);
      assert.equal(upstream.bodies.length, sent.get(upstream));
      assert.equal(upstream.introspections, 1);
    });
  });

  describe(`${server.name} with introspection disabled`, () => {
    let upstream: CountingGraphqlServer;
    before(async () => {
      upstream = await server.start({ introspection: false });
    });
    after(() => upstream?.close());

    test('refuses __schema and __type, and answers other queries', async () => {
      for (const query of [
        getIntrospectionQuery(),
        '{ customer(id: "customer-1") { name } ...T } fragment T on Query { __type(name: "Order") { name } }',
      ]) {
        const { status, answer } = await post(upstream, { query });
        assert.equal(status, server.validationStatus);
        assert.equal('data' in answer, false);
        assert.match(answer.errors[0].message, /introspection/i);
      }
      const { status, answer } = await post(upstream, { query: '{ __typename customer(id: "customer-1") { name } }' });
      assert.equal(status, 200);
      assert.deepEqual(answer, { data: { __typename: 'Query', customer: { name: 'Ada Lovelace' } } });
      assert.equal(upstream.requests, 3);
      assert.equal(upstream.introspections, 1);
    });
  });
}
