import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { listAuditEvents } from '../../src/storage/audit-events.ts';
import { responseBodyBytes, responseExcerpt } from '../../src/webhooks/delivery.ts';
import { assertError } from '../support/assertions.ts';
import { type Auth, body, type Harness, harness } from '../support/harness.ts';
import { until } from '../support/until.ts';
import { startReceiver, type WebhookReceiver } from '../support/webhook-receiver.ts';

/**
 * A delivery attempt in detail (the event's body as sent, the start of the receiver's answer, bounded) and a resend:
 * the same event, the same `webhook-id`, sent again through the delivery queue to a real receiver that verifies it.
 */

type Delivery = Record<string, unknown>;

describe('webhook deliveries: detail and resend', () => {
  let h: Harness;
  let receiver: WebhookReceiver;
  let writer: Auth;
  let writerKeyId: string;
  let globex: Auth;

  async function createWebhook(auth: Auth, url: string): Promise<{ id: string; secret: string }> {
    const res = await h.call(auth, { method: 'POST', url: '/api/v1/webhooks', payload: { url, events: ['*'] } });
    assert.equal(res.statusCode, 201, res.body);
    return body(res).data;
  }

  /** Sends the test event and answers its first attempt's record. */
  async function testEvent(id: string): Promise<Delivery> {
    const res = await h.call(writer, { method: 'POST', url: `/api/v1/webhooks/${id}/test` });
    assert.equal(res.statusCode, 200, res.body);
    return body(res).data.delivery;
  }

  const detail = (auth: Auth, id: string, delivery: string) =>
    h.call(auth, { method: 'GET', url: `/api/v1/webhooks/${id}/deliveries/${delivery}` });
  const resend = (auth: Auth, id: string, delivery: string) =>
    h.call(auth, { method: 'POST', url: `/api/v1/webhooks/${id}/deliveries/${delivery}/resend` });

  /** Waits until the attempt `id` is recorded, and answers its detail. */
  async function made(id: string, delivery: string): Promise<Delivery> {
    await until(
      async () =>
        (await h.storage.db.selectFrom('webhook_deliveries').select('id').where('id', '=', delivery).executeTakeFirst()) !==
        undefined,
      `attempt ${delivery} recorded`,
    );
    const res = await detail(writer, id, delivery);
    assert.equal(res.statusCode, 200, res.body);
    return body(res).data;
  }

  before(async () => {
    h = await harness({}, { webhooks: { retryDelaysMs: [100, 300, 600], timeoutMs: 2000 } });
    receiver = await startReceiver();
    await h.tenant('acme');
    await h.tenant('globex');
    const { key, record } = await h.key('acme', ['webhooks.*', 'executions.read'], { name: 'resender' });
    writer = { key, tenant: 'acme' };
    writerKeyId = record.id;
    globex = await h.auth('globex', ['webhooks.*', 'executions.read']);
  });
  after(async () => {
    await receiver.close();
    await h.close();
  });

  test('the detail has the event’s body as sent and the receiver’s answer; the list has neither', async () => {
    const w = await createWebhook(writer, receiver.url);
    receiver.received.length = 0;
    receiver.answerBody = '{"thanks":true}';
    const first = await testEvent(w.id);
    const res = await detail(writer, w.id, String(first.id));
    assert.equal(res.statusCode, 200, res.body);
    const shown = body(res).data;
    assert.deepEqual(
      { ...shown, payload: undefined, response_body: undefined },
      { ...first, payload: undefined, response_body: undefined },
    );
    assert.deepEqual(shown.payload, receiver.received[0].payload);
    assert.equal(JSON.stringify(shown.payload), receiver.received[0].body, 'the very bytes sent');
    assert.equal(shown.response_body, '{"thanks":true}');

    const listed = body(await h.call(writer, { method: 'GET', url: `/api/v1/webhooks/${w.id}/deliveries` })).data;
    assert.deepEqual(listed, [first]);
    assert.equal('response_body' in listed[0], false);
    receiver.answerBody = undefined;
    await h.call(writer, { method: 'DELETE', url: `/api/v1/webhooks/${w.id}` });
  });

  test('a receiver answering 1 MiB has its first 4 KiB kept, as text without control characters', async () => {
    const w = await createWebhook(writer, receiver.url);
    // "é" is two bytes, starting at an odd offset: the bound falls inside one, which is dropped whole.
    receiver.answerBody = Buffer.concat([Buffer.from('x\u0000y\u001b['), Buffer.from('é'.repeat(512 * 1024))]);
    receiver.otherwise = 500;
    try {
      const first = await testEvent(w.id);
      assert.equal(first.http_status, 500);
      const kept = String(body(await detail(writer, w.id, String(first.id))).data.response_body);
      assert.ok(Buffer.byteLength(kept) <= responseBodyBytes, String(Buffer.byteLength(kept)));
      assert.ok(Buffer.byteLength(kept) >= responseBodyBytes - 8, String(Buffer.byteLength(kept)));
      assert.ok(kept.startsWith('x\ufffdy\ufffd[éé'), JSON.stringify(kept.slice(0, 10)));
      assert.match(kept.slice(5), /^é+$/);
      const stored = await h.storage.db
        .selectFrom('webhook_deliveries')
        .select('response_body')
        .where('id', '=', String(first.id))
        .executeTakeFirstOrThrow();
      assert.equal(stored.response_body, kept);
    } finally {
      receiver.answerBody = undefined;
      receiver.otherwise = 200;
      await h.call(writer, { method: 'DELETE', url: `/api/v1/webhooks/${w.id}` });
    }
  });

  test('resend: 202 with the new attempt’s id; the receiver gets the same event, same webhook-id, signed; audited', async () => {
    const w = await createWebhook(writer, receiver.url);
    receiver.secrets.push(w.secret);
    receiver.received.length = 0;
    const first = await testEvent(w.id);
    const res = await resend(writer, w.id, String(first.id));
    assert.equal(res.statusCode, 202, res.body);
    const queued = body(res).data;
    assert.deepEqual(Object.keys(queued).sort(), ['delivery_id', 'event_id', 'webhook_id']);
    assert.match(queued.delivery_id, /^dlv_/);
    assert.notEqual(queued.delivery_id, first.id);
    assert.equal(queued.event_id, first.event_id);
    assert.equal(res.headers.location, `/api/v1/webhooks/${w.id}/deliveries/${queued.delivery_id}`);

    const again = await made(w.id, queued.delivery_id);
    assert.equal(again.event_id, first.event_id);
    assert.equal(again.attempt, 2, 'numbered after the last attempt');
    assert.equal(again.http_status, 200);
    assert.equal(again.next_attempt_at, null);
    assert.equal(receiver.received.length, 2);
    const [sent, resent] = receiver.received;
    assert.equal(resent.headers['webhook-id'], sent.headers['webhook-id']);
    assert.equal(resent.headers['webhook-id'], first.event_id);
    assert.equal(resent.body, sent.body);
    assert.deepEqual(resent.verifiedWith, [w.secret]);

    const audit = (await listAuditEvents(h.storage.db, 'acme', { limit: 5, action: 'webhook.delivery_resent' })).items;
    assert.equal(audit.length, 1);
    assert.deepEqual([audit[0].target, audit[0].changes, audit[0].actor.id], [{ type: 'webhook', id: w.id }, [], writerKeyId]);
    assert.equal(audit[0].request_id, res.headers['x-request-id']);
    receiver.secrets.length = 0;
    await h.call(writer, { method: 'DELETE', url: `/api/v1/webhooks/${w.id}` });
  });

  test('a resend that fails is retried on the schedule from its number, once', async () => {
    const w = await createWebhook(writer, receiver.url);
    receiver.received.length = 0;
    const first = await testEvent(w.id);
    receiver.answers.push(503);
    const queued = body(await resend(writer, w.id, String(first.id))).data;
    const failed = await made(w.id, queued.delivery_id);
    assert.deepEqual([failed.attempt, failed.http_status], [2, 503]);
    assert.ok(failed.next_attempt_at, 'a retry follows');
    await until(async () => receiver.received.length >= 3, 'the retry');
    await until(
      async () =>
        (await h.storage.db.selectFrom('webhook_deliveries').select('id').where('webhook_id', '=', w.id).execute()).length >= 3,
      'three attempts recorded',
    );
    const attempts = body(await h.call(writer, { method: 'GET', url: `/api/v1/webhooks/${w.id}/deliveries` })).data;
    assert.deepEqual(
      attempts.map((d: Delivery) => [d.attempt, d.http_status]),
      [
        [3, 200],
        [2, 503],
        [1, 200],
      ],
    );
    assert.deepEqual(new Set(receiver.received.map((r) => r.headers['webhook-id'])), new Set([first.event_id]));
    await h.call(writer, { method: 'DELETE', url: `/api/v1/webhooks/${w.id}` });
  });

  test('refused: a disabled endpoint (409), an unknown, another endpoint’s or another tenant’s attempt (404), scopes (403); no event', async () => {
    const w = await createWebhook(writer, receiver.url);
    const other = await createWebhook(writer, receiver.url);
    const first = await testEvent(w.id);
    const reader = await h.auth('acme', ['webhooks.read']);
    const readsBoth = await h.auth('acme', ['webhooks.read', 'executions.read']);
    const auditCount = async () => (await listAuditEvents(h.storage.db, 'acme', { limit: 100 })).items.length;
    const before = await auditCount();
    const jobs = receiver.received.length;

    assertError(await resend(writer, w.id, 'dlv_nope'), 404, 'not_found');
    assertError(await resend(writer, 'whk_nope', String(first.id)), 404, 'not_found');
    assertError(await resend(writer, other.id, String(first.id)), 404, 'not_found');
    assertError(await resend(globex, w.id, String(first.id)), 404, 'not_found');
    const g = await createWebhook(globex, receiver.url);
    assertError(await resend(globex, g.id, String(first.id)), 404, 'not_found');
    assertError(await detail(globex, g.id, String(first.id)), 404, 'not_found');
    assertError(await detail(writer, other.id, String(first.id)), 404, 'not_found');
    assertError(await detail(writer, w.id, 'dlv_nope'), 404, 'not_found');
    assert.equal(
      assertError(await resend(reader, w.id, String(first.id)), 403, 'insufficient_scope').details?.required_scope,
      'webhooks.write',
    );
    // The payload is an execution record: reading it needs executions.read, as subscribing to it does.
    assert.equal(
      assertError(await detail(reader, w.id, String(first.id)), 403, 'insufficient_scope').details?.required_scope,
      'executions.read',
    );
    assert.equal((await detail(readsBoth, w.id, String(first.id))).statusCode, 200);

    await h.call(writer, { method: 'PATCH', url: `/api/v1/webhooks/${w.id}`, payload: { disabled: true } });
    const disabledBefore = await auditCount();
    assertError(await resend(writer, w.id, String(first.id)), 409, 'conflict');
    assert.equal(await auditCount(), disabledBefore, 'no event for the refused resend');
    assert.equal(disabledBefore - before, 1, 'only the PATCH wrote one');
    assert.equal(receiver.received.length, jobs, 'nothing was sent');
    for (const id of [w.id, other.id]) await h.call(writer, { method: 'DELETE', url: `/api/v1/webhooks/${id}` });
    await h.call(globex, { method: 'DELETE', url: `/api/v1/webhooks/${g.id}` });
  });
});

