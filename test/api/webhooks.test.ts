import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { build } from '../../src/app.ts';
import { assertError, issuePaths } from '../support/assertions.ts';
import { assertJsonFailure, cliJson, runCli } from '../support/cli.ts';
import { type GraphqlServer, startGraphqlServer } from '../support/graphql-server.ts';
import { type Auth, body, type Harness, harness } from '../support/harness.ts';
import { until } from '../support/until.ts';
import { type Received, startReceiver, verifies, type WebhookReceiver } from '../support/webhook-receiver.ts';

/** When this file began: timestamps the service writes during its tests lie between it and now. */
const fileStarted = Date.now();

const day = 86_400_000;

/** A webhook created through the API: its id and secret. */
async function createWebhook(h: Harness, auth: Auth, payload: Record<string, unknown>): Promise<{ id: string; secret: string }> {
  const res = await h.call(auth, { method: 'POST', url: '/api/v1/webhooks', payload });
  assert.equal(res.statusCode, 201, res.body);
  const { id, secret } = body(res).data;
  return { id, secret };
}

async function deliveries(h: Harness, auth: Auth, id: string, query = '?limit=100') {
  const res = await h.call(auth, { method: 'GET', url: `/api/v1/webhooks/${id}/deliveries${query}` });
  assert.equal(res.statusCode, 200, res.body);
  return body(res).data as Array<Record<string, unknown>>;
}

/** Waits until the endpoint has `n` attempts recorded (read from storage: polling the API would use up the key's limit). */
async function attemptsRecorded(h: Harness, auth: Auth, id: string, n: number) {
  await until(
    async () =>
      (await h.storage.db.selectFrom('webhook_deliveries').select('id').where('webhook_id', '=', id).execute()).length >= n,
    `${n} attempts recorded`,
  );
  return deliveries(h, auth, id);
}

/** An execution as an event carries it: as the API shows it, but for its callers' names, read only when shown. */
function eventRecordOf({ api_key_name: _key, user_name: _user, ...record }: Record<string, unknown>) {
  return record;
}

/** Every request the receiver got verifies with `secret`, through the standardwebhooks package. */
function assertAllVerified(received: Received[], secret: string): void {
  assert.ok(received.length > 0, 'the receiver got nothing');
  for (const r of received) {
    assert.ok(r.verifiedWith.includes(secret), `not verified: ${r.headers['webhook-id']} ${r.headers['webhook-signature']}`);
    assert.equal(r.headers['content-type'], 'application/json');
  }
}

/** The value of `ix_webhook_deliveries_total{outcome}` on /metrics. */
async function deliveredCount(h: Harness, outcome: string): Promise<number> {
  const res = await h.app.inject({ method: 'GET', url: '/metrics' });
  const line = res.body.split('\n').find((l) => l.startsWith(`ix_webhook_deliveries_total{outcome="${outcome}"}`));
  return line ? Number(line.split(' ').pop()) : 0;
}

