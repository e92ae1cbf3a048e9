import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { gzipSync } from 'node:zlib';
import { hasVariable, maxDocumentBytes, maxDocumentTokens, parseOperation } from '../../src/connectors/graphql/document.ts';
import { assertCursorVariableDeclared, paginate } from '../../src/connectors/graphql/pagination.ts';
import {
  countNonNullRootFields,
  extractRecords,
  type PageInfo,
  pageOfAnswer,
  parseRecordsPath,
  type RecordsPage,
} from '../../src/connectors/graphql/records.ts';
import { type GraphqlAnswer, readGraphqlResponse } from '../../src/connectors/graphql/response.ts';
import { resolveGraphqlUrl, withoutCredentials } from '../../src/connectors/graphql/url.ts';
import { ApiError, type ValidationIssue } from '../../src/core/errors.ts';
import { RawJson, serializeReply } from '../../src/core/raw-json.ts';
import { bodyExcerpt } from '../../src/transport/excerpt.ts';
import { apiError } from '../support/assertions.ts';

/** Asserts a `validation_failed` with exactly one issue on `path` whose message matches `message`. */
function invalid(fn: () => unknown, path: string, message: RegExp): void {
  const error = apiError(fn, 'validation_failed');
  assert.equal(error.status, 400);
  const issues = error.details?.issues as ValidationIssue[];
  assert.equal(issues.length, 1);
  assert.equal(issues[0].path, path);
  assert.match(issues[0].message, message);
}

const json = (value: unknown) => Buffer.from(JSON.stringify(value));

describe('resolveGraphqlUrl: the URL rule', () => {
  test('a path without /graphql gets /graphql appended with one slash, query string kept', () => {
    const cases: Array<[string, string]> = [
      ['https://h/api?x=1', 'https://h/api/graphql?x=1'],
      ['https://h/', 'https://h/graphql'],
      ['https://h', 'https://h/graphql'],
      ['https://h/api/', 'https://h/api/graphql'],
      ['https://h/api//', 'https://h/api/graphql'],
      ['https://h?x=1&y=2', 'https://h/graphql?x=1&y=2'],
      ['http://127.0.0.1:8080/v1', 'http://127.0.0.1:8080/v1/graphql'],
      ['http://[::1]:4000', 'http://[::1]:4000/graphql'],
      ['https://h/my-graphql', 'https://h/my-graphql/graphql'],
      ['https://h/api%20v1/', 'https://h/api%20v1/graphql'],
    ];
    for (const [given, resolved] of cases) assert.equal(resolveGraphqlUrl(given), resolved, given);
  });

  test('a path containing /graphql anywhere is used as given', () => {
    for (const url of [
      'https://h/graphql',
      'https://h/graphql/',
      'https://h/v2/graphql/x',
      'https://h/api/graphql?x=1',
      'https://h/graphql.json',
      'http://h:8080/graphql',
    ]) {
      assert.equal(resolveGraphqlUrl(url), url);
    }
  });

  test('"contains /graphql" is literal: /graphqlx contains it', () => {
    assert.equal(resolveGraphqlUrl('https://h/graphqlx'), 'https://h/graphqlx');
    assert.equal(resolveGraphqlUrl('https://h/api/graphqlv2'), 'https://h/api/graphqlv2');
  });

  test('the match ignores case', () => {
    assert.equal(resolveGraphqlUrl('https://h/GraphQL'), 'https://h/GraphQL');
    assert.equal(resolveGraphqlUrl('https://h/api/GRAPHQL/x'), 'https://h/api/GRAPHQL/x');
  });

  test('graphql in the host, query string or fragment does not count', () => {
    assert.equal(resolveGraphqlUrl('https://graphql.example.com'), 'https://graphql.example.com/graphql');
    assert.equal(resolveGraphqlUrl('https://h/api?path=/graphql'), 'https://h/api/graphql?path=/graphql');
    assert.equal(resolveGraphqlUrl('https://h/api#/graphql'), 'https://h/api/graphql');
    assert.equal(resolveGraphqlUrl('https://graphql/'), 'https://graphql/graphql');
  });

  test('the fragment is dropped', () => {
    assert.equal(resolveGraphqlUrl('https://h/graphql#top'), 'https://h/graphql');
    assert.equal(resolveGraphqlUrl('https://h/api?x=1#top'), 'https://h/api/graphql?x=1');
  });

  test('the path is matched as written: an encoded /graphql does not count', () => {
    assert.equal(resolveGraphqlUrl('https://h/%67raphql'), 'https://h/%67raphql/graphql');
    assert.equal(resolveGraphqlUrl('https://h/api%2Fgraphql'), 'https://h/api%2Fgraphql/graphql');
  });

  test('ports and credentials are kept; default ports and host case are normalised', () => {
    assert.equal(resolveGraphqlUrl('https://user:p%40ss@h:8443/api'), 'https://user:p%40ss@h:8443/api/graphql');
    assert.equal(resolveGraphqlUrl('https://user@h/graphql'), 'https://user@h/graphql');
    assert.equal(resolveGraphqlUrl('https://H.Example.COM:443/api'), 'https://h.example.com/api/graphql');
    assert.equal(resolveGraphqlUrl('http://h:80'), 'http://h/graphql');
  });

  test('anything but an absolute http(s) URL is integration_misconfigured', () => {
    for (const bad of ['', 'h/api', '/graphql', 'ftp://h/graphql', 'file:///etc/passwd', 'javascript:alert(1)', 'http://']) {
      const error = apiError(() => resolveGraphqlUrl(bad), 'integration_misconfigured');
      assert.equal(error.status, 422);
    }
  });

  test('withoutCredentials drops user and password only', () => {
    assert.equal(withoutCredentials('https://u:p@h:8443/api/graphql?x=1'), 'https://h:8443/api/graphql?x=1');
    assert.equal(withoutCredentials('https://h/graphql'), 'https://h/graphql');
  });
});

