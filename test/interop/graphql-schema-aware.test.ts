import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import {
  buildClientSchema,
  buildSchema,
  findBreakingChanges,
  findDangerousChanges,
  type GraphQLSchema,
  getIntrospectionQuery,
  getVariableValues,
  type IntrospectionQuery,
  type OperationDefinitionNode,
  parse,
  validate,
} from 'graphql';
import { assertError } from '../support/assertions.ts';
import { startGrapheneServer } from '../support/graphene-server.ts';
import { type Auth, body, type Harness, harness } from '../support/harness.ts';
import { until } from '../support/until.ts';
import { type CountingGraphqlServer, realisticSchemaPath, startYogaServer } from '../support/yoga-server.ts';

/**
 * Schema-aware checking (docs/execute.md#schema-aware-checking) against GraphQL servers the project did not write:
 * graphql-yoga (graphql-js) and graphene 2 (Python, graphql-core 2), each serving the realistic schema of
 * test/support/fixtures/graphql-realistic, and each also with introspection disabled. The servers count what reaches them:
 * an invalid call costs them the one introspection and nothing else. The expected errors are graphql-js's own, run
 * here on the schema the server itself reports.
 */

const sdl = readFileSync(realisticSchemaPath, 'utf8');

/** What graphql-js says of `document` (and its variables) against `schema`: the oracle of every refusal below. */
function oracle(schema: GraphQLSchema, document: string, variables: Record<string, unknown> = {}) {
  const parsed = parse(document);
  const errors = validate(schema, parsed);
  if (errors.length > 0) return errors.map((e) => ({ message: e.message, locations: e.locations }));
  const operation = parsed.definitions[0] as OperationDefinitionNode;
  const coerced = getVariableValues(schema, operation.variableDefinitions ?? [], variables);
  return (coerced.errors ?? []).map((e) => ({ message: e.message, locations: e.locations ?? [] }));
}

async function introspect(server: CountingGraphqlServer): Promise<GraphQLSchema> {
  const res = await fetch(server.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json' },
    body: JSON.stringify({ query: getIntrospectionQuery() }),
  });
  const answer = (await res.json()) as { data: IntrospectionQuery };
  return buildClientSchema(answer.data);
}

const servers = [
  { name: 'graphql-yoga', start: startYogaServer },
  { name: 'graphene 2 (Python)', start: startGrapheneServer },
] as const;

let h: Harness;
let auth: Auth;
let serial = 0;

before(async () => {
  h = await harness();
  await h.tenant('acme');
  auth = await h.auth('acme', ['integrations.*', 'executions.read']);
});
after(() => h.close());

async function integration(server: CountingGraphqlServer, extra: Record<string, unknown> = {}): Promise<string> {
  const id = `shop-${++serial}`;
  const res = await h.call(auth, {
    method: 'PUT',
    url: `/api/v1/integrations/${id}`,
    payload: { connector: 'graphql-1.0.0', config: { base_url: server.url, ...extra } },
  });
  assert.equal(res.statusCode, 201, res.body);
  return id;
}

const execute = (id: string, payload: Record<string, unknown>) =>
  h.call(auth, { method: 'POST', url: `/api/v1/integrations/${id}/execute`, payload });

/** Runs `call` and asserts the server received nothing meanwhile. */
async function nothingSent<T>(server: CountingGraphqlServer, call: () => Promise<T>): Promise<T> {
  const before = server.requests;
  const result = await call();
  assert.equal(server.requests, before, 'nothing reached the upstream');
  return result;
}

const customersQuery = `query Customers($first: Int, $tier: CustomerTier) {
  customers(first: $first, tier: $tier) {
    totalCount
    edges { cursor node { id name tier ...Located } }
    pageInfo { hasNextPage endCursor }
  }
}
fragment Located on Customer { address { city } }`;

const searchQuery = `query Search($text: String!) {
  search(text: $text) {
    __typename
    ... on Node { id }
    ... on Customer { name }
    ... on Order { number status }
  }
}`;

const createCustomer = `mutation Create($input: CreateCustomerInput!) {
  createCustomer(input: $input) { customer { id name tier } clientMutationId }
}`;