describe('webhooks: endpoints, signatures and events', () => {
  let h: Harness;
  let upstream: GraphqlServer;
  let receiver: WebhookReceiver;
  let writer: Auth;
  let globex: Auth;

  before(async () => {
    h = await harness();
    upstream = await startGraphqlServer();
    receiver = await startReceiver();
    await h.tenant('acme');
    await h.tenant('globex');
    writer = await h.auth('acme', ['webhooks.*', 'integrations.*', 'executions.read']);
    globex = await h.auth('globex', ['webhooks.*', 'executions.read']);
    const put = await h.call(writer, {
      method: 'PUT',
      url: '/api/v1/integrations/crm',
      payload: { connector: 'graphql-1.0.0', config: { base_url: upstream.url } },
    });
    assert.equal(put.statusCode, 201, put.body);
  });
  after(async () => {
    await receiver.close();
    await upstream.close();
    await h.close();
  });

  test('create shows the secret once; get, list, patch and delete manage the endpoint', async () => {
    const res = await h.call(writer, {
      method: 'POST',
      url: '/api/v1/webhooks',
      payload: { url: 'https://hooks.example.com/a', events: ['execution.failed'], description: 'alerts' },
    });
    assert.equal(res.statusCode, 201, res.body);
    const created = body(res).data;
    assert.match(created.id, /^whk_[0-9a-z]+$/);
    assert.match(created.secret, /^whsec_[A-Za-z0-9+/]{43}=$/);
    assert.equal(Buffer.from(created.secret.slice(6), 'base64').length, 32);
    assert.deepEqual(
      { ...created, id: undefined, secret: undefined, created_at: undefined, updated_at: undefined },
      {
        id: undefined,
        secret: undefined,
        created_at: undefined,
        updated_at: undefined,
        tenant_id: 'acme',
        url: 'https://hooks.example.com/a',
        events: ['execution.failed'],
        description: 'alerts',
        disabled: false,
        failing_since: null,
        previous_secret_expires_at: null,
      },
    );
    // The secret is stored sealed, never as given.
    const row = await h.storage.db.selectFrom('webhooks').selectAll().where('id', '=', created.id).executeTakeFirstOrThrow();
    assert.ok(!row.secret.includes(created.secret.slice(6)));

    const got = await h.call(writer, { method: 'GET', url: `/api/v1/webhooks/${created.id}` });
    assert.equal(got.statusCode, 200);
    assert.equal(body(got).data.secret, undefined);
    assert.ok(!got.body.includes(created.secret.slice(6)));

    const second = await createWebhook(h, writer, { url: 'https://hooks.example.com/b', events: ['*'] });
    const page1 = await h.call(writer, { method: 'GET', url: '/api/v1/webhooks?limit=1' });
    assert.deepEqual(
      body(page1).data.map((w: { id: string }) => w.id),
      [created.id],
    );
    const cursor = body(page1).pagination.next_cursor;
    const page2 = await h.call(writer, { method: 'GET', url: `/api/v1/webhooks?limit=1&cursor=${cursor}` });
    assert.deepEqual(
      body(page2).data.map((w: { id: string }) => w.id),
      [second.id],
    );

    const patched = await h.call(writer, {
      method: 'PATCH',
      url: `/api/v1/webhooks/${created.id}`,
      payload: { events: ['*'], description: null, url: 'https://hooks.example.com/c' },
    });
    assert.equal(patched.statusCode, 200, patched.body);
    assert.deepEqual(
      [body(patched).data.events, body(patched).data.description, body(patched).data.url],
      [['*'], null, 'https://hooks.example.com/c'],
    );

    for (const id of [created.id, second.id]) {
      const deleted = await h.call(writer, { method: 'DELETE', url: `/api/v1/webhooks/${id}` });
      assert.deepEqual(body(deleted), { success: true, data: { id, deleted: true } });
      assertError(await h.call(writer, { method: 'GET', url: `/api/v1/webhooks/${id}` }), 404, 'not_found');
    }
  });

  test('bad input is 400 validation_failed naming each problem', async () => {
    const post = (payload: unknown) => h.call(writer, { method: 'POST', url: '/api/v1/webhooks', payload: payload as object });
    assert.deepEqual(issuePaths(await post({})), ['events', 'url']);
    assert.deepEqual(issuePaths(await post({ url: 'https://h.example', events: [] })), ['events']);
    assert.deepEqual(issuePaths(await post({ url: 'https://h.example', events: ['execution.started'] })), ['events.0']);
    assert.deepEqual(issuePaths(await post({ url: 'https://h.example', events: ['*', 'execution.failed'] })), ['events']);
    assert.deepEqual(issuePaths(await post({ url: 'ftp://h.example/x', events: ['*'] })), ['url']);
    assert.deepEqual(issuePaths(await post({ url: 'https://user:pw@h.example/x', events: ['*'] })), ['url']);
    assert.deepEqual(issuePaths(await post({ url: 42, events: ['*'], extra: 1 })), ['extra', 'url']);
    assert.deepEqual(issuePaths(await post({ url: 'https://h.example', events: '*' })), ['events']);
    const { id } = await createWebhook(h, writer, { url: 'https://hooks.example.com/v', events: ['*'] });
    const patch = (payload: object) => h.call(writer, { method: 'PATCH', url: `/api/v1/webhooks/${id}`, payload });
    assert.deepEqual(issuePaths(await patch({})), ['(root)']);
    assert.deepEqual(issuePaths(await patch({ disabled: 'no' })), ['disabled']);
    assert.deepEqual(issuePaths(await patch({ url: 'http://a:b@h.example' })), ['url']);
    assertError(await h.call(writer, { method: 'GET', url: '/api/v1/webhooks?cursor=zz' }), 400, 'validation_failed');
    await h.call(writer, { method: 'DELETE', url: `/api/v1/webhooks/${id}` });
  });

  test("another tenant's webhook is 404 on every route, and never listed", async () => {
    const { id } = await createWebhook(h, writer, { url: receiver.url, events: ['execution.canceled'] });
    for (const [method, path] of [
      ['GET', ''],
      ['PATCH', ''],
      ['DELETE', ''],
      ['POST', '/rotate-secret'],
      ['POST', '/test'],
      ['GET', '/deliveries'],
    ] as const) {
      const res = await h.call(globex, {
        method,
        url: `/api/v1/webhooks/${id}${path}`,
        ...(method === 'PATCH' && { payload: { disabled: true } }),
      });
      assertError(res, 404, 'not_found');
    }
    assert.deepEqual(body(await h.call(globex, { method: 'GET', url: '/api/v1/webhooks' })).data, []);
    assert.equal(receiver.received.length, 0, 'no test event went out for the other tenant');
    await h.call(writer, { method: 'DELETE', url: `/api/v1/webhooks/${id}` });
  });

  test('webhooks.read reads, webhooks.write changes: 403 insufficient_scope otherwise', async () => {
    const reader = await h.auth('acme', ['webhooks.read']);
    const other = await h.auth('acme', ['executions.read']);
    const { id } = await createWebhook(h, writer, { url: 'https://hooks.example.com/s', events: ['*'] });
    assert.equal((await h.call(reader, { method: 'GET', url: '/api/v1/webhooks' })).statusCode, 200);
    assert.equal((await h.call(reader, { method: 'GET', url: `/api/v1/webhooks/${id}/deliveries` })).statusCode, 200);
    for (const [method, url] of [
      ['POST', '/api/v1/webhooks'],
      ['PATCH', `/api/v1/webhooks/${id}`],
      ['DELETE', `/api/v1/webhooks/${id}`],
      ['POST', `/api/v1/webhooks/${id}/rotate-secret`],
      ['POST', `/api/v1/webhooks/${id}/test`],
    ] as const) {
      const res = await h.call(reader, { method, url, payload: { url: 'https://x.example', events: ['*'] } });
      assert.equal(assertError(res, 403, 'insufficient_scope').details?.required_scope, 'webhooks.write', `${method} ${url}`);
    }
    const denied = await h.call(other, { method: 'GET', url: `/api/v1/webhooks/${id}` });
    assert.equal(assertError(denied, 403, 'insufficient_scope').details?.required_scope, 'webhooks.read');
    // webhooks.write alone may not subscribe to what it may not read: creating or changing needs executions.read.
    const writeOnly = await h.auth('acme', ['webhooks.*']);
    for (const [method, url] of [
      ['POST', '/api/v1/webhooks'],
      ['PATCH', `/api/v1/webhooks/${id}`],
    ] as const) {
      const res = await h.call(writeOnly, { method, url, payload: { url: 'https://x.example', events: ['*'] } });
      assert.equal(assertError(res, 403, 'insufficient_scope').details?.required_scope, 'executions.read', `${method} ${url}`);
    }
    assert.equal((await h.call(writeOnly, { method: 'GET', url: '/api/v1/webhooks' })).body.includes('x.example'), false);
    await h.call(writer, { method: 'DELETE', url: `/api/v1/webhooks/${id}` });
  });

  test('the test event is signed per Standard Webhooks; a wrong secret or a changed body fails verification', async () => {
    const { id, secret } = await createWebhook(h, writer, { url: receiver.url, events: ['execution.failed'] });
    receiver.secrets.push(secret);
    receiver.received.length = 0;
    const res = await h.call(writer, { method: 'POST', url: `/api/v1/webhooks/${id}/test` });
    assert.equal(res.statusCode, 200, res.body);
    const answer = body(res).data;
    assert.equal(answer.delivered, true);
    assert.match(answer.event_id, /^evt_/);
    assert.deepEqual(
      { ...answer.delivery, id: undefined, duration_ms: undefined, created_at: undefined },
      {
        id: undefined,
        duration_ms: undefined,
        created_at: undefined,
        webhook_id: id,
        event_id: answer.event_id,
        event_type: 'webhook.test',
        attempt: 1,
        http_status: 200,
        error: null,
        next_attempt_at: null,
      },
    );
    assert.equal(receiver.received.length, 1);
    const [got] = receiver.received;
    assertAllVerified(receiver.received, secret);
    assert.equal(got.headers['webhook-id'], answer.event_id);
    assert.match(String(got.headers['webhook-signature']), /^v1,[A-Za-z0-9+/]{43}=$/);
    // Signed during this file's run: not before it began, not after now (whole seconds).
    const signedAt = Number(got.headers['webhook-timestamp']);
    assert.ok(signedAt >= Math.floor(fileStarted / 1000) && signedAt <= Math.ceil(Date.now() / 1000), String(signedAt));
    assert.equal(got.payload.type, 'webhook.test');
    assert.equal(got.payload.data.webhook_id, id);
    assert.match(got.payload.timestamp, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);

    const other = await createWebhook(h, writer, { url: 'https://hooks.example.com/o', events: ['*'] });
    assert.equal(verifies(other.secret, got.body, got.headers), false, 'another secret does not verify');
    assert.equal(verifies(secret, got.body.replace('webhook.test', 'webhook.tesT'), got.headers), false, 'a changed body');
    const stale = { ...got.headers, 'webhook-id': 'evt_other' };
    assert.equal(verifies(secret, got.body, stale), false, 'another id');

    const listed = await deliveries(h, writer, id);
    assert.deepEqual(listed, [answer.delivery]);
    for (const w of [id, other.id]) await h.call(writer, { method: 'DELETE', url: `/api/v1/webhooks/${w}` });
    receiver.secrets.length = 0;
  });

  test('synchronous executions emit events to the endpoints that want their type, with the record and no answer', async () => {
    const succeeded = await startReceiver();
    const failed = await startReceiver();
    try {
      const a = await createWebhook(h, writer, { url: succeeded.url, events: ['execution.succeeded'] });
      const b = await createWebhook(h, writer, { url: failed.url, events: ['execution.failed', 'execution.canceled'] });
      succeeded.secrets.push(a.secret);
      failed.secrets.push(b.secret);
      const ok = await h.call(writer, {
        method: 'POST',
        url: '/api/v1/integrations/crm/execute',
        payload: { operation: 'receive', query: '{ usersList { id name } }' },
      });
      assert.equal(ok.statusCode, 200, ok.body);
      const bad = await h.call(writer, {
        method: 'POST',
        url: '/api/v1/integrations/crm/execute',
        payload: { operation: 'receive', query: '{ brokenRequired }' },
      });
      assert.equal(bad.statusCode, 502, bad.body);

      await until(() => succeeded.received.length >= 1 && failed.received.length >= 1, 'both events delivered');
      const listed = body(await h.call(writer, { method: 'GET', url: '/api/v1/executions?limit=2' })).data;
      const [badRecord, okRecord] = listed;
      const [s] = succeeded.received;
      assert.equal(s.payload.type, 'execution.succeeded');
      // The record as the API shows it; a synchronous answer is never stored, so the event carries none.
      assert.deepEqual(s.payload.data, eventRecordOf(okRecord));
      assert.equal('result' in s.payload.data, false);
      const [f] = failed.received;
      assert.equal(f.payload.type, 'execution.failed');
      assert.deepEqual(f.payload.data, eventRecordOf(badRecord));
      // Nothing of either answer, nor of either request but the name it gave its operation (the record's
      // operation_name), is in the stored events.
      const stored = JSON.stringify(await h.storage.db.selectFrom('webhook_events').selectAll().execute());
      for (const text of [JSON.stringify(body(ok).data), '{ brokenRequired }', '{ usersList { id name } }']) {
        assert.ok(!stored.includes(text), text);
      }
      assertAllVerified(succeeded.received, a.secret);
      assertAllVerified(failed.received, b.secret);
      // Each endpoint got only the types it asked for.
      assert.deepEqual(
        succeeded.received.map((r) => r.payload.type),
        ['execution.succeeded'],
      );
      assert.deepEqual(
        failed.received.map((r) => r.payload.type),
        ['execution.failed'],
      );
      for (const w of [a.id, b.id]) await h.call(writer, { method: 'DELETE', url: `/api/v1/webhooks/${w}` });
    } finally {
      await succeeded.close();
      await failed.close();
    }
  });

  test('an async execution (Prefer: respond-async) emits its event with the record as GET /executions/{id} shows it', async () => {
    const all = await startReceiver();
    try {
      const w = await createWebhook(h, writer, { url: all.url, events: ['*'] });
      all.secrets.push(w.secret);
      const accepted = await h.call(writer, {
        method: 'POST',
        url: '/api/v1/integrations/crm/execute',
        headers: { prefer: 'respond-async' },
        payload: { operation: 'receive', query: '{ usersList { id } }' },
      });
      assert.equal(accepted.statusCode, 202, accepted.body);
      const executionId = body(accepted).data.execution_id;
      const event = (await until(
        () => all.received.find((r) => r.payload.data.id === executionId),
        'the async event',
      )) as Received;
      const shown = body(await h.call(writer, { method: 'GET', url: `/api/v1/executions/${executionId}` })).data;
      assert.equal(event.payload.type, 'execution.succeeded');
      assert.equal(event.payload.data.mode, 'async');
      assert.deepEqual(event.payload.data, eventRecordOf(shown));
      assert.equal(event.payload.data.result.data.message_count, 25);
      assertAllVerified(all.received, w.secret);
      await h.call(writer, { method: 'DELETE', url: `/api/v1/webhooks/${w.id}` });
    } finally {
      await all.close();
    }
  });

  test('a tenant whose endpoints are all disabled or deleted stores no events', async () => {
    const { id } = await createWebhook(h, writer, { url: receiver.url, events: ['*'] });
    await h.call(writer, { method: 'PATCH', url: `/api/v1/webhooks/${id}`, payload: { disabled: true } });
    const count = async () =>
      (await h.storage.db.selectFrom('webhook_events').select('id').where('tenant_id', '=', 'acme').execute()).length;
    const before = await count();
    const res = await h.call(writer, { method: 'POST', url: '/api/v1/integrations/crm/execute', payload: { operation: 'test' } });
    assert.equal(res.statusCode, 200);
    assertError(await h.call(writer, { method: 'POST', url: `/api/v1/webhooks/${id}/test` }), 409, 'conflict');
    await h.call(writer, { method: 'DELETE', url: `/api/v1/webhooks/${id}` });
    assert.equal(await count(), before);
  });
});