describe('parseOperation: documents are checked before anything goes out', () => {
  test('a query, its name and its variables', () => {
    const op = parseOperation({
      document:
        'query Users($first: Int = 10, $after: String, $ids: [ID!]!) { users(first: $first, after: $after) { nodes { id } } }',
      field: 'query',
    });
    assert.equal(op.kind, 'query');
    assert.equal(op.operationName, 'Users');
    assert.deepEqual(op.variableNames, ['first', 'after', 'ids']);
    assert.deepEqual(op.variables, [
      { name: 'first', type: 'Int', required: false },
      { name: 'after', type: 'String', required: false },
      { name: 'ids', type: '[ID!]!', required: true },
    ]);
    assert.equal(op.document.kind, 'Document');
    assert.ok(hasVariable(op, 'after'));
    assert.ok(!hasVariable(op, 'cursor'));
  });

  test('anonymous shorthand is a query', () => {
    const op = parseOperation({ document: '{ usersList { id } }', field: 'query' });
    assert.equal(op.kind, 'query');
    assert.equal(op.operationName, undefined);
    assert.deepEqual(op.variableNames, []);
  });

  test('a mutation in the mutation field', () => {
    const op = parseOperation({ document: 'mutation Create($n: String!) { createUser(name: $n) { id } }', field: 'mutation' });
    assert.equal(op.kind, 'mutation');
    assert.equal(op.operationName, 'Create');
  });

  test('fragments beside the operation are fine', () => {
    const op = parseOperation({ document: 'query { usersList { ...F } } fragment F on User { id }', field: 'query' });
    assert.equal(op.kind, 'query');
  });

  test('a syntax error names graphql’s message, line and column', () => {
    invalid(
      () => parseOperation({ document: 'query {\n  users {', field: 'query' }),
      'query',
      /Syntax Error: .*\(line 2, column 10\)/,
    );
    invalid(() => parseOperation({ document: 'mutation { x(', field: 'mutation' }), 'mutation', /line 1, column 14/);
  });

  test('an empty document', () => {
    invalid(() => parseOperation({ document: '', field: 'query' }), 'query', /empty/);
    invalid(() => parseOperation({ document: '  \n ', field: 'mutation' }), 'mutation', /empty/);
  });

  test('a document nested too deeply is a validation failure, not a crash', () => {
    const deep = `{${'a{'.repeat(20_000)}b${'}'.repeat(20_000)}}`;
    invalid(() => parseOperation({ document: deep, field: 'query' }), 'query', /nested too deeply/);
  });

  test('a document over 256 KiB, or over 20,000 tokens, is refused before it is parsed', () => {
    // 925 KB of query held the event loop for seconds; now it is refused by its size alone.
    const huge = `query { ${'a '.repeat(462_500)}}`;
    invalid(
      () => parseOperation({ document: huge, field: 'query' }),
      'query',
      /is 925009 bytes; a GraphQL document may be at most 262144 bytes/,
    );
    // Under the byte bound, but 25,000 tokens: graphql-js stops at its maxTokens.
    const many = `mutation { ${'a '.repeat(25_000)}}`;
    assert.ok(Buffer.byteLength(many) <= maxDocumentBytes);
    invalid(() => parseOperation({ document: many, field: 'mutation' }), 'mutation', /more than 20000 tokens/);
    // At the bounds it is read as usual.
    const fits = `query { ${'a '.repeat(maxDocumentTokens - 10)}}`;
    assert.equal(parseOperation({ document: fits, field: 'query' }).kind, 'query');
  });

  test('a mutation field holding a query, and a query field holding a mutation', () => {
    invalid(
      () => parseOperation({ document: '{ usersList { id } }', field: 'mutation' }),
      'mutation',
      /holds a query.*`query` field/,
    );
    invalid(() => parseOperation({ document: 'query Q { a }', field: 'mutation' }), 'mutation', /holds a query/);
    invalid(
      () => parseOperation({ document: 'mutation { deleteUser(id: 1) }', field: 'query' }),
      'query',
      /holds a mutation.*`mutation` field/,
    );
  });

  test('subscriptions are not supported, in either field', () => {
    for (const field of ['query', 'mutation'] as const) {
      invalid(
        () => parseOperation({ document: 'subscription { userAdded { id } }', field }),
        field,
        /subscriptions are not supported/,
      );
    }
    invalid(
      () => parseOperation({ document: 'query A { a } subscription S { s }', field: 'query', operationName: 'S' }),
      'query',
      /subscriptions are not supported/,
    );
  });

  test('a document with no operation', () => {
    invalid(() => parseOperation({ document: 'fragment F on User { id }', field: 'query' }), 'query', /no operation/);
  });

  test('type system definitions cannot be sent', () => {
    invalid(() => parseOperation({ document: 'type Foo { a: Int }', field: 'query' }), 'query', /type system definition/);
    invalid(
      () => parseOperation({ document: '{ a } extend type Foo { b: Int }', field: 'query' }),
      'query',
      /type system definition/,
    );
  });

  test('operation_name selects an operation in a multi-operation document', () => {
    const document = 'query A { a } mutation B { b } query C($after: String) { c }';
    const c = parseOperation({ document, field: 'query', operationName: 'C' });
    assert.equal(c.operationName, 'C');
    assert.deepEqual(c.variableNames, ['after']);
    assert.equal(parseOperation({ document, field: 'mutation', operationName: 'B' }).kind, 'mutation');
    invalid(() => parseOperation({ document, field: 'query', operationName: 'B' }), 'query', /holds a mutation/);
  });

  test('several operations and no operation_name', () => {
    invalid(
      () => parseOperation({ document: 'query A { a } query B { b }', field: 'query' }),
      'operation_name',
      /required.*A, B/,
    );
  });

  test('an empty operation_name counts as none', () => {
    assert.equal(parseOperation({ document: 'query A { a }', field: 'query', operationName: '' }).operationName, 'A');
  });

  test('an operation_name not in the document', () => {
    invalid(
      () => parseOperation({ document: 'query A { a } query B { b }', field: 'query', operationName: 'Z' }),
      'operation_name',
      /no operation named "Z".*A, B/,
    );
    invalid(
      () => parseOperation({ document: '{ a }', field: 'query', operationName: 'A' }),
      'operation_name',
      /only an anonymous operation/,
    );
  });

  test('a single named operation is selected without operation_name; a matching one is accepted', () => {
    assert.equal(parseOperation({ document: 'query A { a }', field: 'query' }).operationName, 'A');
    assert.equal(parseOperation({ document: 'query A { a }', field: 'query', operationName: 'A' }).operationName, 'A');
  });

  test('ambiguous documents: an anonymous operation beside others, duplicate names', () => {
    invalid(() => parseOperation({ document: '{ a } query B { b }', field: 'query', operationName: 'B' }), 'query', /anonymous/);
    invalid(
      () => parseOperation({ document: 'query A { a } query A { b }', field: 'query', operationName: 'A' }),
      'query',
      /unique/,
    );
  });
});

