import assert from 'node:assert/strict';
import { request } from 'node:http';
import { after, before, describe, test } from 'node:test';
import { gunzipSync } from 'node:zlib';
import { parseOperation } from '../../src/connectors/graphql/document.ts';
import { paginate } from '../../src/connectors/graphql/pagination.ts';
import { pageOfAnswer } from '../../src/connectors/graphql/records.ts';
import { readGraphqlResponse } from '../../src/connectors/graphql/response.ts';
import { resolveGraphqlUrl } from '../../src/connectors/graphql/url.ts';
import { type GraphqlServer, startGraphqlServer } from '../support/graphql-server.ts';

interface GraphqlBody {
  data?: Record<string, unknown> | null;
  errors?: Array<{ message: string; path?: string[] }>;
}

async function post(url: string, body: unknown, headers: Record<string, string> = {}) {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json, application/json', ...headers },
    body: JSON.stringify(body),
  });
  return { status: response.status, headers: response.headers, body: (await response.json()) as GraphqlBody };
}

const usersPage =
  'query Users($first: Int, $after: String) { users(first: $first, after: $after) { edges { cursor node { id name email } } nodes { id } pageInfo { hasNextPage endCursor } totalCount } }';

describe('the GraphQL test server', () => {
  let server: GraphqlServer;
  before(async () => {
    server = await startGraphqlServer();
  });
  after(() => server.close());

  test('answers introspection: the query type is Query', async () => {
    const { status, headers, body } = await post(server.url, { query: '{ __schema { queryType { name } } }' });
    assert.equal(status, 200);
    assert.match(headers.get('content-type') ?? '', /^application\/graphql-response\+json/);
    assert.deepEqual(body, { data: { __schema: { queryType: { name: 'Query' } } } });
  });

  test('pages through 25 users with Relay cursors', async () => {
    const ids: string[] = [];
    let afterCursor: string | null = null;
    for (let page = 1; page <= 3; page++) {
      const { body } = await post(server.url, {
        query: usersPage,
        variables: { first: 10, after: afterCursor },
        operationName: 'Users',
      });
      const users = body.data?.users as {
        edges: Array<{ cursor: string; node: { id: string; name: string; email: string | null } }>;
        nodes: Array<{ id: string }>;
        pageInfo: { hasNextPage: boolean; endCursor: string | null };
        totalCount: number;
      };
      assert.equal(users.totalCount, 25);
      assert.deepEqual(
        users.nodes.map((node) => node.id),
        users.edges.map((edge) => edge.node.id),
      );
      ids.push(...users.edges.map((edge) => edge.node.id));
      assert.equal(users.pageInfo.hasNextPage, page < 3);
      afterCursor = users.pageInfo.endCursor;
    }
    assert.deepEqual(
      ids,
      Array.from({ length: 25 }, (_, i) => String(i + 1)),
    );
    const recorded = server.requests.at(-1)?.body as { query: string; variables: Record<string, unknown>; operationName: string };
    assert.equal(recorded.operationName, 'Users');
    assert.equal(recorded.variables.first, 10);
    assert.equal(typeof recorded.variables.after, 'string');
  });

  test('user, usersList', async () => {
    const { body } = await post(server.url, {
      query: '{ user(id: "3") { id name email } missing: user(id: "999") { id } usersList { id } }',
    });
    assert.deepEqual(body.data?.user, { id: '3', name: 'User 3', email: null });
    assert.equal(body.data?.missing, null);
    assert.equal((body.data?.usersList as unknown[] | undefined)?.length, 25);
  });

  test('mutations create and delete users', async () => {
    const created = await post(server.url, {
      query: 'mutation Create($name: String!, $email: String) { createUser(name: $name, email: $email) { id name email } }',
      variables: { name: 'Ada', email: 'ada@example.com' },
    });
    const user = created.body.data?.createUser as { id: string; name: string; email: string };
    assert.deepEqual({ name: user.name, email: user.email }, { name: 'Ada', email: 'ada@example.com' });
    const fetched = await post(server.url, { query: `{ user(id: "${user.id}") { name } }` });
    assert.deepEqual(fetched.body.data?.user, { name: 'Ada' });
    const deleted = await post(server.url, {
      query: `mutation { first: deleteUser(id: "${user.id}") again: deleteUser(id: "${user.id}") }`,
    });
    assert.deepEqual(deleted.body.data, { first: true, again: false });
  });

  test('the broken field gives partial data with errors', async () => {
    const { status, body } = await post(server.url, { query: '{ broken user(id: "1") { id } }' });
    assert.equal(status, 200);
    assert.deepEqual(body.data, { broken: null, user: { id: '1' } });
    assert.equal(body.errors?.[0].message, 'broken on purpose');
    assert.deepEqual(body.errors?.[0].path, ['broken']);
  });

  test('brokenRequired nulls the whole data', async () => {
    const { status, body } = await post(server.url, { query: '{ brokenRequired user(id: "1") { id } }' });
    assert.equal(status, 200);
    assert.equal(body.data, null);
    assert.equal(body.errors?.[0].message, 'broken on purpose');
  });

  test('an invalid document is a 400 with GraphQL errors (graphql-response+json), 200 for plain JSON', async () => {
    const strict = await post(server.url, { query: '{ nope }' });
    assert.equal(strict.status, 400);
    assert.match(strict.body.errors?.[0].message ?? '', /Cannot query field "nope"/);
    const legacy = await post(server.url, { query: '{ nope }' }, { accept: 'application/json' });
    assert.equal(legacy.status, 200);
    assert.ok(legacy.body.errors?.length);
  });

  test('serves any path containing /graphql, and records every request with its headers', async () => {
    const before = server.requests.length;
    const { body } = await post(
      `${server.origin}/v2/graphql/x?tenant=1`,
      { query: '{ usersList { id } }' },
      { authorization: 'Bearer abc' },
    );
    assert.ok(Array.isArray(body.data?.usersList));
    const notGraphql = await fetch(`${server.origin}/api`, { method: 'POST', body: '{}' });
    assert.equal(notGraphql.status, 404);
    assert.equal(server.requests.length, before + 2);
    const recorded = server.requests[before];
    assert.equal(recorded.method, 'POST');
    assert.equal(recorded.url, '/v2/graphql/x?tenant=1');
    assert.equal(recorded.headers.authorization, 'Bearer abc');
    assert.equal(recorded.headers['content-type'], 'application/json');
    assert.equal(recorded.headers.accept, 'application/graphql-response+json, application/json');
    assert.deepEqual(recorded.body, { query: '{ usersList { id } }' });
  });
});