describe('webhooks: retries, timeouts, disabling and rotation', () => {
  let h: Harness;
  let auth: Auth;
  /** The deliveries' clock runs this far ahead of the wall clock. */
  let aheadMs = 0;

  before(async () => {
    h = await harness(
      {},
      {
        webhooks: { retryDelaysMs: [100, 300, 600], timeoutMs: 400, now: () => new Date(Date.now() + aheadMs) },
      },
    );
    await h.tenant('acme');
    auth = await h.auth('acme', ['webhooks.*', 'executions.read']);
  });
  after(() => h.close());

  test('a receiver that answers 500 then 200 gets the same event again after growing delays, each attempt recorded', async () => {
    const receiver = await startReceiver();
    try {
      const w = await createWebhook(h, auth, { url: receiver.url, events: ['*'] });
      receiver.secrets.push(w.secret);
      receiver.answers.push(500, 503);
      const failedBefore = await deliveredCount(h, 'failed');
      const first = body(await h.call(auth, { method: 'POST', url: `/api/v1/webhooks/${w.id}/test` })).data;
      assert.equal(first.delivered, false);
      assert.equal(first.delivery.http_status, 500);
      assert.equal(first.delivery.error, 'The receiver answered HTTP 500.');

      const attempts = await attemptsRecorded(h, auth, w.id, 3);
      assert.deepEqual(
        attempts.map((d) => [d.attempt, d.http_status, d.event_id]),
        [
          [3, 200, first.event_id],
          [2, 503, first.event_id],
          [1, 500, first.event_id],
        ],
      );
      const delay = (d: Record<string, unknown>) => Date.parse(String(d.next_attempt_at)) - Date.parse(String(d.created_at));
      assert.deepEqual([delay(attempts[2]), delay(attempts[1])], [100, 300]);
      assert.equal(attempts[0].next_attempt_at, null);
      assert.equal(attempts[0].error, null);
      // One event, one id on every attempt, each one signed.
      assert.equal(receiver.received.length, 3);
      assert.deepEqual(new Set(receiver.received.map((r) => r.headers['webhook-id'])), new Set([first.event_id]));
      assert.deepEqual(new Set(receiver.received.map((r) => r.body)).size, 1);
      assertAllVerified(receiver.received, w.secret);
      assert.equal((await deliveredCount(h, 'failed')) - failedBefore, 2);
      const hook = body(await h.call(auth, { method: 'GET', url: `/api/v1/webhooks/${w.id}` })).data;
      assert.equal(hook.failing_since, null, 'delivered: its run of failures is over');
      await h.call(auth, { method: 'DELETE', url: `/api/v1/webhooks/${w.id}` });
    } finally {
      await receiver.close();
    }
  });

  test('a receiver that hangs past the timeout fails the attempt; after the last retry the delivery is given up', async () => {
    const receiver = await startReceiver();
    try {
      receiver.otherwise = 'hang';
      const w = await createWebhook(h, auth, { url: receiver.url, events: ['*'] });
      receiver.secrets.push(w.secret);
      const gaveUpBefore = await deliveredCount(h, 'gave_up');
      const first = body(await h.call(auth, { method: 'POST', url: `/api/v1/webhooks/${w.id}/test` })).data;
      assert.equal(first.delivered, false);
      assert.equal(first.delivery.http_status, null);
      assert.match(first.delivery.error, /did not answer within 0\.4 s/);
      const attempts = await attemptsRecorded(h, auth, w.id, 4);
      assert.deepEqual(
        attempts.map((d) => d.attempt),
        [4, 3, 2, 1],
      );
      assert.equal(attempts[0].next_attempt_at, null, 'given up: no attempt follows the last');
      assert.ok(attempts.every((d) => d.http_status === null && /did not answer/.test(String(d.error))));
      assert.equal((await deliveredCount(h, 'gave_up')) - gaveUpBefore, 1);
      assertAllVerified(receiver.received, w.secret);
      const hook = body(await h.call(auth, { method: 'GET', url: `/api/v1/webhooks/${w.id}` })).data;
      assert.equal(hook.disabled, false);
      assert.ok(hook.failing_since);
      await h.call(auth, { method: 'DELETE', url: `/api/v1/webhooks/${w.id}` });
    } finally {
      await receiver.close();
    }
  });

  test('after a rotation both secrets sign for 24 hours, then only the new one', async () => {
    const receiver = await startReceiver();
    try {
      const w = await createWebhook(h, auth, { url: receiver.url, events: ['*'] });
      const rotated = await h.call(auth, { method: 'POST', url: `/api/v1/webhooks/${w.id}/rotate-secret` });
      assert.equal(rotated.statusCode, 200, rotated.body);
      const { secret: newSecret, previous_secret_expires_at: overlapEnd } = body(rotated).data;
      assert.match(newSecret, /^whsec_/);
      assert.notEqual(newSecret, w.secret);
      assert.equal(Date.parse(overlapEnd) - Date.parse(body(rotated).data.updated_at), day);
      receiver.secrets.push(w.secret, newSecret);

      await h.call(auth, { method: 'POST', url: `/api/v1/webhooks/${w.id}/test` });
      const [during] = receiver.received;
      assert.equal(String(during.headers['webhook-signature']).split(' ').length, 2);
      assert.deepEqual(during.verifiedWith.toSorted(), [w.secret, newSecret].toSorted());

      aheadMs = day + 60_000;
      await h.call(auth, { method: 'POST', url: `/api/v1/webhooks/${w.id}/test` });
      const afterOverlap = receiver.received[1];
      assert.equal(String(afterOverlap.headers['webhook-signature']).split(' ').length, 1);
      assert.deepEqual(afterOverlap.verifiedWith, [newSecret]);
      await h.call(auth, { method: 'DELETE', url: `/api/v1/webhooks/${w.id}` });
    } finally {
      aheadMs = 0;
      await receiver.close();
    }
  });

  test('an endpoint failing for 5 days is disabled; enabling it again starts over', async () => {
    const receiver = await startReceiver();
    try {
      receiver.otherwise = 500;
      const w = await createWebhook(h, auth, { url: receiver.url, events: ['*'] });
      receiver.secrets.push(w.secret);
      const disabledBefore = await deliveredCount(h, 'disabled');
      await h.call(auth, { method: 'POST', url: `/api/v1/webhooks/${w.id}/test` });
      const failing = body(await h.call(auth, { method: 'GET', url: `/api/v1/webhooks/${w.id}` })).data;
      assert.ok(failing.failing_since);
      assert.equal(failing.disabled, false);

      // Five days of failures later, the next attempt fails too: the endpoint is disabled.
      aheadMs = 5 * day;
      await attemptsRecorded(h, auth, w.id, 2);
      const hook = body(await h.call(auth, { method: 'GET', url: `/api/v1/webhooks/${w.id}` })).data;
      assert.equal(hook.disabled, true);
      assert.equal(hook.failing_since, failing.failing_since);
      const attempts = await deliveries(h, auth, w.id);
      assert.equal(attempts[0].next_attempt_at, null, 'no attempt follows the one that disabled it');
      assert.equal(attempts[0].attempt, 2);
      assert.equal((await deliveredCount(h, 'disabled')) - disabledBefore, 1);
      assertError(await h.call(auth, { method: 'POST', url: `/api/v1/webhooks/${w.id}/test` }), 409, 'conflict');

      const enabled = await h.call(auth, { method: 'PATCH', url: `/api/v1/webhooks/${w.id}`, payload: { disabled: false } });
      assert.equal(body(enabled).data.disabled, false);
      assert.equal(body(enabled).data.failing_since, null);
      receiver.otherwise = 200;
      const test = body(await h.call(auth, { method: 'POST', url: `/api/v1/webhooks/${w.id}/test` })).data;
      assert.equal(test.delivered, true);
      assertAllVerified(receiver.received, w.secret);
      await h.call(auth, { method: 'DELETE', url: `/api/v1/webhooks/${w.id}` });
    } finally {
      aheadMs = 0;
      await receiver.close();
    }
  });
});

