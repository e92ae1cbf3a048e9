import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { assertError, assertGraphqlErrors, issuePaths } from '../support/assertions.ts';
import { type GraphqlServer, startGraphqlServer } from '../support/graphql-server.ts';
import { type Auth, body, type Harness, harness, noSchemaCheck, twoTenants } from '../support/harness.ts';
import { httpUpstream, type RawUpstream } from '../support/raw-upstream.ts';

const createUser = (name: string) => ({
  operation: 'send',
  mutation: 'mutation Create($name: String!) { createUser(name: $name) { id name } }',
  variables: { name },
});

/** What the test server answers for `{ brokenRequired }`. */
const brokenRequiredErrors = [{ message: 'broken on purpose', locations: [{ line: 1, column: 3 }], path: ['brokenRequired'] }];

describe('Idempotency-Key on execute', () => {
  let h: Harness;
  let acme: Auth;
  let globex: Auth;
  let upstream: GraphqlServer;
  let slow: RawUpstream;

  before(async () => {
    h = await harness();
    ({ acme, globex } = await twoTenants(h, ['integrations.*']));
    upstream = await startGraphqlServer();
    // Holds every answer 300 ms, so that two requests overlap.
    slow = await httpUpstream((_req, res) => {
      setTimeout(() => {
        res.writeHead(200, { 'content-type': 'application/json' }).end('{"data":{"createUser":{"id":"slow-1","name":"S"}}}');
      }, 300);
    });
    for (const [auth, id, url] of [
      [acme, 'gql', upstream.url],
      [acme, 'gql-2', upstream.url],
      [globex, 'gql', upstream.url],
      [acme, 'slow', slow.url],
    ] as const) {
      const res = await h.call(auth, {
        method: 'PUT',
        url: `/api/v1/integrations/${id}`,
        payload: { connector: 'graphql-1.0.0', config: { base_url: url, ...noSchemaCheck } },
      });
      assert.equal(res.statusCode, 201, res.body);
    }
  });
  after(async () => {
    await upstream.close();
    await slow.close();
    await h.close();
  });

  function execute(
    auth: Auth,
    key: string | undefined,
    payload: object,
    integration = 'gql',
    extraHeaders: Record<string, string> = {},
  ): Promise<LightMyRequestResponse> {
    return h.call(auth, {
      method: 'POST',
      url: `/api/v1/integrations/${integration}/execute`,
      headers: { ...(key === undefined ? {} : { 'idempotency-key': key }), ...extraHeaders },
      payload,
    });
  }

  test('the first answer is replayed for the same key and body, with Idempotent-Replayed: true; the upstream runs once', async () => {
    const before = upstream.requests.length;
    const first = await execute(acme, 'replay-1', createUser('Ada'));
    assert.equal(first.statusCode, 200, first.body);
    assert.equal(first.headers['idempotent-replayed'], undefined);
    assert.deepEqual(body(first), {
      success: true,
      data: {
        message_count: 1,
        data: { createUser: { id: '26', name: 'Ada' } },
        response: { data: { createUser: { id: '26', name: 'Ada' } } },
      },
    });

    const second = await execute(acme, 'replay-1', createUser('Ada'));
    assert.equal(second.statusCode, 200);
    assert.equal(second.headers['idempotent-replayed'], 'true');
    assert.deepEqual(body(second), body(first));
    assert.notEqual(second.headers['x-request-id'], first.headers['x-request-id']);
    assert.equal(upstream.requests.length - before, 1, 'the mutation reached the upstream once');
  });

  test('the same key with a different body, or for another integration, is 422 idempotency_key_reused', async () => {
    const first = await execute(acme, 'reuse-1', createUser('Bob'));
    assert.equal(first.statusCode, 200, first.body);
    const before = upstream.requests.length;

    const otherBody = await execute(acme, 'reuse-1', createUser('Bobby'));
    assertError(otherBody, 422, 'idempotency_key_reused');
    assert.equal(otherBody.headers['idempotent-replayed'], undefined);
    const otherIntegration = await execute(acme, 'reuse-1', createUser('Bob'), 'gql-2');
    assertError(otherIntegration, 422, 'idempotency_key_reused');
    assert.equal(upstream.requests.length, before, 'nothing reached the upstream');

    // The refusal did not overwrite the stored answer.
    const again = await execute(acme, 'reuse-1', createUser('Bob'));
    assert.equal(again.headers['idempotent-replayed'], 'true');
    assert.deepEqual(body(again), body(first));
  });

  test('key order in the body does not matter: the same fingerprint', async () => {
    const query = 'query Page($first: Int, $after: String) { users(first: $first, after: $after) { nodes { id } totalCount } }';
    const after = Buffer.from('user:1').toString('base64');
    const first = await execute(acme, 'order-1', { operation: 'receive', query, variables: { first: 2, after } });
    assert.equal(first.statusCode, 200, first.body);
    const before = upstream.requests.length;
    const reordered = await execute(acme, 'order-1', { variables: { after, first: 2 }, query, operation: 'receive' });
    assert.equal(reordered.statusCode, 200, reordered.body);
    assert.equal(reordered.headers['idempotent-replayed'], 'true');
    assert.deepEqual(body(reordered), body(first));
    assert.deepEqual(body(first).data.data, [{ id: '2' }, { id: '3' }]);
    assert.equal(upstream.requests.length, before);
  });

  test('keys are per tenant: another tenant may use the same key for its own request', async () => {
    const mine = await execute(acme, 'tenant-key', createUser('Acme user'));
    assert.equal(mine.statusCode, 200, mine.body);
    const before = upstream.requests.length;
    const theirs = await execute(globex, 'tenant-key', createUser('Globex user'));
    assert.equal(theirs.statusCode, 200, theirs.body);
    assert.equal(theirs.headers['idempotent-replayed'], undefined);
    assert.equal(body(theirs).data.data.createUser.name, 'Globex user');
    assert.equal(upstream.requests.length - before, 1);
    // Same body too: still not a replay of acme's answer.
    const sameBody = await execute(globex, 'tenant-key-2', createUser('Same'));
    const acmeSame = await execute(acme, 'tenant-key-2', createUser('Same'));
    assert.equal(acmeSame.headers['idempotent-replayed'], undefined);
    assert.notEqual(body(acmeSame).data.data.createUser.id, body(sameBody).data.data.createUser.id);
  });

  test('a key of 255 characters is accepted, 256 is 400 validation_failed (and nothing runs)', async () => {
    const ok = await execute(acme, 'k'.repeat(255), createUser('Long key'));
    assert.equal(ok.statusCode, 200, ok.body);
    const before = upstream.requests.length;
    const tooLong = await execute(acme, 'k'.repeat(256), createUser('Too long key'));
    assert.deepEqual(issuePaths(tooLong), ['idempotency-key']);
    assert.equal(upstream.requests.length, before);
  });

  test('a request refused by validation does not consume the key: the corrected request runs', async () => {
    const before = upstream.requests.length;
    const bad = await execute(acme, 'fix-me', { operation: 'send', mutation: 'mutation { createUser(name: "X" { id } }' });
    assertError(bad, 400, 'validation_failed');
    assert.equal(upstream.requests.length, before);
    const fixed = await execute(acme, 'fix-me', createUser('Fixed'));
    assert.equal(fixed.statusCode, 200, fixed.body);
    assert.equal(fixed.headers['idempotent-replayed'], undefined);
    assert.equal(body(fixed).data.data.createUser.name, 'Fixed');
    assert.equal(upstream.requests.length - before, 1);
    const replay = await execute(acme, 'fix-me', createUser('Fixed'));
    assert.equal(replay.headers['idempotent-replayed'], 'true');
  });

  test('a sync whose outbound mutation ran keeps its key even when inbound then fails validation: no second mutation', async () => {
    const sync = {
      operation: 'sync',
      outbound: { mutation: 'mutation { createUser(name: "Synced once") { id } }' },
      // Parses, but does not match the answer (the query selects nodes, not edges): found only after the call.
      inbound: { query: '{ users(first: 1) { nodes { id } } }', records_path: 'users.edges' },
    };
    const before = upstream.requests.length;
    const first = await execute(acme, 'sync-1', sync);
    const error = assertError(first, 400, 'validation_failed');
    assert.equal(error.details?.stage, 'inbound');
    assert.equal(upstream.requests.length - before, 2, 'outbound and inbound both reached the upstream');

    const retry = await execute(acme, 'sync-1', sync);
    assertError(retry, 400, 'validation_failed');
    assert.equal(retry.headers['idempotent-replayed'], 'true');
    assert.deepEqual({ ...body(retry), request_id: body(first).request_id }, body(first));
    const corrected = await execute(acme, 'sync-1', { ...sync, inbound: { ...sync.inbound, records_path: 'users.nodes' } });
    assertError(corrected, 422, 'idempotency_key_reused');
    assert.equal(upstream.requests.length - before, 2, 'the mutation was sent once');
  });

  test('a send the egress policy stopped before a byte left gives its key back: the corrected call runs', async () => {
    const put = (baseUrl: string) =>
      h.call(acme, {
        method: 'PUT',
        url: '/api/v1/integrations/blocked',
        payload: { connector: 'graphql-1.0.0', config: { base_url: baseUrl, ...noSchemaCheck } },
      });
    assert.equal((await put('http://169.254.169.254/')).statusCode, 201);
    assertError(await execute(acme, 'egress-1', createUser('Blocked'), 'blocked'), 422, 'egress_denied');
    assert.ok((await put(upstream.url)).statusCode < 300);
    const ran = await execute(acme, 'egress-1', createUser('Blocked'), 'blocked');
    assert.equal(ran.statusCode, 200, ran.body);
    assert.equal(ran.headers['idempotent-replayed'], undefined, 'not a replay of the refusal');
  });

  test('a receive whose records_path does not match the answer gives its key back (only a read was sent)', async () => {
    const wrong = { operation: 'receive', query: '{ users(first: 1) { nodes { id } } }', records_path: 'users.edges' };
    assertError(await execute(acme, 'read-path', wrong), 400, 'validation_failed');
    const fixed = await execute(acme, 'read-path', { ...wrong, records_path: 'users.nodes' });
    assert.equal(fixed.statusCode, 200, fixed.body);
    assert.deepEqual(body(fixed).data, { message_count: 1, data: [{ id: '1' }], total_size: 1 });
  });

  test('a failed upstream call is replayed as that failure, with the new request id', async () => {
    const before = upstream.requests.length;
    const query = { operation: 'receive', query: '{ brokenRequired }' };
    const first = await execute(acme, 'fail-1', query, 'gql', { 'x-request-id': 'first-attempt' });
    const error = assertGraphqlErrors(first, brokenRequiredErrors);
    assert.equal(error.message, 'broken on purpose');
    assert.equal(body(first).request_id, 'first-attempt');

    const second = await execute(acme, 'fail-1', query, 'gql', { 'x-request-id': 'second-attempt' });
    assertGraphqlErrors(second, brokenRequiredErrors);
    assert.equal(second.headers['idempotent-replayed'], 'true');
    assert.equal(body(second).request_id, 'second-attempt');
    assert.equal(second.headers['x-request-id'], 'second-attempt');
    assert.deepEqual({ ...body(second), request_id: 'first-attempt' }, body(first));
    assert.equal(upstream.requests.length - before, 1, 'the failure was not retried upstream');
  });

  test('two concurrent requests with one key never both reach the upstream', async () => {
    const before = slow.requests;
    const [a, b] = await Promise.all([
      execute(acme, 'race-1', createUser('Racer'), 'slow'),
      execute(acme, 'race-1', createUser('Racer'), 'slow'),
    ]);
    assert.equal(slow.requests - before, 1, 'exactly one upstream request');
    const [winner, loser] = a.statusCode === 200 && a.headers['idempotent-replayed'] === undefined ? [a, b] : [b, a];
    assert.equal(winner.statusCode, 200, winner.body);
    assert.equal(winner.headers['idempotent-replayed'], undefined);
    assert.deepEqual(body(winner).data.data, { createUser: { id: 'slow-1', name: 'S' } });
    // Observed: the second request finds the key claimed and still running, and answers 409 at once.
    const error = assertError(loser, 409, 'conflict');
    assert.match(error.message, /Idempotency-Key/);
    assert.equal(loser.headers['idempotent-replayed'], undefined);

    // Once the first has finished, the same request is a replay.
    const later = await execute(acme, 'race-1', createUser('Racer'), 'slow');
    assert.equal(later.headers['idempotent-replayed'], 'true');
    assert.deepEqual(body(later), body(winner));
    assert.equal(slow.requests - before, 1);
  });

  test('an entry older than 24 h is gone: the key runs again, even with a different body', async () => {
    const first = await execute(acme, 'old-key', createUser('Yesterday'));
    assert.equal(first.statusCode, 200, first.body);
    const stored = await h.storage.db
      .selectFrom('idempotency_keys')
      .selectAll()
      .where('tenant_id', '=', 'acme')
      .where('key', '=', 'old-key')
      .executeTakeFirstOrThrow();
    const ttl = Date.parse(stored.expires_at) - Date.parse(stored.created_at);
    assert.equal(ttl, 24 * 60 * 60 * 1000, 'kept 24 h');
    assert.equal(stored.state, 'done');
    assert.equal(stored.http_status, 200);

    await h.storage.db
      .updateTable('idempotency_keys')
      .set({ expires_at: new Date(Date.now() - 1000).toISOString() })
      .where('tenant_id', '=', 'acme')
      .where('key', '=', 'old-key')
      .execute();
    const before = upstream.requests.length;
    const today = await execute(acme, 'old-key', createUser('Today'));
    assert.equal(today.statusCode, 200, today.body);
    assert.equal(today.headers['idempotent-replayed'], undefined);
    assert.equal(body(today).data.data.createUser.name, 'Today');
    assert.equal(upstream.requests.length - before, 1);
  });

  test('without the header nothing is kept: the same request runs twice', async () => {
    const before = upstream.requests.length;
    const one = await execute(acme, undefined, createUser('Twice'));
    const two = await execute(acme, undefined, createUser('Twice'));
    assert.equal(two.headers['idempotent-replayed'], undefined);
    assert.notEqual(body(one).data.data.createUser.id, body(two).data.data.createUser.id);
    assert.equal(upstream.requests.length - before, 2);
  });
});

