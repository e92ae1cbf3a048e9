import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { getIntrospectionQuery } from 'graphql';
import { saveIntegration } from '../../src/storage/integrations.ts';
import { assertError, issuePaths } from '../support/assertions.ts';
import { type GraphqlServer, type RecordedRequest, startGraphqlServer } from '../support/graphql-server.ts';
import { type Auth, body, type Harness, harness } from '../support/harness.ts';

/** When this file began: timestamps the service writes during its tests lie between it and now. */
const fileStarted = Date.now();

/** End to end through app.inject() against a real GraphQL server: every operation of docs/execute.md#graphql-connector. */

const cursorOf = (id: string) => Buffer.from(`user:${id}`).toString('base64');
const ids = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => ({ id: String(from + i) }));
const usersPage =
  'query Users($first: Int, $after: String) { users(first: $first, after: $after) { edges { node { id } } pageInfo { hasNextPage endCursor } totalCount } }';
const brokenRequiredError = { message: 'broken on purpose', locations: [{ line: 1, column: 3 }], path: ['brokenRequired'] };

/** graphql-js's error for the `broken` field as written in `query`. */
function brokenError(query: string) {
  return { message: 'broken on purpose', locations: [{ line: 1, column: query.indexOf('broken') + 1 }], path: ['broken'] };
}

/** A 200 success: exactly `{success, data}` (plus `errors` when given); returns `data`. */
// biome-ignore lint/suspicious/noExplicitAny: tests read response bodies by shape and assert on the values.
function okData(res: LightMyRequestResponse, errors?: unknown[]): any {
  assert.equal(res.statusCode, 200, res.body);
  const parsed = body(res);
  assert.deepEqual(Object.keys(parsed).sort(), errors === undefined ? ['data', 'success'] : ['data', 'errors', 'success']);
  assert.equal(parsed.success, true);
  if (errors !== undefined) assert.deepEqual(parsed.errors, errors);
  return parsed.data;
}

/** A 502 graphql_errors: the failure body plus the upstream's `errors` at the top level; returns the whole body. */
// biome-ignore lint/suspicious/noExplicitAny: tests read response bodies by shape and assert on the values.
function graphqlErrors(res: LightMyRequestResponse, errors: unknown[]): any {
  assert.equal(res.statusCode, 502, res.body);
  const parsed = body(res);
  assert.deepEqual(Object.keys(parsed).sort(), ['error', 'errors', 'request_id', 'success']);
  assert.equal(parsed.success, false);
  assert.equal(parsed.error.code, 'graphql_errors');
  assert.deepEqual(parsed.errors, errors);
  assert.equal(parsed.error.message, (errors[0] as { message: string }).message);
  assert.equal(parsed.request_id, res.headers['x-request-id']);
  return parsed;
}

/** The distinct issue paths of a 400 validation_failed, sorted (one path may carry several problems). */
function issuePathSet(res: LightMyRequestResponse): string[] {
  return [...new Set(issuePaths(res))];
}

/** The documents a server received, but the introspection queries that schema-aware checking sends first. */
function documentsSent(requests: readonly RecordedRequest[]): string[] {
  return requests
    .map((request) => (request.body as { query: string }).query)
    .filter((query) => !query.includes('query IntrospectionQuery'));
}

function lastRequest(server: GraphqlServer): RecordedRequest {
  const recorded = server.requests.at(-1);
  assert.ok(recorded, 'the server received a request');
  return recorded;
}