describe('webhooks: the egress policy with IX_WEBHOOK_ALLOW_PRIVATE=false', () => {
  let h: Harness;
  let auth: Auth;
  let receiver: WebhookReceiver;

  before(async () => {
    h = await harness({ IX_WEBHOOK_ALLOW_PRIVATE: 'false' }, { webhooks: { retryDelaysMs: [60_000] } });
    await h.tenant('acme');
    auth = await h.auth('acme', ['webhooks.*', 'executions.read']);
    receiver = await startReceiver();
  });
  after(async () => {
    await receiver.close();
    await h.close();
  });

  test('a URL whose host is a refused address is 422 egress_denied when it is set', async () => {
    for (const url of [receiver.url, 'http://[::1]:9/x', 'http://10.1.2.3/x', 'http://169.254.169.254/latest']) {
      const res = await h.call(auth, { method: 'POST', url: '/api/v1/webhooks', payload: { url, events: ['*'] } });
      assertError(res, 422, 'egress_denied');
    }
    const { id } = await createWebhook(h, auth, { url: 'https://hooks.example.com/x', events: ['*'] });
    const res = await h.call(auth, { method: 'PATCH', url: `/api/v1/webhooks/${id}`, payload: { url: 'http://192.168.1.1/' } });
    assertError(res, 422, 'egress_denied');
  });

  test('a host name that resolves to a private address is refused at delivery, recorded and retried', async () => {
    const url = receiver.url.replace('127.0.0.1', 'localhost');
    const { id } = await createWebhook(h, auth, { url, events: ['*'] });
    const res = await h.call(auth, { method: 'POST', url: `/api/v1/webhooks/${id}/test` });
    const { delivered, delivery } = body(res).data;
    assert.equal(delivered, false);
    assert.match(delivery.error, /refused by the egress policy/);
    assert.equal(delivery.http_status, null);
    assert.ok(delivery.next_attempt_at, 'retried later');
    assert.equal(receiver.received.length, 0);
  });
});

