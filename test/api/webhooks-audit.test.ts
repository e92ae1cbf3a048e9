import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { AuditEvent } from '../../src/storage/audit-events.ts';
import { listAuditEvents } from '../../src/storage/audit-events.ts';
import { assertError } from '../support/assertions.ts';
import { cliJson } from '../support/cli.ts';
import { type Auth, body, type Harness, harness } from '../support/harness.ts';
import { until } from '../support/until.ts';
import { startReceiver, type WebhookReceiver } from '../support/webhook-receiver.ts';

/**
 * Every change of a webhook writes one audit event in its own transaction (docs/audit.md): who (the key, the CLI, the
 * service itself), which endpoint, which fields; never a secret. A refused change, or one that changes nothing, writes
 * none; neither does a test event.
 */

const day = 86_400_000;

/** The tenant's events, oldest first. */
async function events(h: Harness, tenant = 'acme'): Promise<AuditEvent[]> {
  return (await listAuditEvents(h.storage.db, tenant, { limit: 100 })).items.toReversed();
}

/** The events written while `work` ran (each test reads only its own). */
async function written(h: Harness, work: () => Promise<unknown>, tenant = 'acme'): Promise<AuditEvent[]> {
  const before = new Set((await events(h, tenant)).map((e) => e.id));
  await work();
  return (await events(h, tenant)).filter((e) => !before.has(e.id));
}

/** action, target and changes: what a test compares. */
const what = (e: AuditEvent) => [e.action, e.target.type, e.target.id, e.changes];