describe('extractRecords: records of a receive answer', () => {
  const users = [{ id: '1' }, { id: '2' }];

  test('an array is itself', () => {
    assert.deepEqual(extractRecords({ usersList: users }), { records: users, totalSize: 2 });
  });

  test('a Relay connection: each edge’s node, totalCount, pageInfo', () => {
    const data = {
      users: {
        edges: users.map((node, i) => ({ cursor: `c${i}`, node })),
        pageInfo: { hasNextPage: true, endCursor: 'c1' },
        totalCount: 25,
      },
    };
    assert.deepEqual(extractRecords(data), {
      records: users,
      totalSize: 25,
      totalCount: 25,
      pageInfo: { hasNextPage: true, endCursor: 'c1' },
    });
  });

  test('an object with a nodes array is nodes; total_count counts too', () => {
    assert.deepEqual(extractRecords({ users: { nodes: users, total_count: 7 } }), {
      records: users,
      totalSize: 7,
      totalCount: 7,
    });
  });

  test('edges win over nodes when both are there', () => {
    const data = { users: { edges: [{ node: { id: 'e' } }], nodes: [{ id: 'n' }] } };
    assert.deepEqual(extractRecords(data).records, [{ id: 'e' }]);
  });

  test('null edges and edges without a node give null records', () => {
    assert.deepEqual(extractRecords({ users: { edges: [null, {}, { node: { id: '1' } }] } }).records, [null, null, { id: '1' }]);
  });

  test('totalCount must be a non-negative integer, else the number of records counts', () => {
    for (const totalCount of ['25', -1, 1.5, null, Number.NaN]) {
      const extracted = extractRecords({ users: { nodes: users, totalCount } });
      assert.equal(extracted.totalSize, 2, String(totalCount));
      assert.equal(extracted.totalCount, undefined);
    }
    assert.equal(extractRecords({ users: { nodes: users, totalCount: 0 } }).totalSize, 0);
  });

  test('pageInfo needs a boolean hasNextPage; a missing endCursor is null', () => {
    assert.equal(extractRecords({ users: { nodes: [], pageInfo: { endCursor: 'x' } } }).pageInfo, undefined);
    assert.deepEqual(extractRecords({ users: { nodes: [], pageInfo: { hasNextPage: false } } }).pageInfo, {
      hasNextPage: false,
      endCursor: null,
    });
  });

  test('null is []; a scalar or a plain object is one record', () => {
    assert.deepEqual(extractRecords({ user: null }), { records: [], totalSize: 0 });
    assert.deepEqual(extractRecords({ count: 3 }), { records: [3], totalSize: 1 });
    assert.deepEqual(extractRecords({ name: 'x' }), { records: ['x'], totalSize: 1 });
    assert.deepEqual(extractRecords({ ok: false }), { records: [false], totalSize: 1 });
    assert.deepEqual(extractRecords({ user: { id: '1' } }), { records: [{ id: '1' }], totalSize: 1 });
  });

  test('totalCount and pageInfo outside a connection are just fields of the record', () => {
    const value = { totalCount: 9, pageInfo: { hasNextPage: true, endCursor: 'x' } };
    assert.deepEqual(extractRecords({ users: value }), { records: [value], totalSize: 1 });
  });

  test('several root fields: the whole data object is the record', () => {
    const data = { a: [1, 2], b: { nodes: [3] } };
    assert.deepEqual(extractRecords(data), { records: [data], totalSize: 1 });
  });

  test('no root field at all gives []', () => {
    assert.deepEqual(extractRecords({}), { records: [], totalSize: 0 });
  });

  test('records_path: a dot path into data, then the same rules', () => {
    const data = { viewer: { login: 'x', repositories: { nodes: users, totalCount: 40 } } };
    assert.deepEqual(extractRecords(data, 'viewer.repositories'), { records: users, totalSize: 40, totalCount: 40 });
    assert.deepEqual(extractRecords(data, 'viewer'), { records: [data.viewer], totalSize: 1 });
    assert.deepEqual(extractRecords(data, 'viewer.login'), { records: ['x'], totalSize: 1 });
    assert.deepEqual(extractRecords({ a: [1, 2], b: { list: [3, 4, 5] } }, 'b.list'), { records: [3, 4, 5], totalSize: 3 });
  });

  test('records_path: a numeric segment indexes a list; past its end is null', () => {
    const data = { orgs: [{ members: [1, 2] }] };
    assert.deepEqual(extractRecords(data, 'orgs.0.members').records, [1, 2]);
    assert.deepEqual(extractRecords(data, 'orgs.5.members'), { records: [], totalSize: 0 });
  });

  test('records_path: null part-way gives []', () => {
    assert.deepEqual(extractRecords({ viewer: null }, 'viewer.repositories.nodes'), { records: [], totalSize: 0 });
  });

  test('records_path: a key the answer does not have, or a step into a scalar, is validation_failed', () => {
    invalid(
      () => extractRecords({ viewer: { repos: [] } }, 'viewer.repositories'),
      'records_path',
      /no "repositories" under "viewer"/,
    );
    invalid(() => extractRecords({ users: [] }, 'data.users'), 'records_path', /no "data" under "data"/);
    invalid(() => extractRecords({ a: { b: 1 } }, 'a.b.c'), 'records_path', /"a.b" is a number/);
    invalid(() => extractRecords({ a: [{ b: 1 }] }, 'a.b'), 'records_path', /"a" is a list/);
  });

  test('records_path never reaches the prototype', () => {
    invalid(() => extractRecords({ a: {} }, '__proto__'), 'records_path', /no "__proto__"/);
    invalid(() => extractRecords({ a: {} }, 'a.constructor'), 'records_path', /no "constructor"/);
    const data = JSON.parse('{"__proto__": [1, 2]}');
    assert.deepEqual(extractRecords(data, '__proto__').records, [1, 2]);
  });

  test('records_path syntax', () => {
    assert.deepEqual(parseRecordsPath('a.b.c'), ['a', 'b', 'c']);
    for (const bad of ['', '.', 'a.', '.a', 'a..b']) invalid(() => parseRecordsPath(bad), 'records_path', /empty segment/);
    invalid(() => extractRecords({ a: 1 }, 'a..b'), 'records_path', /empty segment/);
  });

  test('countNonNullRootFields: send’s message_count', () => {
    assert.equal(countNonNullRootFields({ a: { id: 1 }, b: null, c: false, d: 0, e: [] }), 4);
    assert.equal(countNonNullRootFields({ deleteUser: null }), 0);
    assert.equal(countNonNullRootFields({}), 0);
    assert.equal(countNonNullRootFields(null), 0);
  });
});