describe('webhook deliveries: a resend takes the place of a retry that was waiting', () => {
  let h: Harness;
  let receiver: WebhookReceiver;
  const retryMs = 1500;

  before(async () => {
    h = await harness({}, { webhooks: { retryDelaysMs: [retryMs, retryMs], timeoutMs: 2000 } });
    receiver = await startReceiver();
    await h.tenant('acme');
  });
  after(async () => {
    await receiver.close();
    await h.close();
  });

  test('the waiting retry finds its attempt made by the resend, and sends nothing', async () => {
    const auth = await h.auth('acme', ['webhooks.*', 'executions.read']);
    const w = body(
      await h.call(auth, { method: 'POST', url: '/api/v1/webhooks', payload: { url: receiver.url, events: ['*'] } }),
    ).data;
    receiver.answers.push(500);
    const first = body(await h.call(auth, { method: 'POST', url: `/api/v1/webhooks/${w.id}/test` })).data.delivery;
    assert.equal(first.http_status, 500);
    assert.ok(first.next_attempt_at, 'attempt 2 is waiting');
    const res = await h.call(auth, { method: 'POST', url: `/api/v1/webhooks/${w.id}/deliveries/${first.id}/resend` });
    assert.equal(res.statusCode, 202, res.body);
    await until(() => receiver.received.length >= 2, 'the resend');
    // Past the time the retry was due, with room for a loaded machine: it was not sent.
    await new Promise((resolve) => setTimeout(resolve, retryMs * 2));
    const attempts = body(await h.call(auth, { method: 'GET', url: `/api/v1/webhooks/${w.id}/deliveries` })).data;
    assert.deepEqual(
      attempts.map((d: Delivery) => [d.id === body(res).data.delivery_id, d.attempt, d.http_status]),
      [
        [true, 2, 200],
        [false, 1, 500],
      ],
    );
    assert.equal(receiver.received.length, 2);
  });
});

describe('responseExcerpt', () => {
  test('keeps at most the bound, whole characters, and no control characters but tab and line breaks', () => {
    assert.equal(responseExcerpt(Buffer.from('ok\r\n\tfine')), 'ok\r\n\tfine');
    assert.equal(responseExcerpt(Buffer.from('a\u0000b\u007fc\u0008')), 'a\ufffdb\ufffdc\ufffd');
    assert.equal(responseExcerpt(Buffer.from([0x61, 0xff, 0x62])), 'a\ufffdb');
    // Each NUL becomes 3 bytes: cut again to the bound.
    const nuls = responseExcerpt(Buffer.alloc(responseBodyBytes, 0));
    assert.equal(Buffer.byteLength(nuls), Math.floor(responseBodyBytes / 3) * 3);
    const emoji = responseExcerpt(Buffer.from('😀'.repeat(responseBodyBytes)));
    assert.equal(Buffer.byteLength(emoji), responseBodyBytes);
    assert.equal(responseExcerpt(Buffer.from('ab😀'.repeat(2000))).endsWith('\ufffd'), false);
  });
});