describe('test server options', () => {
  test('seeded data resets per instance', async () => {
    const first = await startGraphqlServer();
    await post(first.url, { query: 'mutation { deleteUser(id: "1") }' });
    await post(first.url, { query: 'mutation { createUser(name: "x") { id } }' });
    const second = await startGraphqlServer();
    try {
      const { body } = await post(second.url, { query: '{ users { totalCount } user(id: "1") { id } }' });
      assert.deepEqual(body.data, { users: { totalCount: 25 }, user: { id: '1' } });
    } finally {
      await first.close();
      await second.close();
    }
  });

  test('with a token, requests without the right Bearer token get a 401', async () => {
    const server = await startGraphqlServer({ token: 's3cret', userCount: 3 });
    try {
      const refused = await post(server.url, { query: '{ usersList { id } }' });
      assert.equal(refused.status, 401);
      assert.deepEqual(refused.body, { message: 'Bad credentials' });
      assert.equal((await post(server.url, { query: '{ usersList { id } }' }, { authorization: 'Bearer wrong' })).status, 401);
      const allowed = await post(server.url, { query: '{ usersList { id } }' }, { authorization: 'Bearer s3cret' });
      assert.equal(allowed.status, 200);
      assert.equal((allowed.body.data?.usersList as unknown[] | undefined)?.length, 3);
    } finally {
      await server.close();
    }
  });

  test('with gzip, answers are gzipped', async () => {
    const server = await startGraphqlServer({ gzip: true });
    try {
      const raw = await new Promise<{ encoding: string | undefined; body: Buffer }>((resolve, reject) => {
        const req = request(server.url, { method: 'POST', headers: { 'content-type': 'application/json' } }, (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (chunk: Buffer) => chunks.push(chunk));
          res.on('end', () => resolve({ encoding: res.headers['content-encoding'], body: Buffer.concat(chunks) }));
        });
        req.on('error', reject);
        req.end(JSON.stringify({ query: '{ user(id: "2") { name } }' }));
      });
      assert.equal(raw.encoding, 'gzip');
      assert.deepEqual(raw.body.subarray(0, 2), Buffer.from([0x1f, 0x8b]));
      assert.deepEqual(JSON.parse(gunzipSync(raw.body).toString()), { data: { user: { name: 'User 2' } } });
    } finally {
      await server.close();
    }
  });
});

describe('the pure parts against the real server', () => {
  let server: GraphqlServer;
  before(async () => {
    server = await startGraphqlServer({ userCount: 23 });
  });
  after(() => server.close());

  async function answer(url: string, body: unknown) {
    const response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json, application/json' },
      body: JSON.stringify(body),
    });
    return readGraphqlResponse(response.status, Object.fromEntries(response.headers), Buffer.from(await response.arrayBuffer()));
  }

  test('resolve the URL, parse the document, paginate, read every answer', async () => {
    const url = resolveGraphqlUrl(`${server.origin}/api?x=1`);
    assert.equal(url, `${server.origin}/api/graphql?x=1`);
    const query =
      'query Page($after: String) { users(first: 5, after: $after) { nodes { id } pageInfo { hasNextPage endCursor } totalCount } broken }';
    assert.ok(parseOperation({ document: query, field: 'query' }).variableNames.includes('after'));
    const result = await paginate(
      async (cursor) => pageOfAnswer(await answer(url, { query, variables: { after: cursor } }), 'users'),
      { maxPages: 10 },
    );
    assert.equal(result.pages, 5);
    assert.equal(result.stoppedBy, 'last_page');
    assert.equal(result.totalSize, 23);
    assert.deepEqual(
      (result.records as unknown[]).map((record) => (record as { id: string }).id),
      Array.from({ length: 23 }, (_, i) => String(i + 1)),
    );
    assert.equal(result.errors.length, 5, 'the broken field errs once per page');
  });

  test('a 400 with GraphQL errors and a null-data answer are graphql_errors', async () => {
    await assert.rejects(answer(server.url, { query: '{ nope }' }), {
      code: 'graphql_errors',
      message: /Cannot query field "nope"/,
    });
    await assert.rejects(answer(server.url, { query: '{ brokenRequired }' }), {
      code: 'graphql_errors',
      message: 'broken on purpose',
    });
  });
});
