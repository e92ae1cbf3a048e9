import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import type { ConnectorDefinition } from '../../src/connectors/connector.ts';
import { builtInConnectors } from '../../src/connectors/registry.ts';
import { type Execution, ExecutionInserts, findExecution, insertExecutions } from '../../src/storage/executions.ts';
import { assertError, issuePaths } from '../support/assertions.ts';
import { type GraphqlServer, startGraphqlServer } from '../support/graphql-server.ts';
import { type Auth, body, type Harness, harness, noSchemaCheck } from '../support/harness.ts';
import { asPerson, person, tokensOf } from '../support/people.ts';
import { closedPort } from '../support/raw-upstream.ts';

/** The columns an execution's row keeps of its record. */
const recordKeys = [
  'api_key_id',
  'attempts',
  'connector',
  'duration_ms',
  'error_code',
  'error_details',
  'error_message',
  'finished_at',
  'http_status',
  'id',
  'integration_id',
  'message_count',
  'mode',
  'operation',
  'operation_name',
  'request_id',
  'started_at',
  'status',
  'user_id',
  'via',
];
/** What the API shows of an execution: its record, and its callers' names read beside it. */
const executionKeys = [...recordKeys, 'api_key_name', 'user_name'].sort();

/** Text that appears only in request and response bodies: it must never reach the executions table. */
const marker = 'MarkerQ7xZ';