describe('webhooks: each change writes its audit event', () => {
  let h: Harness;
  let writer: Auth;
  let writerKeyId: string;
  let receiver: WebhookReceiver;

  before(async () => {
    h = await harness();
    receiver = await startReceiver();
    await h.tenant('acme');
    await h.tenant('globex');
    const { key, record } = await h.key('acme', ['webhooks.*', 'executions.read'], { name: 'hooks admin' });
    writer = { key, tenant: 'acme' };
    writerKeyId = record.id;
  });
  after(async () => {
    await receiver.close();
    await h.close();
  });

  test('create, change, rotate and delete: one event each, naming the key, the endpoint and the fields', async () => {
    let id = '';
    let requestId = '';
    const created = await written(h, async () => {
      const res = await h.call(writer, {
        method: 'POST',
        url: '/api/v1/webhooks',
        payload: { url: 'https://hooks.example.com/a', events: ['execution.failed'], description: 'alerts' },
      });
      assert.equal(res.statusCode, 201, res.body);
      id = body(res).data.id;
      requestId = String(res.headers['x-request-id']);
    });
    assert.deepEqual(created.map(what), [['webhook.created', 'webhook', id, ['url', 'events', 'description']]]);
    assert.deepEqual(created[0].actor, { type: 'api_key', id: writerKeyId, name: 'hooks admin' });
    assert.equal(created[0].request_id, requestId);
    assert.equal(created[0].ip, '127.0.0.1');

    const patch = (payload: object) => h.call(writer, { method: 'PATCH', url: `/api/v1/webhooks/${id}`, payload });
    const changed = await written(h, async () => {
      assert.equal((await patch({ url: 'https://hooks.example.com/b', events: ['execution.failed'] })).statusCode, 200);
      assert.equal((await patch({ events: ['*'], description: null })).statusCode, 200);
      assert.equal((await patch({ disabled: true })).statusCode, 200);
      assert.equal((await patch({ disabled: false })).statusCode, 200);
    });
    assert.deepEqual(changed.map(what), [
      ['webhook.updated', 'webhook', id, ['url']],
      ['webhook.updated', 'webhook', id, ['description', 'events']],
      ['webhook.updated', 'webhook', id, ['disabled']],
      ['webhook.updated', 'webhook', id, ['disabled']],
    ]);

    // A patch that changes nothing writes nothing, and leaves the endpoint (and its updated_at) as it was.
    const before = body(await h.call(writer, { method: 'GET', url: `/api/v1/webhooks/${id}` })).data;
    const same = await written(h, async () => {
      const res = await patch({ url: before.url, events: ['*'], description: null, disabled: false });
      assert.equal(res.statusCode, 200, res.body);
      assert.deepEqual(body(res).data, before);
    });
    assert.deepEqual(same, []);

    let secret = '';
    const rotated = await written(h, async () => {
      const res = await h.call(writer, { method: 'POST', url: `/api/v1/webhooks/${id}/rotate-secret` });
      assert.equal(res.statusCode, 200, res.body);
      secret = body(res).data.secret;
    });
    assert.deepEqual(rotated.map(what), [['webhook.secret_rotated', 'webhook', id, ['secret']]]);

    const deleted = await written(h, async () => {
      assert.equal((await h.call(writer, { method: 'DELETE', url: `/api/v1/webhooks/${id}` })).statusCode, 200);
    });
    assert.deepEqual(deleted.map(what), [['webhook.deleted', 'webhook', id, []]]);
    assert.ok(secret.startsWith('whsec_'));
  });

  test('no event holds a secret: neither the whsec_ text nor its base64 body', async () => {
    const res = await h.call(writer, {
      method: 'POST',
      url: '/api/v1/webhooks',
      payload: { url: 'https://hooks.example.com/s', events: ['*'] },
    });
    const { id, secret } = body(res).data;
    const rotated = body(await h.call(writer, { method: 'POST', url: `/api/v1/webhooks/${id}/rotate-secret` })).data.secret;
    await h.call(writer, { method: 'DELETE', url: `/api/v1/webhooks/${id}` });
    const rows = JSON.stringify(await h.storage.db.selectFrom('audit_events').selectAll().execute());
    for (const s of [secret, rotated]) {
      assert.ok(!rows.includes(s), 'the secret');
      assert.ok(!rows.includes(s.slice('whsec_'.length)), 'its base64 body');
      assert.ok(!rows.includes(Buffer.from(s.slice('whsec_'.length), 'base64').toString('hex')), 'its bytes in hex');
    }
  });

  test('a refused change writes no event: bad input, a scope missing, an unknown or another tenant’s endpoint', async () => {
    const res = await h.call(writer, { method: 'POST', url: '/api/v1/webhooks', payload: { url: receiver.url, events: ['*'] } });
    const { id } = body(res).data;
    const reader = await h.auth('acme', ['webhooks.read']);
    const writeOnly = await h.auth('acme', ['webhooks.*']);
    const globex = await h.auth('globex', ['webhooks.*', 'executions.read']);
    const refused = await written(h, async () => {
      const post = (auth: Auth, payload: object) => h.call(auth, { method: 'POST', url: '/api/v1/webhooks', payload });
      assertError(await post(writer, { url: 'ftp://h.example/x', events: ['*'] }), 400, 'validation_failed');
      assertError(await post(writer, { url: 'https://user:pw@h.example/x', events: ['*'] }), 400, 'validation_failed');
      assertError(await post(writer, { url: 'https://h.example', events: ['*', 'execution.failed'] }), 400, 'validation_failed');
      assertError(await post(reader, { url: 'https://h.example', events: ['*'] }), 403, 'insufficient_scope');
      assertError(await post(writeOnly, { url: 'https://h.example', events: ['*'] }), 403, 'insufficient_scope');
      const patch = (auth: Auth, target: string, payload: object) =>
        h.call(auth, { method: 'PATCH', url: `/api/v1/webhooks/${target}`, payload });
      assertError(await patch(writer, id, { url: 'http://a:b@h.example' }), 400, 'validation_failed');
      assertError(await patch(writer, id, { events: ['*', 'execution.failed'] }), 400, 'validation_failed');
      assertError(await patch(writeOnly, id, { disabled: true }), 403, 'insufficient_scope');
      assertError(await patch(writer, 'whk_nope', { disabled: true }), 404, 'not_found');
      assertError(await patch(globex, id, { disabled: true }), 404, 'not_found');
      for (const [method, path] of [
        ['DELETE', ''],
        ['POST', '/rotate-secret'],
      ] as const) {
        assertError(await h.call(reader, { method, url: `/api/v1/webhooks/${id}${path}` }), 403, 'insufficient_scope');
        assertError(await h.call(writer, { method, url: `/api/v1/webhooks/whk_nope${path}` }), 404, 'not_found');
        assertError(await h.call(globex, { method, url: `/api/v1/webhooks/${id}${path}` }), 404, 'not_found');
      }
    });
    assert.deepEqual(refused, []);
    assert.deepEqual(await written(h, async () => {}, 'globex'), []);
    assert.equal(body(await h.call(writer, { method: 'GET', url: `/api/v1/webhooks/${id}` })).data.disabled, false);
    await h.call(writer, { method: 'DELETE', url: `/api/v1/webhooks/${id}` });
  });

  test('a tenant at its limit of endpoints is refused, with no event; a test event is not a change', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 20; i++) {
      const res = await h.call(writer, {
        method: 'POST',
        url: '/api/v1/webhooks',
        payload: { url: `${receiver.url}/${i}`, events: ['*'] },
      });
      assert.equal(res.statusCode, 201, res.body);
      ids.push(body(res).data.id);
    }
    const none = await written(h, async () => {
      const res = await h.call(writer, {
        method: 'POST',
        url: '/api/v1/webhooks',
        payload: { url: receiver.url, events: ['*'] },
      });
      assertError(res, 409, 'conflict');
      const tested = await h.call(writer, { method: 'POST', url: `/api/v1/webhooks/${ids[0]}/test` });
      assert.equal(body(tested).data.delivered, true, tested.body);
    });
    assert.deepEqual(none, []);
    assert.equal((await h.storage.db.selectFrom('webhooks').select('id').where('tenant_id', '=', 'acme').execute()).length, 20);
    for (const id of ids) await h.call(writer, { method: 'DELETE', url: `/api/v1/webhooks/${id}` });
  });

  test('the CLI’s create and delete write their events, with the CLI as the actor', async () => {
    const env = { DATABASE_URL: h.config.databaseUrl, ...(h.config.masterKey && { IX_MASTER_KEY: h.config.masterKey }) };
    let id = '';
    const cli = await written(h, async () => {
      const created = await cliJson(['webhooks', 'create', '--tenant', 'acme', '--url', 'https://hooks.example.com/cli'], env);
      id = String(created.id);
      await cliJson(['webhooks', 'delete', id, '--tenant', 'acme'], env);
    });
    assert.deepEqual(cli.map(what), [
      ['webhook.created', 'webhook', id, ['url', 'events', 'description']],
      ['webhook.deleted', 'webhook', id, []],
    ]);
    for (const e of cli) {
      assert.equal(e.actor.type, 'cli');
      assert.equal(e.ip, null);
      assert.match(String(e.request_id), /^cli_/);
    }
  });
});