for (const { name, start } of servers) {
  describe(`${name}: documents checked against its schema`, () => {
    let server: CountingGraphqlServer;
    let schema: GraphQLSchema;
    let id: string;

    before(async () => {
      server = await start();
      schema = await introspect(server);
      id = await integration(server);
    });
    after(() => server.close());

    test('the first call introspects once; invalid calls after it send nothing, with graphql-js errors', async () => {
      const start = server.requests;
      const introspected = server.introspections;
      const misspelt = '{ customers(first: 2) { edges { node { id nmae } } } }';
      const res = await execute(id, { operation: 'receive', query: misspelt });
      const error = assertError(res, 400, 'graphql_validation_failed');
      assert.deepEqual(error.details, { errors: oracle(schema, misspelt) });
      assert.match(error.message, /Cannot query field "nmae" on type "Customer"/);
      assert.equal(server.requests - start, 1, 'only the introspection');
      assert.equal(server.introspections - introspected, 1);

      const cases: Array<[string, Record<string, unknown>]> = [
        // An argument that does not exist, a missing required one, a wrong literal type.
        ['{ customers(frist: 2) { totalCount } }', {}],
        ['{ search { __typename } }', {}],
        ['{ customer(id: 1.5) { id } }', {}],
        // A fragment on a type that cannot apply, a selection missing on an object, a deprecated-free unknown enum.
        ['{ search(text: "a") { ... on Address { city } } }', {}],
        ['{ customers { totalCount pageInfo } }', {}],
        ['{ customers(tier: PLATINUM) { totalCount } }', {}],
        // A variable declared and unused, one used and undeclared.
        ['query($x: Int) { serverTime }', {}],
        ['{ customers(first: $n) { totalCount } }', {}],
      ];
      for (const [document, variables] of cases) {
        const refused = await nothingSent(server, () => execute(id, { operation: 'receive', query: document, variables }));
        assert.deepEqual(
          assertError(refused, 400, 'graphql_validation_failed').details,
          { errors: oracle(schema, document) },
          document,
        );
      }
    });

    test('variables are coerced by their declared types before anything is sent', async () => {
      const cases: Array<[string, Record<string, unknown>]> = [
        [customersQuery, { first: 'ten' }],
        [customersQuery, { tier: 'PLATINUM' }],
        [searchQuery, {}],
        [searchQuery, { text: null }],
        [createCustomer, { input: { name: 'Ada', tier: 'GOLD' } }],
        [createCustomer, { input: { email: 'a@example.com' } }],
        [createCustomer, { input: { name: 'Ada', address: { street: 'x', city: 'y' } } }],
        [createCustomer, { input: { name: 'Ada', unknownField: 1 } }],
        [createCustomer, { input: { name: 'Ada', tags: ['a', null] } }],
      ];
      for (const [document, variables] of cases) {
        const operation = document.startsWith('mutation') ? 'send' : 'receive';
        const field = operation === 'send' ? 'mutation' : 'query';
        const res = await nothingSent(server, () => execute(id, { operation, [field]: document, variables }));
        const expected = oracle(schema, document, variables);
        assert.ok(expected.length > 0, `graphql-js refuses ${JSON.stringify(variables)}`);
        assert.deepEqual(
          assertError(res, 400, 'graphql_validation_failed').details,
          { errors: expected },
          JSON.stringify(variables),
        );
      }
    });

    test('valid documents go through: fragments on the interface and the union, input objects, custom scalars', async () => {
      const before = server.requests;
      const customers = await execute(id, { operation: 'receive', query: customersQuery, variables: { first: 2 } });
      assert.equal(customers.statusCode, 200, customers.body);
      assert.equal(body(customers).data.message_count, 2);
      const search = await execute(id, { operation: 'receive', query: searchQuery, variables: { text: 'a' } });
      assert.equal(search.statusCode, 200, search.body);
      const created = await execute(id, {
        operation: 'send',
        mutation: createCustomer,
        variables: { input: { name: 'Grace', tier: 'PRO', tags: ['vip'], address: { street: 's', city: 'c', country: 'NL' } } },
      });
      assert.equal(created.statusCode, 200, created.body);
      assert.equal(body(created).data.data.createCustomer.customer.name, 'Grace');
      assert.equal(server.requests - before, 3, 'each call sent its document once, no introspection again');
    });

    test('sync: a bad part is refused before either part runs; batch: a bad entry fails alone', async () => {
      const refused = await nothingSent(server, () =>
        execute(id, {
          operation: 'sync',
          outbound: { mutation: createCustomer, variables: { input: { name: 'Never sent' } } },
          inbound: { query: '{ customers { totalCount nope } }' },
        }),
      );
      const error = assertError(refused, 400, 'graphql_validation_failed');
      assert.equal(error.details?.stage, 'inbound');

      const before = server.requests;
      const batch = await execute(id, {
        operation: 'batch',
        operations: [
          { operation: 'receive', query: '{ serverTime }' },
          { operation: 'receive', query: '{ serverTim }' },
          { operation: 'receive', query: customersQuery, variables: { first: 'x' } },
          { operation: 'receive', query: '{ customers(first: 1) { totalCount } }' },
        ],
      });
      const results = body(batch).data.results;
      assert.deepEqual(
        results.map((r: { success: boolean; error?: { code: string } }) => r.error?.code ?? r.success),
        [true, 'graphql_validation_failed', 'graphql_validation_failed', true],
      );
      assert.equal(server.requests - before, 2, 'only the valid entries were sent');
    });

    test('a paginated receive is checked too', async () => {
      const res = await nothingSent(server, () =>
        execute(id, {
          operation: 'receive',
          query:
            'query($after: String) { customers(first: 2, after: $after) { edges { node { id naem } } pageInfo { hasNextPage endCursor } } }',
          paginate: true,
        }),
      );
      assertError(res, 400, 'graphql_validation_failed');
      const pages = await execute(id, {
        operation: 'receive',
        query:
          'query($after: String) { customers(first: 2, after: $after) { edges { node { id } } pageInfo { hasNextPage endCursor } } }',
        paginate: true,
      });
      assert.equal(pages.statusCode, 200, pages.body);
      // Four seeded customers and the one the mutation above created, two a page.
      assert.deepEqual([body(pages).data.message_count, body(pages).data.pages], [5, 3]);
    });

    test('test reports the schema; GET /schema gives SDL with no breaking or dangerous change', async () => {
      const tested = await execute(id, { operation: 'test' });
      assert.equal(tested.statusCode, 200, tested.body);
      const reported = body(tested).data.details.schema;
      const typeCount = Object.keys(schema.getTypeMap()).length;
      assert.deepEqual(
        { ...reported, fetched_at: typeof reported.fetched_at },
        { available: true, query_type: 'Query', mutation_type: 'Mutation', types: typeCount, fetched_at: 'string' },
      );
      const res = await h.call(auth, { method: 'GET', url: `/api/v1/integrations/${id}/schema` });
      assert.equal(res.statusCode, 200, res.body);
      const view = body(res).data;
      assert.equal(view.available, true);
      const rebuilt = buildSchema(view.sdl);
      assert.deepEqual(findBreakingChanges(schema, rebuilt), []);
      assert.deepEqual(findDangerousChanges(schema, rebuilt), []);
      if (name === 'graphql-yoga') {
        // yoga reports the fixture's schema exactly: the SDL round-trips to the server's own source.
        assert.deepEqual(findBreakingChanges(buildSchema(sdl), rebuilt), []);
      }
    });

    test('a change to the integration drops its schema; concurrent first calls share one introspection', async () => {
      const fresh = await integration(server);
      const before = server.introspections;
      const answers = await Promise.all(
        Array.from({ length: 10 }, () => execute(fresh, { operation: 'receive', query: '{ serverTime }' })),
      );
      assert.deepEqual(new Set(answers.map((a) => a.statusCode)), new Set([200]));
      assert.equal(server.introspections - before, 1);
      const patched = await h.call(auth, {
        method: 'PATCH',
        url: `/api/v1/integrations/${fresh}`,
        payload: { config: { timeout_seconds: 20 } },
      });
      assert.equal(patched.statusCode, 200);
      await execute(fresh, { operation: 'receive', query: '{ serverTime }' });
      assert.equal(server.introspections - before, 2, 'read again after the change');
    });

    test('validate_schema: false sends the document as it is', async () => {
      const unchecked = await integration(server, { validate_schema: false });
      const before = server.requests;
      const res = await execute(unchecked, { operation: 'receive', query: '{ serverTim }' });
      assert.equal(res.statusCode, 502, res.body);
      assert.equal(body(res).error.code, 'graphql_errors');
      assert.equal(server.requests - before, 1, 'the document went upstream, and no introspection');
    });
  });

  describe(`${name} with introspection disabled: syntax only`, () => {
    let server: CountingGraphqlServer;
    let id: string;

    before(async () => {
      server = await start({ introspection: false });
      id = await integration(server);
    });
    after(() => server.close());

    test('calls go out after the refused introspection, which is not asked again for a while', async () => {
      const ok = await execute(id, { operation: 'receive', query: '{ serverTime }' });
      assert.equal(ok.statusCode, 200, ok.body);
      const wrong = await execute(id, { operation: 'receive', query: '{ serverTim }' });
      assert.equal(wrong.statusCode, 502, 'the upstream answered it');
      assert.equal(body(wrong).error.code, 'graphql_errors');
      assertError(await execute(id, { operation: 'receive', query: '{ serverTime' }), 400, 'validation_failed');
      assert.equal(server.introspections, 1, 'one refused introspection, kept');
      assert.equal(server.requests, 3);
    });

    test('test passes and says why there is no schema; GET /schema says so too', async () => {
      const tested = await execute(id, { operation: 'test' });
      assert.equal(tested.statusCode, 200, tested.body);
      const schema = body(tested).data.details.schema;
      assert.equal(schema.available, false);
      assert.match(schema.reason, /^The upstream refused introspection/);
      const view = body(await h.call(auth, { method: 'GET', url: `/api/v1/integrations/${id}/schema` })).data;
      assert.equal(view.available, false);
      assert.equal(view.sdl, null);
      assert.match(view.reason, /refused introspection/);
    });
  });
}