describe('the executions log', () => {
  let h: Harness;
  let upstream: GraphqlServer;
  let runner: Auth;
  let runnerKeyId: string;
  let reader: Auth;
  let globexRunner: Auth;
  let globexReader: Auth;
  /** The acme execute calls made in `before`, oldest first: their X-Request-Id and HTTP status. */
  const calls: Array<{ requestId: string; status: number; startedBefore: string; finishedAfter: string }> = [];
  let all: Array<Record<string, unknown>>;

  before(async () => {
    h = await harness();
    upstream = await startGraphqlServer();
    await h.tenant('acme');
    await h.tenant('globex');
    const runnerKey = await h.key('acme', ['integrations.*'], { name: 'crm runner' });
    runner = { key: runnerKey.key, tenant: 'acme' };
    runnerKeyId = runnerKey.record.id;
    reader = await h.auth('acme', ['executions.read']);
    globexRunner = await h.auth('globex', ['integrations.*']);
    globexReader = await h.auth('globex', ['executions.*']);
    for (const [auth, id] of [
      [runner, 'crm'],
      [runner, 'erp'],
      [globexRunner, 'crm'],
    ] as const) {
      const res = await h.call(auth, {
        method: 'PUT',
        url: `/api/v1/integrations/${id}`,
        payload: { connector: 'graphql-1.0.0', config: { base_url: upstream.url } },
      });
      assert.equal(res.statusCode, 201, res.body);
    }

    const run = async (id: string, payload: object, status: number) => {
      const startedBefore = new Date().toISOString();
      const res = await h.call(runner, { method: 'POST', url: `/api/v1/integrations/${id}/execute`, payload });
      assert.equal(res.statusCode, status, res.body);
      calls.push({
        requestId: String(res.headers['x-request-id']),
        status,
        startedBefore,
        finishedAfter: new Date().toISOString(),
      });
    };
    // e0…e5, in this order.
    await run(
      'crm',
      { operation: 'receive', query: 'query ListUsers { usersList { id name email } }', variables: { note: marker } },
      200,
    );
    await run('crm', { operation: 'send', mutation: `mutation { createUser(name: "${marker}") { id } }` }, 200);
    await run('crm', { operation: 'receive', query: '{ brokenRequired }' }, 502);
    await run('erp', { operation: 'receive', query: '{ users(first: 3) { nodes { id } totalCount } }' }, 200);
    await run('erp', { operation: 'send', mutation: 'query { usersList { id } }' }, 400);
    await run('crm', { operation: 'test' }, 200);

    const globexRun = await h.call(globexRunner, {
      method: 'POST',
      url: '/api/v1/integrations/crm/execute',
      payload: { operation: 'test' },
    });
    assert.equal(globexRun.statusCode, 200, globexRun.body);

    const listed = await list(reader, '?limit=100');
    assert.equal(listed.statusCode, 200, listed.body);
    all = body(listed).data;
  });
  after(async () => {
    await upstream.close();
    await h.close();
  });

  function list(auth: Auth, query = ''): Promise<LightMyRequestResponse> {
    return h.call(auth, { method: 'GET', url: `/api/v1/executions${query}` });
  }

  /** The request ids of a list answer, in order. */
  function requestIds(res: LightMyRequestResponse): string[] {
    assert.equal(res.statusCode, 200, res.body);
    return body(res).data.map((e: { request_id: string }) => e.request_id);
  }

  /** The request ids of calls `e…`, by index, newest first. */
  const newestFirst = (...indexes: number[]) => indexes.map((i) => calls[i].requestId);

  test('every execute call is recorded with exactly the contract fields', () => {
    assert.equal(all.length, 6);
    for (const execution of all) assert.deepEqual(Object.keys(execution).sort(), executionKeys);

    const received = all.find((e) => e.request_id === calls[0].requestId);
    assert.ok(received);
    const { id, duration_ms: duration, started_at: startedAt, finished_at: finishedAt, ...rest } = received;
    assert.ok(String(finishedAt) >= String(startedAt));
    assert.match(String(id), /^exe_[0-9a-z]+$/);
    assert.ok(Number.isInteger(duration) && (duration as number) >= 0, `duration_ms ${duration}`);
    assert.match(String(startedAt), /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    assert.ok(String(startedAt) >= calls[0].startedBefore && String(startedAt) <= calls[0].finishedAfter);
    assert.deepEqual(rest, {
      mode: 'sync',
      via: 'api',
      attempts: 1,
      integration_id: 'crm',
      connector: 'graphql-1.0.0',
      operation: 'receive',
      operation_name: 'ListUsers',
      status: 'succeeded',
      http_status: 200,
      error_code: null,
      error_message: null,
      error_details: null,
      message_count: 25,
      api_key_id: runnerKeyId,
      user_id: null,
      api_key_name: 'crm runner',
      user_name: null,
      request_id: calls[0].requestId,
    });
  });

  test('each record names what its call named: the operation, else the first root field; a test names none', () => {
    const names = calls.map((call) => all.find((e) => e.request_id === call.requestId)?.operation_name);
    assert.deepEqual(names, ['ListUsers', 'createUser', 'brokenRequired', 'users', 'usersList', null]);
  });

  test('failures are recorded with their status and code; message_count counts what ran', () => {
    const pick = (i: number) => {
      const e = all.find((x) => x.request_id === calls[i].requestId);
      assert.ok(e, `execution ${i}`);
      return [e.integration_id, e.operation, e.status, e.http_status, e.error_code, e.message_count, e.error_message];
    };
    assert.deepEqual(pick(1), ['crm', 'send', 'succeeded', 200, null, 1, null]);
    // error_message is the message the caller got (docs/execute.md#the-executions-log).
    assert.deepEqual(pick(2), ['crm', 'receive', 'failed', 502, 'graphql_errors', 0, 'broken on purpose']);
    assert.deepEqual(pick(3), ['erp', 'receive', 'succeeded', 200, null, 3, null]);
    const invalid = pick(4);
    assert.deepEqual(invalid.slice(0, 6), ['erp', 'send', 'failed', 400, 'validation_failed', 0]);
    assert.equal(typeof invalid[6], 'string');
    assert.deepEqual(pick(5), ['crm', 'test', 'succeeded', 200, null, 0, null]);
  });

  test('no bodies are stored for a synchronous call: the log columns, no result, no request or response text', async () => {
    await h.app.executionLog.flush(); // the executions log is written behind
    const rows = await h.storage.db.selectFrom('executions').selectAll().execute();
    assert.equal(rows.length, 7);
    // `result` holds an async call's answer only (docs/async.md); a synchronous call's is never kept.
    // `runs` and `claim_token` are an async execution's runs for the queue's claims; the API does not show them.
    const storedOnly = ['result', 'result_expires_at', 'runs', 'claim_token', 'tenant_id'];
    for (const row of rows) assert.deepEqual(Object.keys(row).sort(), [...recordKeys, ...storedOnly].sort());
    for (const row of rows) assert.deepEqual([row.mode, row.result, row.result_expires_at], ['sync', null, null]);
    // error_message holds the message the caller got (here the upstream's 'broken on purpose'), operation_name the name
    // the call gave its operation (or its first root field); nothing else of a body.
    const stored = JSON.stringify(rows.map(({ error_message: _message, operation_name: _name, ...row }) => row));
    for (const text of [marker, 'usersList', 'createUser', 'user1@example.com', 'User 1', 'broken on purpose']) {
      assert.ok(!stored.includes(text), `the executions table holds "${text}"`);
    }
  });

  test('newest first', () => {
    assert.deepEqual(
      all.map((e) => e.request_id),
      newestFirst(5, 4, 3, 2, 1, 0),
    );
    const started = all.map((e) => String(e.started_at));
    assert.deepEqual(started, [...started].sort().reverse());
  });

  test('filters: integration_id, status, and both', async () => {
    assert.deepEqual(requestIds(await list(reader, '?integration_id=crm')), newestFirst(5, 2, 1, 0));
    assert.deepEqual(requestIds(await list(reader, '?status=failed')), newestFirst(4, 2));
    assert.deepEqual(requestIds(await list(reader, '?status=succeeded')), newestFirst(5, 3, 1, 0));
    assert.deepEqual(requestIds(await list(reader, '?integration_id=crm&status=failed')), newestFirst(2));
    assert.deepEqual(requestIds(await list(reader, '?integration_id=nope')), []);
  });

  test('cursor pagination with limit walks every execution once, then next_cursor is null', async () => {
    const pages: string[][] = [];
    let cursor: string | null = null;
    do {
      const res = await list(reader, `?limit=2${cursor === null ? '' : `&cursor=${encodeURIComponent(cursor)}`}`);
      pages.push(requestIds(res));
      cursor = body(res).pagination.next_cursor;
      assert.ok(pages.length <= 4, 'pagination ends');
    } while (cursor !== null);
    assert.deepEqual(pages, [newestFirst(5, 4), newestFirst(3, 2), newestFirst(1, 0)]);

    const first = await list(reader, '?integration_id=crm&limit=3');
    assert.deepEqual(requestIds(first), newestFirst(5, 2, 1));
    const next = body(first).pagination.next_cursor;
    assert.equal(typeof next, 'string');
    const second = await list(reader, `?integration_id=crm&limit=3&cursor=${encodeURIComponent(next)}`);
    assert.deepEqual(requestIds(second), newestFirst(0));
    assert.equal(body(second).pagination.next_cursor, null);

    assert.deepEqual(issuePaths(await list(reader, '?limit=101')), ['limit']);
    assert.deepEqual(issuePaths(await list(reader, '?limit=0')), ['limit']);
    assert.deepEqual(issuePaths(await list(reader, '?cursor=not-a-cursor!')), ['cursor']);
  });

  test('GET /executions/{id} returns one execution; an unknown id is 404', async () => {
    for (const execution of all) {
      const res = await h.call(reader, { method: 'GET', url: `/api/v1/executions/${execution.id}` });
      assert.equal(res.statusCode, 200, res.body);
      assert.deepEqual(body(res), { success: true, data: execution });
    }
    assertError(await h.call(reader, { method: 'GET', url: '/api/v1/executions/exe_nope' }), 404, 'not_found');
  });

  test("another tenant's executions are 404 and never listed", async () => {
    const theirs = await list(globexReader);
    assert.equal(theirs.statusCode, 200);
    const globexExecutions = body(theirs).data;
    assert.equal(globexExecutions.length, 1);
    assert.equal(globexExecutions[0].operation, 'test');
    assert.ok(!all.some((e) => e.id === globexExecutions[0].id), 'acme does not list it');

    const acmeId = String(all[0].id);
    assertError(await h.call(globexReader, { method: 'GET', url: `/api/v1/executions/${acmeId}` }), 404, 'not_found');
    assertError(await h.call(reader, { method: 'GET', url: `/api/v1/executions/${globexExecutions[0].id}` }), 404, 'not_found');
    // A key of acme sent with globex's tenant id is no key at all.
    assertError(await list({ key: reader.key, tenant: 'globex' }), 401, 'invalid_credentials');
  });

  test('executions.read is required: 403 insufficient_scope otherwise', async () => {
    for (const url of ['/api/v1/executions', `/api/v1/executions/${all[0].id}`]) {
      const res = await h.call(runner, { method: 'GET', url });
      const error = assertError(res, 403, 'insufficient_scope');
      assert.equal(error.details?.required_scope, 'executions.read');
      assert.deepEqual(error.details?.granted_scopes, ['integrations.*']);
    }
  });

  test('a bad status filter (or an unknown parameter) is 400 validation_failed', async () => {
    assert.deepEqual(issuePaths(await list(reader, '?status=done')), ['status']);
    assert.deepEqual(issuePaths(await list(reader, '?status=')), ['status']);
    assert.deepEqual(issuePaths(await list(reader, '?state=failed')), ['state']);
  });
});

/** A connector whose send has a bug (throws a TypeError) when the mutation names `connectorBug`. */
function withSendBug(definition: ConnectorDefinition): ConnectorDefinition {
  return {
    ...definition,
    connect(integration, context) {
      const connection = definition.connect(integration, context);
      // Delegated one by one: a connection's methods may be on its prototype, which a spread would not copy.
      return {
        prepare: connection.prepare?.bind(connection),
        receive: (fields) => connection.receive(fields),
        test: () => connection.test(),
        send: (fields) =>
          String(fields.mutation).includes('connectorBug')
            ? Promise.reject(new TypeError('a connector bug with a secret-ish message'))
            : connection.send(fields),
      };
    },
  };
}

describe('the executions log under quick successive calls', () => {
  let h: Harness;
  let auth: Auth;

  before(async () => {
    // GraphQL as built in, but for a bug in its send when the mutation says so: a connector bug stands in here.
    h = await harness({}, { connectors: (config) => builtInConnectors(config).map(withSendBug) });
    await h.tenant('acme');
    auth = { key: (await h.key('acme', ['integrations.*', 'executions.read'])).key, tenant: 'acme' };
    const res = await h.call(auth, {
      method: 'PUT',
      url: '/api/v1/integrations/crm',
      payload: {
        connector: 'graphql-1.0.0',
        config: { base_url: `http://127.0.0.1:${await closedPort()}/graphql`, ...noSchemaCheck },
      },
    });
    assert.equal(res.statusCode, 201, res.body);
  });
  after(() => h.close());

  test('calls within one millisecond are still listed newest first', async () => {
    // Refused by validation (a query sent as a mutation): a few of these fit in one millisecond.
    const requestIds: string[] = [];
    for (let i = 0; i < 80; i++) {
      const res = await h.call(auth, {
        method: 'POST',
        url: '/api/v1/integrations/crm/execute',
        payload: { operation: 'send', mutation: '{ usersList { id } }' },
      });
      assert.equal(res.statusCode, 400, res.body);
      requestIds.push(String(res.headers['x-request-id']));
    }
    const listed = await h.call(auth, { method: 'GET', url: '/api/v1/executions?limit=100' });
    assert.deepEqual(
      body(listed).data.map((e: { request_id: string }) => e.request_id),
      requestIds.reverse(),
    );
  });

  test('an Idempotency-Key replay runs nothing and adds no execution; the call that ran is recorded once', async () => {
    const count = async () => body(await h.call(auth, { method: 'GET', url: '/api/v1/executions?limit=100' })).data.length;
    const before = await count();
    const call = () =>
      h.call(auth, {
        method: 'POST',
        url: '/api/v1/integrations/crm/execute',
        headers: { 'idempotency-key': 'once' },
        payload: { operation: 'send', mutation: 'mutation { createUser(name: "x") { id } }' },
      });
    const first = await call();
    // A refused connection sent no byte: the send was tried three times (docs/resilience.md), and says so.
    assert.deepEqual(assertError(first, 502, 'upstream_unreachable').details, { cause: 'refused', attempts: 3 });
    const replay = await call();
    assert.equal(replay.headers['idempotent-replayed'], 'true');
    assert.equal(await count(), before + 1);
    const [newest] = body(await h.call(auth, { method: 'GET', url: '/api/v1/executions?limit=1' })).data;
    assert.equal(newest.request_id, first.headers['x-request-id']);
    assert.equal(newest.error_code, 'upstream_unreachable');
    assert.equal(newest.http_status, 502);
    // The record states what the caller got: the code, the message and the details.
    const one = body(await h.call(auth, { method: 'GET', url: `/api/v1/executions/${newest.id}` })).data;
    assert.equal(one.error_message, body(first).error.message);
    assert.deepEqual(one.error_details, { cause: 'refused', attempts: 3 });
    assert.equal(one.attempts, 3);
  });

  test('a call that hits a bug answers 500 internal_error and is recorded all the same', async () => {
    const res = await h.call(auth, {
      method: 'POST',
      url: '/api/v1/integrations/crm/execute',
      payload: { operation: 'send', mutation: 'mutation { connectorBug(name: "x") { id } }' },
    });
    assertError(res, 500, 'internal_error');
    assert.ok(!res.body.includes('secret-ish'));
    const [newest] = body(await h.call(auth, { method: 'GET', url: '/api/v1/executions?limit=1' })).data;
    const { id: _id, duration_ms: _duration, started_at: _started, finished_at: _finished, api_key_id: _key, ...rest } = newest;
    assert.deepEqual(rest, {
      mode: 'sync',
      via: 'api',
      attempts: 1,
      integration_id: 'crm',
      connector: 'graphql-1.0.0',
      operation: 'send',
      operation_name: 'connectorBug',
      status: 'failed',
      http_status: 500,
      error_code: 'internal_error',
      error_message: body(res).error.message,
      error_details: null,
      message_count: 0,
      user_id: null,
      api_key_name: '',
      user_name: null,
      request_id: res.headers['x-request-id'],
    });
  });
});

describe('an execution names its caller', () => {
  let h: Harness;
  let upstream: GraphqlServer;
  let runner: Auth;
  let runnerKeyId: string;
  let token: string;
  let adaId: string;
  const asAda = (options: { method: string; url: string; payload?: object }) => asPerson(h, token, 'acme', options);

  before(async () => {
    h = await harness({ IX_WORKER: 'false' });
    upstream = await startGraphqlServer();
    await h.tenant('acme');
    await h.tenant('globex');
    const key = await h.key('acme', ['*'], { name: 'nightly sync' });
    runner = { key: key.key, tenant: 'acme' };
    runnerKeyId = key.record.id;
    adaId = await person(h, 'ada@example.com', { acme: 'owner' });
    token = (await tokensOf(h, 'ada@example.com')).access;
    const res = await h.call(runner, {
      method: 'PUT',
      url: '/api/v1/integrations/crm',
      payload: { connector: 'graphql-1.0.0', config: { base_url: upstream.url } },
    });
    assert.equal(res.statusCode, 201, res.body);
  });
  after(async () => {
    await upstream.close();
    await h.close();
  });

  test('a key’s call shows the key’s name, a person’s the person’s; the answer names its execution', async () => {
    const byKey = await h.call(runner, {
      method: 'POST',
      url: '/api/v1/integrations/crm/execute',
      payload: { operation: 'test' },
    });
    assert.equal(byKey.statusCode, 200, byKey.body);
    const byAda = await asAda({ method: 'POST', url: '/api/v1/integrations/crm/execute', payload: { operation: 'test' } });
    assert.equal(byAda.statusCode, 200, byAda.body);

    const listed = body(await h.call(runner, { method: 'GET', url: '/api/v1/executions' })).data;
    const callers = listed.map((e: Record<string, unknown>) => [e.id, e.api_key_id, e.api_key_name, e.user_id, e.user_name]);
    assert.deepEqual(callers, [
      [byAda.headers['x-execution-id'], null, null, adaId, 'ada'],
      [byKey.headers['x-execution-id'], runnerKeyId, 'nightly sync', null, null],
    ]);
    for (const e of listed) {
      const one = await asAda({ method: 'GET', url: `/api/v1/executions/${e.id}` });
      assert.deepEqual(body(one).data, e, 'one execution shows what the list shows');
    }
  });

  test('a canceled execution’s record names its caller too', async () => {
    const queued = await h.call(runner, {
      method: 'POST',
      url: '/api/v1/integrations/crm/execute',
      headers: { prefer: 'respond-async' },
      payload: { operation: 'test' },
    });
    assert.equal(queued.statusCode, 202, queued.body);
    const canceled = await asAda({ method: 'POST', url: `/api/v1/executions/${body(queued).data.execution_id}/cancel` });
    assert.equal(canceled.statusCode, 200, canceled.body);
    assert.equal(body(canceled).data.status, 'canceled');
    assert.equal(body(canceled).data.api_key_name, 'nightly sync');
    assert.equal(body(canceled).data.user_name, null);
  });

  test('a caller that is not there, or is another tenant’s key, has no name', async () => {
    const globexKey = await h.key('globex', ['*'], { name: 'globex secret project' });
    const record = (id: string, keyId: string | null, userId: string | null): Execution => ({
      id,
      integration_id: 'crm',
      connector: 'graphql-1.0.0',
      operation: 'test',
      operation_name: null,
      status: 'succeeded',
      http_status: 200,
      error_code: null,
      error_message: null,
      error_details: null,
      message_count: 0,
      duration_ms: 1,
      api_key_id: keyId,
      user_id: userId,
      request_id: `req-${id}`,
      started_at: '2026-01-01T00:00:00.000Z',
      mode: 'sync',
      via: 'api',
      attempts: 1,
      finished_at: '2026-01-01T00:00:00.001Z',
    });
    await insertExecutions(h.storage.db, [
      { tenantId: 'acme', execution: record('exe_0gone1', 'key_gone', null) },
      { tenantId: 'acme', execution: record('exe_0gone2', null, 'usr_gone') },
      { tenantId: 'acme', execution: record('exe_0gone3', globexKey.record.id, null) },
    ]);
    for (const id of ['exe_0gone1', 'exe_0gone2', 'exe_0gone3']) {
      const one = body(await h.call(runner, { method: 'GET', url: `/api/v1/executions/${id}` })).data;
      assert.deepEqual([one.api_key_name, one.user_name], [null, null], id);
    }
    const listed = body(await h.call(runner, { method: 'GET', url: '/api/v1/executions?limit=100' })).data;
    assert.ok(!JSON.stringify(listed).includes('globex secret project'));
  });

  test('a replayed answer names no execution: the replay is none (docs/execute.md#the-answer)', async () => {
    const call = () =>
      h.call(runner, {
        method: 'POST',
        url: '/api/v1/integrations/crm/execute',
        headers: { 'idempotency-key': 'named-once' },
        payload: { operation: 'test' },
      });
    const first = await call();
    assert.match(String(first.headers['x-execution-id']), /^exe_[0-9a-z]+$/);
    const replay = await call();
    assert.equal(replay.headers['idempotent-replayed'], 'true');
    assert.equal(replay.headers['x-execution-id'], undefined);
  });
});

describe('the executions log written in batches of a size it wrote before', () => {
  let h: Harness;
  before(async () => {
    h = await harness();
    await h.tenant('acme');
  });
  after(() => h.close());

  const execution = (id: string, failed: boolean): Execution => ({
    id,
    integration_id: `int-${id}`,
    connector: 'graphql-1.0.0',
    operation: failed ? 'send' : 'receive',
    operation_name: failed ? 'createOrder' : 'GetOrders',
    status: failed ? 'failed' : 'succeeded',
    http_status: failed ? 502 : 200,
    error_code: failed ? 'graphql_errors' : null,
    error_message: failed ? `upstream said \u0000 ${id}` : null,
    error_details: failed ? { upstream_status: 500, id } : null,
    message_count: failed ? 0 : 3,
    duration_ms: 7,
    api_key_id: failed ? null : 'key_x',
    user_id: failed ? 'usr_x' : null,
    request_id: `req-${id}`,
    started_at: '2026-01-01T00:00:00.000Z',
    mode: 'sync',
    via: 'api',
    attempts: 1,
    finished_at: '2026-01-01T00:00:00.007Z',
  });

  test('each batch stores its own values, whatever batch of that size came before', async () => {
    const inserts = new ExecutionInserts(h.storage.db);
    await inserts.insert([
      { tenantId: 'acme', execution: execution('exe_b1', false) },
      { tenantId: 'acme', execution: execution('exe_b2', true) },
    ]);
    await inserts.insert([
      { tenantId: 'acme', execution: execution('exe_b3', true) },
      { tenantId: 'acme', execution: execution('exe_b4', false) },
    ]);
    for (const [id, failed] of [
      ['exe_b1', false],
      ['exe_b2', true],
      ['exe_b3', true],
      ['exe_b4', false],
    ] as const) {
      const expected = execution(id, failed);
      assert.deepEqual(await findExecution(h.storage.db, 'acme', id), {
        ...expected,
        error_message: expected.error_message?.replace('\u0000', '\ufffd') ?? null,
        // Their callers (key_x, usr_x) are not there: no names.
        api_key_name: null,
        user_name: null,
      });
    }
  });
});