describe('webhooks: deliveries pending when the app stops are made after it starts again', () => {
  let h: Harness;
  let receiver: WebhookReceiver;
  let upstream: GraphqlServer;
  let next: FastifyInstance | undefined;

  before(async () => {
    // The first app serves HTTP only: it stores events and their jobs, and delivers nothing.
    h = await harness({ IX_WORKER: 'false' });
    receiver = await startReceiver();
    upstream = await startGraphqlServer();
  });
  after(async () => {
    await next?.close();
    await receiver.close();
    await upstream.close();
    await h.close();
  });

  test('a sync execution and a canceled async one, stored by one app, are delivered by the next', async () => {
    await h.tenant('acme');
    const auth = await h.auth('acme', ['webhooks.*', 'integrations.*', 'executions.read']);
    const put = await h.call(auth, {
      method: 'PUT',
      url: '/api/v1/integrations/crm',
      payload: { connector: 'graphql-1.0.0', config: { base_url: upstream.url } },
    });
    assert.equal(put.statusCode, 201, put.body);
    const w = await createWebhook(h, auth, { url: receiver.url, events: ['*'] });
    receiver.secrets.push(w.secret);
    const sync = await h.call(auth, { method: 'POST', url: '/api/v1/integrations/crm/execute', payload: { operation: 'test' } });
    assert.equal(sync.statusCode, 200, sync.body);
    const accepted = await h.call(auth, {
      method: 'POST',
      url: '/api/v1/integrations/crm/execute',
      headers: { prefer: 'respond-async' },
      payload: { operation: 'test' },
    });
    const executionId = body(accepted).data.execution_id;
    const canceled = await h.call(auth, { method: 'POST', url: `/api/v1/executions/${executionId}/cancel` });
    assert.equal(canceled.statusCode, 200, canceled.body);
    await h.app.close();
    assert.equal(receiver.received.length, 0, 'the first app delivered nothing');

    next = await build({ ...h.config, worker: true }, { storage: h.storage });
    await until(() => receiver.received.length >= 2, 'both events delivered by the next app');
    const byType = new Map(receiver.received.map((r) => [r.payload.type, r.payload]));
    assert.deepEqual([...byType.keys()].toSorted(), ['execution.canceled', 'execution.succeeded']);
    const canceledEvent = byType.get('execution.canceled');
    assert.equal(canceledEvent.data.id, executionId);
    assert.equal(canceledEvent.data.status, 'canceled');
    assert.equal(canceledEvent.data.result, null);
    assert.equal(byType.get('execution.succeeded').data.request_id, sync.headers['x-request-id']);
    assertAllVerified(receiver.received, w.secret);
  });
});