describe('test against a graphql-yoga that limits depth: the probe passes, the full introspection does not', () => {
  let server: CountingGraphqlServer;

  before(async () => {
    server = await startYogaServer({ maxDepth: 5 });
  });
  after(() => server.close());

  test("test sends the seed's probe first and names the query type; the refused introspection only loses the schema", async () => {
    const id = await integration(server);
    const before = server.bodies.length;
    const tested = await execute(id, { operation: 'test' });
    assert.equal(tested.statusCode, 200, tested.body);
    const { details } = body(tested).data;
    assert.equal(details.query_type, 'Query');
    assert.equal(details.schema.available, false);
    assert.match(details.schema.reason, /levels deep/);
    const sent = server.bodies.slice(before) as Array<{ query: string }>;
    assert.equal(sent[0].query, '{ __schema { queryType { name } } }', 'the probe, exactly');
    assert.match(sent[1].query, /__schema/);
    assert.equal(sent.length, 2);
  });

  test('with validate_schema false, test sends the probe alone', async () => {
    const id = await integration(server, { validate_schema: false });
    const before = server.bodies.length;
    const tested = await execute(id, { operation: 'test' });
    assert.equal(tested.statusCode, 200, tested.body);
    assert.equal(body(tested).data.details.query_type, 'Query');
    assert.equal(body(tested).data.details.schema.available, false);
    assert.equal(server.bodies.length - before, 1);
  });
});