describe('webhooks: the service disabling a failing endpoint writes its event', () => {
  let h: Harness;
  let aheadMs = 0;

  before(async () => {
    h = await harness({}, { webhooks: { retryDelaysMs: [100, 100], timeoutMs: 400, now: () => new Date(Date.now() + aheadMs) } });
    await h.tenant('acme');
  });
  after(() => h.close());

  test('webhook.updated, actor system, changes ["disabled"], with the attempt that disabled it', async () => {
    const receiver = await startReceiver();
    try {
      receiver.otherwise = 500;
      const auth = await h.auth('acme', ['webhooks.*', 'executions.read']);
      const res = await h.call(auth, { method: 'POST', url: '/api/v1/webhooks', payload: { url: receiver.url, events: ['*'] } });
      const { id } = body(res).data;
      const system = await written(h, async () => {
        await h.call(auth, { method: 'POST', url: `/api/v1/webhooks/${id}/test` });
        aheadMs = 5 * day;
        await until(async () => {
          const row = await h.storage.db.selectFrom('webhooks').select('disabled').where('id', '=', id).executeTakeFirst();
          return Number(row?.disabled) === 1;
        }, 'the endpoint disabled');
      });
      assert.deepEqual(system.map(what), [['webhook.updated', 'webhook', id, ['disabled']]]);
      assert.deepEqual(system[0].actor, { type: 'system', id: 'webhook-delivery' });
      assert.equal(system[0].ip, null);
      assert.equal(system[0].request_id, null);
    } finally {
      aheadMs = 0;
      await receiver.close();
    }
  });
});