describe('webhooks: the CLI', () => {
  let h: Harness;
  let receiver: WebhookReceiver;
  let upstream: GraphqlServer;
  let worker: FastifyInstance | undefined;
  let env: Record<string, string>;

  before(async () => {
    h = await harness({ IX_WORKER: 'false' });
    receiver = await startReceiver();
    upstream = await startGraphqlServer();
    await h.tenant('acme');
    env = { DATABASE_URL: h.config.databaseUrl, ...(h.config.masterKey && { IX_MASTER_KEY: h.config.masterKey }) };
  });
  after(async () => {
    await worker?.close();
    await receiver.close();
    await upstream.close();
    await h.close();
  });

  test('webhooks create, list and delete; executions cancel sends execution.canceled to the endpoints', async () => {
    const created = await cliJson(
      ['webhooks', 'create', '--tenant', 'acme', '--url', receiver.url, '--events', 'execution.canceled'],
      env,
    );
    assert.match(String(created.secret), /^whsec_/);
    assert.deepEqual(created.events, ['execution.canceled']);
    receiver.secrets.push(String(created.secret));
    const listed = await cliJson(['webhooks', 'list', '--tenant', 'acme'], env);
    assert.deepEqual(
      listed.data.map((w: { id: string }) => w.id),
      [created.id],
    );
    assert.equal(listed.data[0].secret, undefined);
    assertJsonFailure(await runCli(['webhooks', 'create', '--tenant', 'acme', '--json'], env), 2, 'usage_error', /--url/);
    const refused = await runCli(['webhooks', 'create', '--tenant', 'acme', '--url', 'ftp://x.example', '--json'], env);
    assert.equal(refused.code, 2, refused.stderr);
    assert.equal(JSON.parse(refused.stderr).error.code, 'validation_failed');

    const auth = await h.auth('acme', ['integrations.*']);
    const put = await h.call(auth, {
      method: 'PUT',
      url: '/api/v1/integrations/crm',
      payload: { connector: 'graphql-1.0.0', config: { base_url: upstream.url } },
    });
    assert.equal(put.statusCode, 201, put.body);
    const accepted = await h.call(auth, {
      method: 'POST',
      url: '/api/v1/integrations/crm/execute',
      headers: { prefer: 'respond-async' },
      payload: { operation: 'test' },
    });
    const executionId = body(accepted).data.execution_id;
    const canceled = await cliJson(['executions', 'cancel', executionId, '--tenant', 'acme'], env);
    assert.equal(canceled.status, 'canceled');
    assert.equal(canceled.id, executionId);
    const again = await runCli(['executions', 'cancel', executionId, '--tenant', 'acme', '--json'], env);
    assert.equal(again.code, 1, again.stderr);
    assert.deepEqual(JSON.parse(again.stderr).error.details, { status: 'canceled' });
    assert.equal(JSON.parse(again.stderr).error.code, 'conflict');
    assertJsonFailure(
      await runCli(['executions', 'cancel', 'exe_nope', '--tenant', 'acme', '--json'], env),
      1,
      'not_found',
      /exe_nope/,
    );

    // The CLI stored the event and its job; a server that works the queue delivers it.
    worker = await build({ ...h.config, worker: true }, { storage: h.storage });
    const event = (await until(() => receiver.received[0], 'the canceled event')) as Received;
    assert.equal(event.payload.type, 'execution.canceled');
    assert.equal(event.payload.data.id, executionId);
    assert.equal(event.payload.data.result, null);
    assertAllVerified(receiver.received, String(created.secret));

    assert.deepEqual(await cliJson(['webhooks', 'delete', String(created.id), '--tenant', 'acme'], env), {
      id: created.id,
      deleted: true,
    });
    assert.deepEqual((await cliJson(['webhooks', 'list', '--tenant', 'acme'], env)).data, []);
    assertJsonFailure(
      await runCli(['webhooks', 'delete', String(created.id), '--tenant', 'acme', '--json'], env),
      1,
      'not_found',
      /No webhook/,
    );
  });
});