describe('async calls and the schema', () => {
  let server: CountingGraphqlServer;

  before(async () => {
    server = await startYogaServer();
  });
  after(() => server.close());

  const executeAsync = (id: string, payload: Record<string, unknown>) =>
    h.call(auth, { method: 'POST', url: `/api/v1/integrations/${id}/execute`, payload, headers: { prefer: 'respond-async' } });
  const ended = (executionId: string) =>
    until(async () => {
      const record = body(await h.call(auth, { method: 'GET', url: `/api/v1/executions/${executionId}` })).data;
      return record.finished_at !== null ? record : undefined;
    }, `execution ${executionId} ended`);

  test('accepting never waits for a first introspection; the run checks, and its result is the refusal', async () => {
    const id = await integration(server);
    const accepted = await executeAsync(id, { operation: 'receive', query: '{ serverTim }' });
    assert.equal(accepted.statusCode, 202, accepted.body);
    const record = await ended(body(accepted).data.execution_id);
    assert.equal(record.error_code, 'graphql_validation_failed');
    assert.equal(record.result.error.code, 'graphql_validation_failed');
    assert.equal(server.introspections, 1);
    assert.equal(server.requests, 1, 'the run sent the introspection alone');
  });

  test('with the schema kept, a bad async call is refused at once and queues nothing', async () => {
    const id = await integration(server);
    assert.equal((await execute(id, { operation: 'receive', query: '{ serverTime }' })).statusCode, 200);
    const before = server.requests;
    const refused = await executeAsync(id, { operation: 'receive', query: '{ serverTim }' });
    assertError(refused, 400, 'graphql_validation_failed');
    assert.equal(server.requests, before);
  });
});

describe('GET /integrations/{id}/schema of what has no GraphQL schema', () => {
  test('a SOAP integration: 400 unsupported_operation; no such integration: 404; another tenant’s: 404', async () => {
    const put = await h.call(auth, {
      method: 'PUT',
      url: '/api/v1/integrations/ledger',
      payload: { connector: 'soap-1.0.0', config: { endpoint_url: 'http://127.0.0.1:9/ledger' } },
    });
    assert.equal(put.statusCode, 201, put.body);
    const soap = await h.call(auth, { method: 'GET', url: '/api/v1/integrations/ledger/schema' });
    assert.deepEqual(assertError(soap, 400, 'unsupported_operation').details, { connector: 'soap-1.0.0' });
    assertError(await h.call(auth, { method: 'GET', url: '/api/v1/integrations/nope/schema' }), 404, 'not_found');
    await h.tenant('globex');
    const globex = await h.auth('globex', ['integrations.read']);
    assertError(await h.call(globex, { method: 'GET', url: '/api/v1/integrations/ledger/schema' }), 404, 'not_found');
  });
});