describe('readGraphqlResponse: normalising the upstream answer', () => {
  const graphqlJson = { 'content-type': 'application/graphql-response+json; charset=utf-8' };

  test('data alone', () => {
    assert.deepEqual(readGraphqlResponse(200, graphqlJson, json({ data: { a: 1 } })), { data: { a: 1 } });
  });

  test('errors beside non-null data: a partial success with both', () => {
    const errors = [{ message: 'broken on purpose', path: ['broken'] }];
    assert.deepEqual(readGraphqlResponse(200, {}, json({ data: { a: 1, broken: null }, errors })), {
      data: { a: 1, broken: null },
      errors,
    });
  });

  test('an empty errors list is no error', () => {
    assert.deepEqual(readGraphqlResponse(200, {}, json({ data: { a: 1 }, errors: [] })), { data: { a: 1 } });
  });

  test('errors with null or absent data: graphql_errors with the first message and every error for the top level', () => {
    const errors = [{ message: 'first' }, { message: 'second' }];
    for (const body of [{ data: null, errors }, { errors }]) {
      const error = apiError(() => readGraphqlResponse(200, graphqlJson, json(body)), 'graphql_errors');
      assert.equal(error.status, 502);
      assert.equal(error.message, 'first');
      assert.deepEqual(error.upstreamErrors, errors);
      assert.equal(error.details, undefined);
    }
  });

  test('an error without a message keeps the catalogue’s sentence', () => {
    const error = apiError(() => readGraphqlResponse(200, {}, json({ errors: [{ code: 'X' }] })), 'graphql_errors');
    assert.equal(error.message, 'The upstream GraphQL service answered with errors.');
  });

  test('a non-list errors on a 2xx is wrapped as one error', () => {
    const error = apiError(() => readGraphqlResponse(200, {}, json({ errors: 'Throttled' })), 'graphql_errors');
    assert.equal(error.message, 'Throttled');
    assert.deepEqual(error.upstreamErrors, [{ message: 'Throttled' }]);
    assert.deepEqual(readGraphqlResponse(200, {}, json({ data: { a: 1 }, errors: { message: 'x' } })).errors, [{ message: 'x' }]);
  });

  test('a 4xx GraphQL errors body is graphql_errors, with the upstream status', () => {
    const errors = [{ message: 'Cannot query field "nope" on type "Query".', locations: [{ line: 1, column: 3 }] }];
    for (const headers of [graphqlJson, { 'Content-Type': 'application/json' }]) {
      const error = apiError(() => readGraphqlResponse(400, headers, json({ errors })), 'graphql_errors');
      assert.equal(error.message, errors[0].message);
      assert.deepEqual(error.details, { upstream_status: 400 });
      assert.deepEqual(error.upstreamErrors, errors);
    }
  });

  test('a non-2xx is never a success, even with data', () => {
    const error = apiError(
      () => readGraphqlResponse(500, {}, json({ data: { a: 1 }, errors: [{ message: 'boom' }] })),
      'graphql_errors',
    );
    assert.equal(error.message, 'boom');
    apiError(() => readGraphqlResponse(500, {}, json({ data: { a: 1 } })), 'upstream_http_error');
  });

  test('401 and 403 are upstream_http_error pointing at the token, GraphQL body or not', () => {
    for (const status of [401, 403]) {
      const error = apiError(() => readGraphqlResponse(status, {}, json({ message: 'Bad credentials' })), 'upstream_http_error');
      assert.equal(error.status, 502);
      assert.match(error.message, /token and its permissions/);
      assert.deepEqual(error.details, { upstream_status: status, body_excerpt: '{"message":"Bad credentials"}' });
    }
    const errors = [{ message: 'Unauthorized' }];
    const error = apiError(() => readGraphqlResponse(401, graphqlJson, json({ errors })), 'upstream_http_error');
    assert.match(error.message, /HTTP 401.*token/);
    assert.deepEqual(error.details?.errors, errors);
    apiError(() => readGraphqlResponse(403, {}, Buffer.from('<h1>Forbidden</h1>')), 'upstream_http_error');
  });

  test('other non-2xx without a GraphQL errors body: upstream_http_error with status and excerpt', () => {
    const cases: Array<[number, Buffer]> = [
      [500, Buffer.from('Internal Server Error')],
      [502, Buffer.from('<html>Bad Gateway</html>')],
      [404, json({ errors: 'Not Found' })],
      [429, json({ errors: [] })],
      [400, json({ errors: [{ msg: 'not a GraphQL error' }] })],
      [503, Buffer.alloc(0)],
      [302, Buffer.from('')],
    ];
    for (const [status, body] of cases) {
      const error = apiError(() => readGraphqlResponse(status, {}, body), 'upstream_http_error');
      assert.equal(error.message, `The upstream GraphQL service answered HTTP ${status}.`);
      assert.deepEqual(error.details, { upstream_status: status, body_excerpt: body.toString() });
    }
  });

  test('excerpts are at most 1 KiB', () => {
    const error = apiError(() => readGraphqlResponse(500, {}, Buffer.from('x'.repeat(1_000_000))), 'upstream_http_error');
    assert.equal(error.details?.body_excerpt, 'x'.repeat(1024));
    const invalidBody = apiError(() => readGraphqlResponse(200, {}, Buffer.from('<'.repeat(5000))), 'upstream_invalid_response');
    assert.equal(String(invalidBody.details?.body_excerpt).length, 1024);
  });

  test('excerpts are cut on a character boundary, and stay within 1 KiB whatever the bytes', () => {
    const text = `${'a'.repeat(1023)}é and more`;
    assert.equal(bodyExcerpt(Buffer.from(text)), 'a'.repeat(1023));
    assert.equal(bodyExcerpt(Buffer.from('€'.repeat(1000))), '€'.repeat(341));
    assert.equal(bodyExcerpt(Buffer.from('short')), 'short');
    const binary = gzipSync(Buffer.from('x'.repeat(100_000)));
    assert.ok(Buffer.byteLength(bodyExcerpt(Buffer.concat([Buffer.alloc(2000, 0xff), binary]))) <= 1024);
    assert.equal(bodyExcerpt(Buffer.from('abcdef'), 3), 'abc');
  });

  test('a 2xx body that is not JSON is upstream_invalid_response with an excerpt and the content type', () => {
    const error = apiError(
      () => readGraphqlResponse(200, { 'Content-Type': 'text/html' }, Buffer.from('<html>login</html>')),
      'upstream_invalid_response',
    );
    assert.equal(error.status, 502);
    assert.deepEqual(error.details, { upstream_status: 200, content_type: 'text/html', body_excerpt: '<html>login</html>' });
    for (const body of ['', 'null', '[1]', '"data"', '{"data":', '42']) {
      apiError(() => readGraphqlResponse(200, {}, Buffer.from(body)), 'upstream_invalid_response');
    }
  });

  test('2xx JSON with neither data nor errors, or a data that is not an object, is upstream_invalid_response', () => {
    for (const body of [{}, { data: null }, { data: null, errors: [] }, { extensions: {} }, { data: [1] }, { data: 'x' }]) {
      apiError(() => readGraphqlResponse(200, {}, json(body)), 'upstream_invalid_response');
    }
  });

  test('a UTF-8 byte order mark is tolerated; any 2xx reads the same', () => {
    const body = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), json({ data: { a: 1 } })]);
    assert.deepEqual(readGraphqlResponse(200, {}, body), { data: { a: 1 } });
    assert.deepEqual(readGraphqlResponse(203, {}, json({ data: { a: 1 } })), { data: { a: 1 } });
  });
});