describe('expired Idempotency-Key entries', () => {
  let h: Harness;
  let upstream: GraphqlServer;

  before(async () => {
    h = await harness();
    upstream = await startGraphqlServer();
  });
  after(async () => {
    await upstream.close();
    await h.close();
  });

  test('are purged for every key, not only when their own key comes back', async () => {
    await h.tenant('acme');
    const acme = { key: (await h.key('acme', ['integrations.*'])).key, tenant: 'acme' };
    const put = await h.call(acme, {
      method: 'PUT',
      url: '/api/v1/integrations/gql',
      payload: { connector: 'graphql-1.0.0', config: { base_url: upstream.url, ...noSchemaCheck } },
    });
    assert.equal(put.statusCode, 201, put.body);
    const day = 24 * 60 * 60 * 1000;
    const entry = (tenant: string, key: string, createdAt: number) => ({
      tenant_id: tenant,
      key,
      fingerprint: 'f',
      state: 'done',
      http_status: 200,
      response: '{"success":true,"data":{}}',
      created_at: new Date(createdAt).toISOString(),
      expires_at: new Date(createdAt + day).toISOString(),
    });
    await h.storage.db
      .insertInto('idempotency_keys')
      .values([
        entry('acme', 'stale-1', Date.now() - 2 * day),
        entry('globex', 'stale-2', Date.now() - day - 1000),
        entry('acme', 'fresh', Date.now() - 1000),
      ])
      .execute();

    const res = await h.call(acme, {
      method: 'POST',
      url: '/api/v1/integrations/gql/execute',
      headers: { 'idempotency-key': 'new-key' },
      payload: { operation: 'test' },
    });
    assert.equal(res.statusCode, 200, res.body);
    const keys = await h.storage.db.selectFrom('idempotency_keys').select(['tenant_id', 'key']).orderBy('key').execute();
    assert.deepEqual(
      keys.map((k) => `${k.tenant_id}/${k.key}`),
      ['acme/fresh', 'acme/new-key'],
    );
  });
});