describe('POST /integrations/{id}/execute with the GraphQL connector', () => {
  let h: Harness;
  let acme: Auth;
  let globex: Auth;
  let upstream: GraphqlServer;

  const put = (id: string, config: Record<string, unknown>, auth: Auth = acme) =>
    h.call(auth, {
      method: 'PUT',
      url: `/api/v1/integrations/${encodeURIComponent(id)}`,
      payload: { connector: 'graphql-1.0.0', config },
    });
  const patch = (id: string, config: Record<string, unknown>) =>
    h.call(acme, { method: 'PATCH', url: `/api/v1/integrations/${encodeURIComponent(id)}`, payload: { config } });
  const execute = (id: string, payload: Record<string, unknown>, auth: Auth = acme) =>
    h.call(auth, { method: 'POST', url: `/api/v1/integrations/${encodeURIComponent(id)}/execute`, payload });

  /** Runs `call` and asserts the upstream received no request meanwhile. */
  async function nothingSent(server: GraphqlServer, call: () => Promise<LightMyRequestResponse>) {
    const before = server.requests.length;
    const res = await call();
    assert.equal(server.requests.length, before, 'no request went upstream');
    return res;
  }

  before(async () => {
    h = await harness();
    await h.tenant('acme');
    await h.tenant('globex');
    acme = await h.auth('acme', ['integrations.*', 'executions.read']);
    globex = await h.auth('globex', ['integrations.*']);
    upstream = await startGraphqlServer();
    assert.equal((await put('gql', { base_url: upstream.origin })).statusCode, 201);
  });
  after(async () => {
    await upstream.close();
    await h.close();
  });

  describe('send', () => {
    let server: GraphqlServer;
    before(async () => {
      server = await startGraphqlServer();
      await put('send', { base_url: server.url });
    });
    after(() => server.close());

    test('{message_count, data, response: {data}}; message_count counts the non-null root fields', async () => {
      const mutation = 'mutation { deleteUser(id: "999") renameUser(id: "999", name: "x") { id } }';
      const data = okData(await execute('send', { operation: 'send', mutation }));
      assert.deepEqual(data, {
        message_count: 1,
        data: { deleteUser: false, renameUser: null },
        response: { data: { deleteUser: false, renameUser: null } },
      });
      assert.deepEqual(lastRequest(server).body, { query: mutation, variables: {} });
    });

    test('variables and operation_name of a multi-operation document reach the server', async () => {
      const mutation =
        'mutation Create($name: String!, $email: String) { createUser(name: $name, email: $email) { id name email } } mutation Rename { renameUser(id: "1", name: "Ann") { id name } }';
      const data = okData(
        await execute('send', {
          operation: 'send',
          mutation,
          variables: { name: 'Zed', email: 'zed@example.com' },
          operation_name: 'Create',
        }),
      );
      const created = { createUser: { id: '26', name: 'Zed', email: 'zed@example.com' } };
      assert.deepEqual(data, { message_count: 1, data: created, response: { data: created } });
      assert.deepEqual(lastRequest(server).body, {
        query: mutation,
        variables: { name: 'Zed', email: 'zed@example.com' },
        operationName: 'Create',
      });

      const renamed = okData(await execute('send', { operation: 'send', mutation, operation_name: 'Rename' }));
      assert.deepEqual(renamed.data, { renameUser: { id: '1', name: 'Ann' } });
      assert.equal(renamed.message_count, 1);
      assert.deepEqual(lastRequest(server).body, { query: mutation, variables: {}, operationName: 'Rename' });
    });

    test('a mutation field holding a query, a subscription, bad syntax or no operation_name: 400 and nothing sent', async () => {
      const cases: Array<[Record<string, unknown>, string]> = [
        [{ mutation: '{ usersList { id } }' }, 'mutation'],
        [{ mutation: 'query Q { usersList { id } }' }, 'mutation'],
        [{ mutation: 'subscription S { usersList { id } }' }, 'mutation'],
        [{ mutation: 'mutation { deleteUser(id: "1") ' }, 'mutation'],
        [{ mutation: 'mutation A { deleteUser(id: "1") } mutation B { deleteUser(id: "2") }' }, 'operation_name'],
        [{ mutation: 'mutation A { deleteUser(id: "1") }', operation_name: 'B' }, 'operation_name'],
      ];
      for (const [fields, path] of cases) {
        const res = await nothingSent(server, () => execute('send', { operation: 'send', ...fields }));
        assert.deepEqual(issuePathSet(res), [path], JSON.stringify(fields));
      }
      const asQuery = await nothingSent(server, () => execute('send', { operation: 'send', mutation: '{ usersList { id } }' }));
      assert.match(assertError(asQuery, 400, 'validation_failed').message, /holds a query/);
      // And the other way round: a query field holding a mutation.
      const asMutation = await nothingSent(server, () =>
        execute('send', { operation: 'receive', query: 'mutation { deleteUser(id: "1") }' }),
      );
      assert.deepEqual(issuePathSet(asMutation), ['query']);
    });

    test('a mutation the server refuses is 502 graphql_errors with its errors at the top level', async () => {
      // Schema-aware checking would refuse it first (400 graphql_validation_failed): off, the upstream's own answer shows.
      assert.equal((await put('send-unchecked', { base_url: upstream.origin, validate_schema: false })).statusCode, 201);
      const res = await execute('send-unchecked', { operation: 'send', mutation: 'mutation { nope }' });
      const parsed = graphqlErrors(res, [
        { message: 'Cannot query field "nope" on type "Mutation".', locations: [{ line: 1, column: 12 }] },
      ]);
      assert.deepEqual(parsed.error.details, { upstream_status: 400, attempts: 1 });
    });
  });

  describe('receive', () => {
    const receive = (query: string, extra: Record<string, unknown> = {}) =>
      execute('gql', { operation: 'receive', query, ...extra });

    test('records from a connection’s edges are the nodes; total_size is its totalCount', async () => {
      const data = okData(await receive('{ users(first: 3) { edges { node { id name email } } totalCount } }'));
      assert.deepEqual(data, {
        message_count: 3,
        data: [
          { id: '1', name: 'User 1', email: 'user1@example.com' },
          { id: '2', name: 'User 2', email: 'user2@example.com' },
          { id: '3', name: 'User 3', email: null },
        ],
        total_size: 25,
      });
    });

    test('records from nodes; without totalCount, total_size is the number of records', async () => {
      assert.deepEqual(okData(await receive('{ users(first: 2) { nodes { id } } }')), {
        message_count: 2,
        data: ids(1, 2),
        total_size: 2,
      });
    });

    test('a plain list is the records', async () => {
      assert.deepEqual(okData(await receive('{ usersList { id } }')), { message_count: 25, data: ids(1, 25), total_size: 25 });
    });

    test('a single object is one record; null is none', async () => {
      assert.deepEqual(okData(await receive('{ user(id: "3") { id name email } }')), {
        message_count: 1,
        data: [{ id: '3', name: 'User 3', email: null }],
        total_size: 1,
      });
      assert.deepEqual(okData(await receive('{ user(id: "999") { id } }')), { message_count: 0, data: [], total_size: 0 });
    });

    test('records_path is a dot path into data', async () => {
      const query = '{ users(first: 2) { nodes { id } totalCount } }';
      assert.deepEqual(okData(await receive(query, { records_path: 'users.nodes' })), {
        message_count: 2,
        data: ids(1, 2),
        total_size: 2,
      });
      assert.deepEqual(okData(await receive(query, { records_path: 'users' })), {
        message_count: 2,
        data: ids(1, 2),
        total_size: 25,
      });
    });

    test('several root fields are one record: the data object', async () => {
      const data = okData(await receive('{ a: user(id: "1") { id } b: user(id: "2") { id } none: user(id: "0") { id } }'));
      assert.deepEqual(data, {
        message_count: 1,
        data: [{ a: { id: '1' }, b: { id: '2' }, none: null }],
        total_size: 1,
      });
    });

    test('variables and operation_name reach the server', async () => {
      const query = 'query One($id: ID!) { user(id: $id) { id } } query Two { user(id: "2") { id } }';
      const data = okData(await receive(query, { variables: { id: '7' }, operation_name: 'One' }));
      assert.deepEqual(data, { message_count: 1, data: [{ id: '7' }], total_size: 1 });
      assert.deepEqual(lastRequest(upstream).body, { query, variables: { id: '7' }, operationName: 'One' });
    });

    test('partial data: 200 with the errors at the top level beside data', async () => {
      const query = '{ usersList { id } broken }';
      const data = okData(await receive(query), [brokenError(query)]);
      assert.deepEqual(data, { message_count: 1, data: [{ usersList: ids(1, 25), broken: null }], total_size: 1 });
    });

    test('errors and null data: 502 graphql_errors, the errors at the top level, the first one’s message', async () => {
      const parsed = graphqlErrors(await receive('{ brokenRequired }'), [brokenRequiredError]);
      assert.equal(parsed.error.message, 'broken on purpose');
      // An answer is final: tried once (docs/resilience.md).
      assert.deepEqual(parsed.error.details, { attempts: 1 });
    });

    test('a records_path that does not match the answer is validation_failed on records_path', async () => {
      const res = await receive('{ users(first: 2) { nodes { id } } }', { records_path: 'users.edges' });
      assert.deepEqual(issuePathSet(res), ['records_path']);
      const empty = await nothingSent(upstream, () => receive('{ usersList { id } }', { records_path: 'a..b' }));
      assert.deepEqual(issuePathSet(empty), ['records_path']);
    });
  });

  describe('receive with Relay pagination', () => {
    let server: GraphqlServer;
    before(async () => {
      server = await startGraphqlServer();
      await put('pages', { base_url: server.url });
    });
    after(() => server.close());

    const variablesSent = (count: number) =>
      server.requests.slice(-count).map((request) => (request.body as { variables: Record<string, unknown> }).variables);

    test('paginate: true follows endCursor through $after to the last page', async () => {
      const data = okData(
        await execute('pages', { operation: 'receive', query: usersPage, variables: { first: 10 }, paginate: true }),
      );
      assert.deepEqual(data, { message_count: 25, data: ids(1, 25), total_size: 25, pages: 3 });
      assert.deepEqual(variablesSent(3), [
        { first: 10 },
        { first: 10, after: cursorOf('10') },
        { first: 10, after: cursorOf('20') },
      ]);
      for (const request of server.requests.slice(-3))
        assert.equal((request.body as { operationName?: string }).operationName, undefined);
    });

    test('paginate: {max_pages: 2} stops at the cap; total_size stays the totalCount', async () => {
      const before = server.requests.length;
      const data = okData(
        await execute('pages', { operation: 'receive', query: usersPage, variables: { first: 10 }, paginate: { max_pages: 2 } }),
      );
      assert.deepEqual(data, { message_count: 20, data: ids(1, 20), total_size: 25, pages: 2 });
      assert.equal(server.requests.length, before + 2);
    });

    test('paginate with records_path reads pageInfo from the connection at the path', async () => {
      const query =
        'query ($after: String) { viewer: users(first: 1) { totalCount } users(first: 9, after: $after) { edges { node { id } } pageInfo { hasNextPage endCursor } totalCount } }';
      const data = okData(await execute('pages', { operation: 'receive', query, records_path: 'users', paginate: true }));
      assert.deepEqual(data, { message_count: 25, data: ids(1, 25), total_size: 25, pages: 3 });
      assert.deepEqual(variablesSent(3), [{}, { after: cursorOf('9') }, { after: cursorOf('18') }]);
    });

    test('without paginate, only the first page', async () => {
      const data = okData(await execute('pages', { operation: 'receive', query: usersPage, variables: { first: 10 } }));
      assert.deepEqual(data, { message_count: 10, data: ids(1, 10), total_size: 25 });
    });

    test('cursor_variable names another variable, inside paginate or beside it', async () => {
      const query =
        'query ($cursor: String) { users(first: 12, after: $cursor) { nodes { id } pageInfo { hasNextPage endCursor } } }';
      for (const extra of [{ paginate: { cursor_variable: 'cursor' } }, { paginate: true, cursor_variable: 'cursor' }]) {
        const data = okData(await execute('pages', { operation: 'receive', query, ...extra }));
        assert.deepEqual(data, { message_count: 25, data: ids(1, 25), total_size: 25, pages: 3 });
        assert.deepEqual(variablesSent(3), [{}, { cursor: cursorOf('12') }, { cursor: cursorOf('24') }]);
      }
    });

    test('a query not declaring the cursor variable is 400 before any request', async () => {
      const query = '{ users(first: 10) { nodes { id } pageInfo { hasNextPage endCursor } } }';
      for (const extra of [{ paginate: true }, { paginate: { max_pages: 3 } }, { paginate: { cursor_variable: 'cursor' } }]) {
        const res = await nothingSent(server, () => execute('pages', { operation: 'receive', query, ...extra }));
        assert.deepEqual(issuePathSet(res), ['query']);
      }
      // Declaring $after is not enough when another cursor variable is named.
      const res = await nothingSent(server, () =>
        execute('pages', { operation: 'receive', query: usersPage, paginate: { cursor_variable: 'cursor' } }),
      );
      assert.deepEqual(issuePathSet(res), ['query']);
    });

    test('max_pages outside 1…100 or not an integer is 400', async () => {
      for (const maxPages of [0, 101, 2.5, '2']) {
        const res = await nothingSent(server, () =>
          execute('pages', { operation: 'receive', query: usersPage, paginate: { max_pages: maxPages } }),
        );
        assert.deepEqual(issuePathSet(res), ['paginate', 'paginate.max_pages'], String(maxPages));
      }
    });
  });

  describe('sync', () => {
    let server: GraphqlServer;
    before(async () => {
      server = await startGraphqlServer();
      await put('sync', { base_url: server.url });
    });
    after(() => server.close());

    const outbound = { mutation: 'mutation { deleteUser(id: "999") }' };
    const outboundData = { message_count: 1, data: { deleteUser: false }, response: { data: { deleteUser: false } } };
    const inbound = { query: '{ users(first: 2) { nodes { id } totalCount } }' };
    const inboundData = { message_count: 2, data: ids(1, 2), total_size: 25 };
    const sync = (fields: Record<string, unknown>) => execute('sync', { operation: 'sync', ...fields });

    test('both parts: outbound first, message_count is the sum', async () => {
      const before = server.requests.length;
      const data = okData(await sync({ outbound, inbound }));
      assert.deepEqual(data, { message_count: 3, outbound: outboundData, inbound: inboundData });
      assert.deepEqual(documentsSent(server.requests.slice(before)), [outbound.mutation, inbound.query]);
    });

    test('only outbound, only inbound; an empty or null part is skipped', async () => {
      assert.deepEqual(okData(await sync({ outbound })), { message_count: 1, outbound: outboundData, inbound: null });
      assert.deepEqual(okData(await sync({ inbound })), { message_count: 2, outbound: null, inbound: inboundData });
      for (const skipped of [{}, null]) {
        const before = server.requests.length;
        assert.deepEqual(okData(await sync({ outbound: skipped, inbound })), {
          message_count: 2,
          outbound: null,
          inbound: inboundData,
        });
        assert.equal(server.requests.length, before + 1);
        assert.deepEqual(okData(await sync({ outbound, inbound: skipped })), {
          message_count: 1,
          outbound: outboundData,
          inbound: null,
        });
      }
    });

    test('variables and records_path in the parts', async () => {
      const data = okData(
        await sync({
          outbound: {
            mutation: 'mutation ($id: ID!) { renameUser(id: $id, name: "Renamed") { id name } }',
            variables: { id: '2' },
          },
          inbound: { query: 'query ($id: ID!) { user(id: $id) { id name } }', variables: { id: '2' }, records_path: 'user' },
        }),
      );
      assert.deepEqual(data, {
        message_count: 2,
        outbound: {
          message_count: 1,
          data: { renameUser: { id: '2', name: 'Renamed' } },
          response: { data: { renameUser: { id: '2', name: 'Renamed' } } },
        },
        inbound: { message_count: 1, data: [{ id: '2', name: 'Renamed' }], total_size: 1 },
      });
      assert.deepEqual((lastRequest(server).body as { variables: unknown }).variables, { id: '2' });
    });

    test('partial data in a part: 200 with the part’s errors at the top level', async () => {
      const query = '{ user(id: "1") { id } broken }';
      const data = okData(await sync({ outbound, inbound: { query } }), [brokenError(query)]);
      assert.deepEqual(data, {
        message_count: 2,
        outbound: outboundData,
        inbound: { message_count: 1, data: [{ user: { id: '1' }, broken: null }], total_size: 1 },
      });
    });

    test('a records_path the inbound answer does not have: 400 on inbound.records_path, stage inbound', async () => {
      const before = server.requests.length;
      const res = await sync({ outbound, inbound: { ...inbound, records_path: 'users.edges' } });
      const error = assertError(res, 400, 'validation_failed');
      assert.deepEqual(error.details, {
        issues: [
          {
            path: 'inbound.records_path',
            message: 'the response has no "edges" under "users"; the path must follow the query\'s fields.',
          },
        ],
        stage: 'inbound',
        outbound: outboundData,
      });
      assert.equal(server.requests.length, before + 2);
    });

    test('both parts skipped, or no part at all: 400 validation_failed', async () => {
      for (const fields of [{}, { outbound: {}, inbound: {} }, { outbound: null, inbound: null }, { outbound: null }]) {
        const res = await nothingSent(server, () => sync(fields));
        assertError(res, 400, 'validation_failed');
      }
    });

    test('outbound fails: stage outbound, and inbound never runs', async () => {
      assert.equal((await put('sync-unchecked', { base_url: server.origin, validate_schema: false })).statusCode, 201);
      const before = server.requests.length;
      const res = await execute('sync-unchecked', { operation: 'sync', outbound: { mutation: 'mutation { nope }' }, inbound });
      const parsed = graphqlErrors(res, [
        { message: 'Cannot query field "nope" on type "Mutation".', locations: [{ line: 1, column: 12 }] },
      ]);
      assert.deepEqual(parsed.error.details, { upstream_status: 400, stage: 'outbound', attempts: 1 });
      assert.equal(server.requests.length, before + 1, 'only the outbound request was sent');
    });

    test('inbound fails after outbound succeeded: stage inbound, details.outbound holds the outbound result', async () => {
      const before = server.requests.length;
      const parsed = graphqlErrors(await sync({ outbound, inbound: { query: '{ brokenRequired }' } }), [brokenRequiredError]);
      assert.deepEqual(parsed.error.details, { stage: 'inbound', outbound: outboundData, attempts: 1 });
      assert.equal(server.requests.length, before + 2);
    });

    test('a bad inbound document is 400 before the outbound is sent', async () => {
      const res = await nothingSent(server, () => sync({ outbound, inbound: { query: '{ users { ' } }));
      assert.deepEqual(issuePathSet(res), ['inbound.query']);
      const both = await nothingSent(server, () =>
        sync({ outbound: { mutation: '{ usersList { id } }' }, inbound: { query: 'mutation { nope }', extra: 1 } }),
      );
      assert.deepEqual(issuePathSet(both), ['inbound.extra', 'outbound.mutation']);
    });

    test('a part that is not an object, or an unknown field, is 400', async () => {
      for (const fields of [{ outbound: 'x' }, { inbound: [] }, { outbound, elsewhere: {} }]) {
        assertError(await nothingSent(server, () => sync(fields)), 400, 'validation_failed');
      }
    });
  });

  describe('batch', () => {
    let server: GraphqlServer;
    before(async () => {
      server = await startGraphqlServer();
      await put('batch', { base_url: server.url });
    });
    after(() => server.close());

    const batch = (fields: Record<string, unknown>) => execute('batch', { operation: 'batch', ...fields });

    test('operation, type, the default (receive), and data wrapping: results in order, counts add up', async () => {
      const partialQuery = '{ user(id: "4") { id } broken }';
      const before = server.requests.length;
      const data = okData(
        await batch({
          operations: [
            { operation: 'receive', query: '{ user(id: "1") { id } }' },
            { type: 'send', mutation: 'mutation { deleteUser(id: "999") }' },
            { query: '{ users(first: 3) { nodes { id } totalCount } }' },
            { operation: 'receive', data: { query: '{ user(id: "2") { id } }' }, query: '{ user(id: "3") { id } }' },
            { type: 'receive', data: { query: partialQuery } },
            { operation: 'send', data: { mutation: 'mutation { renameUser(id: "999", name: "x") { id } }' } },
          ],
        }),
      );
      assert.deepEqual(data, {
        message_count: 1 + 1 + 3 + 1 + 1 + 0,
        succeeded: 6,
        failed: 0,
        skipped: 0,
        results: [
          { index: 0, operation: 'receive', success: true, data: { message_count: 1, data: [{ id: '1' }], total_size: 1 } },
          {
            index: 1,
            operation: 'send',
            success: true,
            data: { message_count: 1, data: { deleteUser: false }, response: { data: { deleteUser: false } } },
          },
          { index: 2, operation: 'receive', success: true, data: { message_count: 3, data: ids(1, 3), total_size: 25 } },
          { index: 3, operation: 'receive', success: true, data: { message_count: 1, data: [{ id: '2' }], total_size: 1 } },
          {
            index: 4,
            operation: 'receive',
            success: true,
            data: { message_count: 1, data: [{ user: { id: '4' }, broken: null }], total_size: 1 },
            errors: [brokenError(partialQuery)],
          },
          {
            index: 5,
            operation: 'send',
            success: true,
            data: { message_count: 0, data: { renameUser: null }, response: { data: { renameUser: null } } },
          },
        ],
      });
      // Sequential, in order; the entry with `data` sent its data's query, not the top-level one.
      assert.deepEqual(documentsSent(server.requests.slice(before)), [
        '{ user(id: "1") { id } }',
        'mutation { deleteUser(id: "999") }',
        '{ users(first: 3) { nodes { id } totalCount } }',
        '{ user(id: "2") { id } }',
        partialQuery,
        'mutation { renameUser(id: "999", name: "x") { id } }',
      ]);
    });

    test('a failing entry fails alone: 200, success true, its own error; message_count sums the successes', async () => {
      const data = okData(
        await batch({
          operations: [
            { query: '{ users(first: 2) { nodes { id } } }' },
            { query: '{ brokenRequired }' },
            { query: '{ usersList { id ' },
            { operation: 'send', mutation: '{ usersList { id } }' },
            { query: '{ user(id: "5") { id } }', unknown: true },
            { query: '{ user(id: "6") { id } }' },
          ],
        }),
      );
      assert.equal(data.message_count, 3);
      assert.equal(data.succeeded, 2);
      assert.equal(data.failed, 4);
      assert.equal(data.skipped, 0);
      assert.equal(data.results.length, 6);
      assert.deepEqual(data.results[0], {
        index: 0,
        operation: 'receive',
        success: true,
        data: { message_count: 2, data: ids(1, 2), total_size: 2 },
      });
      assert.deepEqual(data.results[1], {
        index: 1,
        operation: 'receive',
        success: false,
        error: { code: 'graphql_errors', message: 'broken on purpose' },
        errors: [brokenRequiredError],
      });
      // A bad document fails as that entry, with validation_failed, and is never sent.
      for (const [index, operation, path] of [
        [2, 'receive', 'operations.2.query'],
        [3, 'send', 'operations.3.mutation'],
        [4, 'receive', 'operations.4.unknown'],
      ] as const) {
        const result = data.results[index];
        assert.deepEqual(Object.keys(result).sort(), ['error', 'index', 'operation', 'success']);
        assert.equal(result.index, index);
        assert.equal(result.operation, operation);
        assert.equal(result.success, false);
        assert.equal(result.error.code, 'validation_failed');
        assert.deepEqual(
          result.error.details.issues.map((issue: { path: string }) => issue.path),
          [path],
        );
      }
      assert.deepEqual(data.results[5], {
        index: 5,
        operation: 'receive',
        success: true,
        data: { message_count: 1, data: [{ id: '6' }], total_size: 1 },
      });
    });

    test('issue paths of an entry with data point inside data', async () => {
      const data = okData(await batch({ operations: [{ operation: 'send', data: { mutation: '{ usersList { id } }' } }] }));
      assert.deepEqual(
        data.results[0].error.details.issues.map((issue: { path: string }) => issue.path),
        ['operations.0.data.mutation'],
      );
    });

    test('a records_path the answer does not have fails the entry, with the path inside the request', async () => {
      const query = '{ users(first: 1) { nodes { id } } }';
      const data = okData(
        await batch({
          operations: [
            { query, records_path: 'users.edges' },
            { data: { query, records_path: 'users.nodes' } },
            { data: { query, records_path: 'users.edges' } },
          ],
        }),
      );
      const paths = data.results.map(
        (result: { error?: { details: { issues: Array<{ path: string }> } } }) => result.error?.details.issues[0].path,
      );
      assert.deepEqual(paths, ['operations.0.records_path', undefined, 'operations.2.data.records_path']);
      assert.deepEqual([data.succeeded, data.failed, data.message_count], [1, 2, 1]);
    });

    test('stop_on_error: the entries after the first failure are skipped', async () => {
      const before = server.requests.length;
      const data = okData(
        await batch({
          stop_on_error: true,
          operations: [
            { query: '{ user(id: "1") { id } }' },
            { query: '{ brokenRequired }' },
            { query: '{ user(id: "2") { id } }' },
            { operation: 'send', mutation: 'mutation { deleteUser(id: "999") }' },
          ],
        }),
      );
      const skipped = { code: 'skipped', message: 'Skipped: an earlier entry failed and stop_on_error is set.' };
      assert.deepEqual(data, {
        message_count: 1,
        succeeded: 1,
        failed: 1,
        skipped: 2,
        results: [
          { index: 0, operation: 'receive', success: true, data: { message_count: 1, data: [{ id: '1' }], total_size: 1 } },
          {
            index: 1,
            operation: 'receive',
            success: false,
            error: { code: 'graphql_errors', message: 'broken on purpose' },
            errors: [brokenRequiredError],
          },
          { index: 2, operation: 'receive', success: false, error: skipped },
          { index: 3, operation: 'send', success: false, error: skipped },
        ],
      });
      assert.equal(server.requests.length, before + 2, 'skipped entries are never sent');
    });

    test('without stop_on_error (false), every entry runs', async () => {
      const data = okData(
        await batch({
          stop_on_error: false,
          operations: [{ query: '{ brokenRequired }' }, { query: '{ user(id: "2") { id } }' }],
        }),
      );
      assert.deepEqual([data.succeeded, data.failed, data.skipped, data.message_count], [1, 1, 0, 1]);
    });

    test('0 or 101 entries, an entry test/sync/batch, a bad stop_on_error or unknown field: 400, nothing sent', async () => {
      const entry = { query: '{ user(id: "1") { id } }' };
      const cases: Array<[Record<string, unknown>, string[]]> = [
        [{ operations: [] }, ['operations']],
        [{ operations: Array.from({ length: 101 }, () => entry) }, ['operations']],
        [{ operations: [entry, { operation: 'test' }] }, ['operations.1.operation']],
        [{ operations: [{ type: 'sync', ...entry }] }, ['operations.0.type']],
        [{ operations: [{ operation: 'batch', ...entry }] }, ['operations.0.operation']],
        [{ operations: [entry], stop_on_error: 'yes' }, ['stop_on_error']],
        [{ operations: [entry], extra: 1 }, ['extra']],
        [{ operations: [entry, 'x'] }, ['operations.1']],
        [{ operations: [{ data: 'x' }] }, ['operations.0.data']],
        [{}, ['operations']],
      ];
      for (const [fields, paths] of cases) {
        const res = await nothingSent(server, () => batch(fields));
        assert.deepEqual(issuePathSet(res), paths, JSON.stringify(fields).slice(0, 100));
      }
    });

    test('100 entries are accepted', async () => {
      const data = okData(
        await batch({ operations: Array.from({ length: 100 }, () => ({ query: '{ user(id: "1") { id } }' })) }),
      );
      assert.deepEqual([data.succeeded, data.failed, data.skipped, data.message_count], [100, 0, 0, 100]);
    });
  });

  describe('test', () => {
    test('{message, details: {api_base_url, query_type, latency_ms}}, introspection sent', async () => {
      const data = okData(await execute('gql', { operation: 'test' }));
      assert.deepEqual(Object.keys(data).sort(), ['details', 'message']);
      assert.equal(data.message, 'GraphQL connection test succeeded');
      assert.deepEqual(Object.keys(data.details).sort(), ['api_base_url', 'circuit', 'latency_ms', 'query_type', 'schema']);
      assert.equal(data.details.circuit, 'closed', 'the circuit breaker, as test reports it (docs/resilience.md)');
      assert.equal(data.details.api_base_url, `${upstream.origin}/graphql`);
      assert.equal(data.details.query_type, 'Query');
      assert.ok(Number.isInteger(data.details.latency_ms) && data.details.latency_ms >= 0, String(data.details.latency_ms));
      assert.deepEqual(lastRequest(upstream).body, { query: getIntrospectionQuery(), variables: {} });
      const { fetched_at: fetchedAt, ...schema } = data.details.schema;
      // types: the server's 6 object types, the 4 scalars it uses and graphql-js's 8 introspection types.
      assert.deepEqual(schema, { available: true, query_type: 'Query', mutation_type: 'Mutation', types: 18 });
      // Read during this file's run: not before it began, not after now.
      assert.ok(Date.parse(fetchedAt) >= fileStarted && Date.parse(fetchedAt) <= Date.now(), fetchedAt);
    });

    test('api_base_url is the resolved URL without the credentials of a base_url stored before they were refused', async () => {
      // The API refuses user information in URLs now (docs/security.md#secrets-follow-their-origin); a row written before that is seeded directly.
      const withCredentials = upstream.origin.replace('http://', 'http://someone:hunter2-pw@');
      const config = { base_url: `${withCredentials}/api?x=1` };
      await saveIntegration(
        h.storage.db,
        'acme',
        'creds',
        { name: 'creds', connector: 'graphql-1.0.0', config, secrets: {} },
        undefined,
      );
      const res = await execute('creds', { operation: 'test' });
      const data = okData(res);
      assert.equal(data.details.api_base_url, `${upstream.origin}/api/graphql?x=1`);
      assert.ok(!res.body.includes('hunter2-pw'));
      assert.ok(!res.body.includes('someone'));
      assert.equal(lastRequest(upstream).url, '/api/graphql?x=1');
    });

    test('test takes no fields', async () => {
      const res = await nothingSent(upstream, () => execute('gql', { operation: 'test', query: '{ usersList { id } }' }));
      assert.deepEqual(issuePathSet(res), ['query']);
    });
  });

  describe('transport', () => {
    let server: GraphqlServer;
    before(async () => {
      server = await startGraphqlServer();
    });
    after(() => server.close());

    test('headers and body as the server saw them; Authorization only while a token is set', async () => {
      await put('headers', { base_url: server.url, token: 'tok-Abc123' });
      const query = 'query Q($id: ID!) { user(id: $id) { id } }';
      okData(await execute('headers', { operation: 'receive', query, variables: { id: '1' }, operation_name: 'Q' }));
      const seen = lastRequest(server);
      assert.equal(seen.method, 'POST');
      assert.equal(seen.url, '/graphql');
      assert.equal(seen.headers['content-type'], 'application/json');
      assert.equal(seen.headers.accept, 'application/graphql-response+json, application/json');
      assert.equal(seen.headers['accept-encoding'], 'gzip');
      assert.equal(seen.headers.authorization, 'Bearer tok-Abc123');
      assert.deepEqual(seen.body, { query, variables: { id: '1' }, operationName: 'Q' });

      const cleared = await patch('headers', { token: null });
      assert.equal(body(cleared).data.config.token_set, false);
      okData(await execute('headers', { operation: 'test' }));
      const after = lastRequest(server);
      assert.equal(after.headers.authorization, undefined);
      assert.equal(after.headers['content-type'], 'application/json');
      assert.equal(after.headers['accept-encoding'], 'gzip');
    });

    test('URL rule: /graphql appended to a path without it (query string kept); a path containing it used as given', async () => {
      const cases: Array<[string, string]> = [
        [server.origin, '/graphql'],
        [`${server.origin}/`, '/graphql'],
        [`${server.origin}/api`, '/api/graphql'],
        [`${server.origin}/api/`, '/api/graphql'],
        [`${server.origin}/v2/graphql/x`, '/v2/graphql/x'],
        [`${server.origin}/api?x=1`, '/api/graphql?x=1'],
        [`${server.origin}/graphql?x=1`, '/graphql?x=1'],
      ];
      for (const [baseUrl, path] of cases) {
        assert.equal((await put('url-rule', { base_url: baseUrl })).statusCode < 300, true);
        const data = okData(await execute('url-rule', { operation: 'receive', query: '{ user(id: "1") { id } }' }));
        assert.deepEqual(data, { message_count: 1, data: [{ id: '1' }], total_size: 1 }, baseUrl);
        assert.equal(lastRequest(server).url, path, baseUrl);
        assert.equal(okData(await execute('url-rule', { operation: 'test' })).details.api_base_url, `${server.origin}${path}`);
      }
    });

    test('a gzip upstream (Content-Encoding: gzip) is read transparently', async () => {
      const gzipped = await startGraphqlServer({ gzip: true });
      try {
        await put('gzip', { base_url: gzipped.origin });
        assert.deepEqual(okData(await execute('gzip', { operation: 'receive', query: '{ users(first: 2) { nodes { id } } }' })), {
          message_count: 2,
          data: ids(1, 2),
          total_size: 2,
        });
        assert.equal(okData(await execute('gzip', { operation: 'test' })).details.query_type, 'Query');
        const query = '{ usersList { id } broken }';
        okData(await execute('gzip', { operation: 'receive', query }), [brokenError(query)]);
        graphqlErrors(await execute('gzip', { operation: 'receive', query: '{ brokenRequired }' }), [brokenRequiredError]);
        assert.equal(lastRequest(gzipped).headers['accept-encoding'], 'gzip');
      } finally {
        await gzipped.close();
      }
    });

    test('a change to the integration is used by the very next execute', async () => {
      const other = await startGraphqlServer({ userCount: 2 });
      try {
        await put('moving', { base_url: server.origin });
        const query = '{ usersList { id } }';
        assert.equal(okData(await execute('moving', { operation: 'receive', query })).message_count, 25);
        const first = server.requests.length;
        await patch('moving', { base_url: `${other.origin}/api` });
        assert.deepEqual(okData(await execute('moving', { operation: 'receive', query })), {
          message_count: 2,
          data: ids(1, 2),
          total_size: 2,
        });
        assert.equal(server.requests.length, first, 'the old server is not asked again');
        assert.equal(lastRequest(other).url, '/api/graphql');
        await patch('moving', { base_url: null });
        assertError(await execute('moving', { operation: 'receive', query }), 422, 'integration_misconfigured');
      } finally {
        await other.close();
      }
    });
  });

  describe('token', () => {
    let server: GraphqlServer;
    const token = 's3cret-Tok3n-value';
    before(async () => {
      server = await startGraphqlServer({ token });
    });
    after(() => server.close());

    test('no token: 502 upstream_http_error pointing at the token’s permissions, upstream_status 401', async () => {
      await put('locked-none', { base_url: server.origin });
      const res = await execute('locked-none', { operation: 'receive', query: '{ user(id: "1") { id } }' });
      const error = assertError(res, 502, 'upstream_http_error');
      assert.match(error.message, /token/);
      assert.match(error.message, /permission/);
      assert.deepEqual(error.details, { upstream_status: 401, body_excerpt: '{"message":"Bad credentials"}', attempts: 1 });
      assert.equal(lastRequest(server).headers.authorization, undefined);

      await put('locked-wrong', { base_url: server.origin, token: 'not-it' });
      const wrong = await execute('locked-wrong', { operation: 'test' });
      assert.equal(assertError(wrong, 502, 'upstream_http_error').details?.upstream_status, 401);
      assert.equal(lastRequest(server).headers.authorization, 'Bearer not-it');
    });

    test('the right token: 200; the token never appears in any response body', async () => {
      const bodies: string[] = [];
      const created = await put('locked', { base_url: server.origin, token });
      bodies.push(created.body);
      assert.equal(body(created).data.config.token_set, true);
      const operations = [
        { operation: 'receive', query: '{ user(id: "1") { id } }' },
        { operation: 'send', mutation: 'mutation { deleteUser(id: "999") }' },
        { operation: 'sync', inbound: { query: '{ brokenRequired }' } },
        { operation: 'batch', operations: [{ query: '{ user(id: "2") { id } }' }] },
        { operation: 'test' },
      ];
      const statuses: number[] = [];
      for (const payload of operations) {
        const res = await execute('locked', payload);
        statuses.push(res.statusCode);
        bodies.push(res.body);
        assert.equal(lastRequest(server).headers.authorization, `Bearer ${token}`);
      }
      assert.deepEqual(statuses, [200, 200, 502, 200, 200]);
      bodies.push((await h.call(acme, { method: 'GET', url: '/api/v1/integrations/locked' })).body);
      bodies.push((await h.call(acme, { method: 'GET', url: '/api/v1/executions?integration_id=locked' })).body);
      for (const text of bodies) assert.ok(!text.includes(token), text);
    });
  });

  describe('refusals', () => {
    test('no base_url: 422 integration_misconfigured for every operation, nothing sent', async () => {
      await put('no-url', {});
      const payloads = [
        { operation: 'test' },
        { operation: 'send', mutation: 'mutation { deleteUser(id: "1") }' },
        { operation: 'receive', query: '{ usersList { id } }' },
        { operation: 'sync', inbound: { query: '{ usersList { id } }' } },
        { operation: 'batch', operations: [{ query: '{ usersList { id } }' }] },
      ];
      for (const payload of payloads) {
        const res = await nothingSent(upstream, () => execute('no-url', payload));
        const error = assertError(res, 422, 'integration_misconfigured');
        // `test` reports the circuit breaker, failing or not.
        const circuit = payload.operation === 'test' ? { circuit: 'closed' } : {};
        assert.deepEqual(error.details, { missing: ['config.base_url'], ...circuit });
        assert.match(error.message, /base_url/);
      }
    });

    test('an operation outside the five is validation_failed, not unsupported_operation', async () => {
      for (const operation of ['delete', 'Send', '', 7, null]) {
        const res = await nothingSent(upstream, () => execute('gql', { operation, query: '{ usersList { id } }' }));
        assert.deepEqual(issuePathSet(res), ['operation'], String(operation));
      }
      const missing = await execute('gql', { query: '{ usersList { id } }' });
      assert.deepEqual(issuePathSet(missing), ['operation']);
    });

    test('every one of the five is offered: none answers unsupported_operation', async () => {
      const payloads = [
        { operation: 'send', mutation: 'mutation { deleteUser(id: "999") }' },
        { operation: 'receive', query: '{ user(id: "1") { id } }' },
        { operation: 'sync', inbound: { query: '{ user(id: "1") { id } }' } },
        { operation: 'batch', operations: [{ query: '{ user(id: "1") { id } }' }] },
        { operation: 'test' },
      ];
      for (const payload of payloads) assert.equal((await execute('gql', payload)).statusCode, 200, payload.operation);
    });

    test('unknown request fields, missing documents and typed fields: 400 listing every problem', async () => {
      const cases: Array<[Record<string, unknown>, string[]]> = [
        [{ operation: 'receive', query: '{ usersList { id } }', mutation: 'mutation { a }' }, ['mutation']],
        [{ operation: 'receive', query: '{ usersList { id } }', foo: 1, bar: 2 }, ['bar', 'foo']],
        [{ operation: 'send', mutation: 'mutation { deleteUser(id: "1") }', records_path: 'a' }, ['records_path']],
        [{ operation: 'receive' }, ['query']],
        [{ operation: 'send' }, ['mutation']],
        [{ operation: 'receive', query: 5 }, ['query']],
        [{ operation: 'receive', query: '' }, ['query']],
        [{ operation: 'receive', query: '{ usersList { id } }', variables: [] }, ['variables']],
        [{ operation: 'receive', query: '{ usersList { id } }', variables: 'id=1' }, ['variables']],
        [{ operation: 'send', mutation: 'mutation { deleteUser(id: "1") }', variables: null }, ['variables']],
        [{ operation: 'receive', query: '{ usersList { id } }', operation_name: 3 }, ['operation_name']],
        [{ operation: 'receive', query: '{ usersList { id } }', records_path: 1, paginate: 'yes' }, ['paginate', 'records_path']],
      ];
      for (const [payload, paths] of cases) {
        const res = await nothingSent(upstream, () => execute('gql', payload));
        assert.deepEqual(issuePathSet(res), paths, JSON.stringify(payload));
      }
    });

    test('another tenant executing this tenant’s integration id: 404 not_found, nothing sent', async () => {
      const res = await nothingSent(upstream, () => execute('gql', { operation: 'test' }, globex));
      assertError(res, 404, 'not_found');
      const unknown = await execute('nope', { operation: 'test' });
      assertError(unknown, 404, 'not_found');
      // The other tenant's own integration of the same id is its own.
      const theirs = await startGraphqlServer({ userCount: 1 });
      try {
        await put('gql', { base_url: theirs.origin }, globex);
        const before = upstream.requests.length;
        assert.deepEqual(okData(await execute('gql', { operation: 'receive', query: '{ usersList { id } }' }, globex)), {
          message_count: 1,
          data: ids(1, 1),
          total_size: 1,
        });
        assert.equal(upstream.requests.length, before);
        assert.deepEqual(documentsSent(theirs.requests), ['{ usersList { id } }'], 'and the introspection before it');
      } finally {
        await theirs.close();
      }
    });

    test('a key without integrations.execute: 403 insufficient_scope, nothing sent', async () => {
      for (const scopes of [['integrations.read'], ['integrations.write', 'executions.read']]) {
        const reader = { key: (await h.key('acme', scopes)).key, tenant: 'acme' };
        const res = await nothingSent(upstream, () => execute('gql', { operation: 'test' }, reader));
        const error = assertError(res, 403, 'insufficient_scope');
        assert.equal(error.details?.required_scope, 'integrations.execute');
        assert.deepEqual(error.details?.granted_scopes, scopes);
      }
      const executor = { key: (await h.key('acme', ['integrations.execute'])).key, tenant: 'acme' };
      okData(await execute('gql', { operation: 'test' }, executor));
    });
  });

  describe('the executions log', () => {
    test('every execute call is recorded with status, http_status, error_code and message_count', async () => {
      await put('logged', { base_url: upstream.origin });
      okData(await execute('logged', { operation: 'receive', query: '{ users(first: 4) { nodes { id } } }' }));
      graphqlErrors(await execute('logged', { operation: 'receive', query: '{ brokenRequired }' }), [brokenRequiredError]);
      assertError(await execute('logged', { operation: 'send', mutation: '{ a }' }), 400, 'validation_failed');
      const res = await h.call(acme, { method: 'GET', url: '/api/v1/executions?integration_id=logged' });
      assert.equal(res.statusCode, 200, res.body);
      const items = body(res).data as Array<Record<string, unknown>>;
      const summary = items
        .map((item) => [item.operation, item.status, item.http_status, item.error_code, item.message_count])
        .reverse();
      assert.deepEqual(summary, [
        ['receive', 'succeeded', 200, null, 4],
        ['receive', 'failed', 502, 'graphql_errors', 0],
        ['send', 'failed', 400, 'validation_failed', 0],
      ]);
      for (const item of items) {
        assert.equal(item.integration_id, 'logged');
        assert.equal(item.connector, 'graphql-1.0.0');
      }
    });
  });
});