describe('paginate: following Relay pageInfo', () => {
  /** A fake upstream: `pages[i]` answers the i-th call; every call's `after` is recorded. */
  function fakeUpstream(pages: GraphqlAnswer[], recordsPath?: string) {
    const calls: Array<string | null> = [];
    return {
      calls,
      fetchPage: async (after: string | null) => {
        calls.push(after);
        const page = pages[calls.length - 1];
        assert.ok(page, `unexpected call ${calls.length} with after=${after}`);
        return pageOfAnswer(page, recordsPath);
      },
    };
  }
  const page = (ids: number[], pageInfo: unknown, extra: Record<string, unknown> = {}): GraphqlAnswer => ({
    data: { users: { nodes: ids.map((id) => ({ id })), pageInfo, ...extra } },
  });

  test('follows endCursor until hasNextPage is false, concatenating records', async () => {
    const pages = [
      page([1, 2], { hasNextPage: true, endCursor: 'c2' }, { totalCount: 5 }),
      page([3, 4], { hasNextPage: true, endCursor: 'c4' }, { totalCount: 5 }),
      page([5], { hasNextPage: false, endCursor: 'c5' }, { totalCount: 5 }),
    ];
    const upstream = fakeUpstream(pages);
    const result = await paginate(upstream.fetchPage, { maxPages: 10 });
    assert.deepEqual(upstream.calls, [null, 'c2', 'c4']);
    assert.deepEqual(
      (result.records as unknown[]).map((record) => (record as { id: number }).id),
      [1, 2, 3, 4, 5],
    );
    assert.equal(result.pages, 3);
    assert.equal(result.totalSize, 5);
    assert.equal(result.stoppedBy, 'last_page');
    assert.deepEqual(result.errors, []);
    assert.equal(result.count, 5);
  });

  test('stops at the page cap', async () => {
    const pages = Array.from({ length: 5 }, (_, i) => page([i], { hasNextPage: true, endCursor: `c${i}` }));
    const upstream = fakeUpstream(pages);
    const result = await paginate(upstream.fetchPage, { maxPages: 3 });
    assert.equal(result.pages, 3);
    assert.equal(upstream.calls.length, 3);
    assert.equal(result.stoppedBy, 'page_cap');
    assert.equal(result.totalSize, 3, 'no totalCount: the number of records');
  });

  test('maxPages 1 fetches one page', async () => {
    const upstream = fakeUpstream([page([1], { hasNextPage: true, endCursor: 'c' })]);
    assert.equal((await paginate(upstream.fetchPage, { maxPages: 1 })).pages, 1);
  });

  test('stops when endCursor is null though hasNextPage is true', async () => {
    const upstream = fakeUpstream([page([1], { hasNextPage: true, endCursor: null })]);
    const result = await paginate(upstream.fetchPage, { maxPages: 10 });
    assert.equal(result.pages, 1);
    assert.equal(result.stoppedBy, 'no_cursor');
  });

  test('stops when a cursor repeats: a broken upstream does not loop forever', async () => {
    const upstream = fakeUpstream([
      page([1], { hasNextPage: true, endCursor: 'a' }),
      page([2], { hasNextPage: true, endCursor: 'b' }),
      page([3], { hasNextPage: true, endCursor: 'a' }),
    ]);
    const result = await paginate(upstream.fetchPage, { maxPages: 100 });
    assert.deepEqual(upstream.calls, [null, 'a', 'b']);
    assert.equal(result.stoppedBy, 'repeated_cursor');
    assert.equal((result.records as unknown[]).length, 3);
  });

  test('the same cursor answered twice in a row stops at once', async () => {
    const same = page([1], { hasNextPage: true, endCursor: 'x' });
    const upstream = fakeUpstream([same, same, same]);
    const result = await paginate(upstream.fetchPage, { maxPages: 100 });
    assert.equal(result.pages, 2);
    assert.equal(result.stoppedBy, 'repeated_cursor');
  });

  test('a page without pageInfo (or a plain list) is the only page', async () => {
    const upstream = fakeUpstream([{ data: { usersList: [{ id: 1 }, { id: 2 }] } }]);
    const result = await paginate(upstream.fetchPage, { maxPages: 10 });
    assert.equal(result.pages, 1);
    assert.equal(result.stoppedBy, 'no_page_info');
    assert.equal(result.totalSize, 2);
  });

  test('total_size is the first page’s totalCount', async () => {
    const upstream = fakeUpstream([
      page([1], { hasNextPage: true, endCursor: 'a' }, { totalCount: 50 }),
      page([2], { hasNextPage: false, endCursor: 'b' }, { totalCount: 49 }),
    ]);
    assert.equal((await paginate(upstream.fetchPage, { maxPages: 10 })).totalSize, 50);
  });

  test('partial errors of every page are collected, in order', async () => {
    const upstream = fakeUpstream([
      { ...page([1], { hasNextPage: true, endCursor: 'a' }), errors: [{ message: 'p1' }] },
      page([2], { hasNextPage: true, endCursor: 'b' }),
      { ...page([3], { hasNextPage: false, endCursor: null }), errors: [{ message: 'p3a' }, { message: 'p3b' }] },
    ]);
    const result = await paginate(upstream.fetchPage, { maxPages: 10 });
    assert.deepEqual(result.errors, [{ message: 'p1' }, { message: 'p3a' }, { message: 'p3b' }]);
    assert.equal((result.records as unknown[]).length, 3);
  });

  test('records_path applies to every page', async () => {
    const wrap = (ids: number[], pageInfo: unknown) => ({ data: { viewer: { repos: { nodes: ids, pageInfo } } } });
    const upstream = fakeUpstream(
      [wrap([1, 2], { hasNextPage: true, endCursor: 'a' }), wrap([3], { hasNextPage: false })],
      'viewer.repos',
    );
    const result = await paginate(upstream.fetchPage, { maxPages: 10 });
    assert.deepEqual(result.records, [1, 2, 3]);
  });

  test('pages read as text (by a worker thread) and pages read here join into one array, in order', async () => {
    const asText = (ids: number[], pageInfo: PageInfo): RecordsPage => ({
      records: { text: Buffer.from(JSON.stringify(ids.map((id) => ({ id })))), count: ids.length },
      totalSize: ids.length,
      pageInfo,
    });
    const pages: RecordsPage[] = [
      pageOfAnswer(page([1, 2], { hasNextPage: true, endCursor: 'a' })),
      asText([3, 4, 5], { hasNextPage: true, endCursor: 'b' }),
      asText([], { hasNextPage: true, endCursor: 'c' }),
      pageOfAnswer(page([6], { hasNextPage: false, endCursor: null })),
    ];
    const joined: unknown[][] = [];
    const result = await paginate(async () => pages.shift() as RecordsPage, {
      maxPages: 10,
      membersText: (records) => {
        joined.push(records);
        return Buffer.from(JSON.stringify(records).slice(1, -1));
      },
    });
    assert.ok(result.records instanceof RawJson);
    assert.equal(result.count, 6);
    assert.equal(result.totalSize, 6);
    const reply = { data: { data: result.records } };
    const written = serializeReply(reply, JSON.stringify(reply));
    assert.ok(written);
    assert.equal(written.byteLength, Buffer.concat(written.chunks).length);
    assert.deepEqual(JSON.parse(String(Buffer.concat(written.chunks))), {
      data: { data: [1, 2, 3, 4, 5, 6].map((id) => ({ id })) },
    });
    assert.deepEqual(joined, [[{ id: 1 }, { id: 2 }], [{ id: 6 }]], 'the pages read here are written by membersText');
  });

  test('an error on any page ends the whole call', async () => {
    let calls = 0;
    const fetchPage = async (): Promise<RecordsPage> => {
      calls++;
      if (calls === 2) throw new ApiError('graphql_errors', 'page two failed');
      return pageOfAnswer(page([calls], { hasNextPage: true, endCursor: `c${calls}` }));
    };
    await assert.rejects(paginate(fetchPage, { maxPages: 10 }), { code: 'graphql_errors', message: 'page two failed' });
  });

  test('maxPages must be a positive integer', async () => {
    const upstream = fakeUpstream([]);
    for (const maxPages of [0, -1, 1.5, Number.NaN]) {
      await assert.rejects(paginate(upstream.fetchPage, { maxPages }), RangeError);
    }
    assert.equal(upstream.calls.length, 0);
  });

  test('the query must declare the cursor variable', () => {
    const op = parseOperation({ document: 'query ($after: String, $next: String) { users { nodes { id } } }', field: 'query' });
    assertCursorVariableDeclared(op);
    assertCursorVariableDeclared(op, 'next');
    invalid(() => assertCursorVariableDeclared(op, 'cursor'), 'query', /declare \$cursor/);
    invalid(
      () => assertCursorVariableDeclared(parseOperation({ document: '{ a }', field: 'query' })),
      'query',
      /declare \$after/,
    );
  });
});
