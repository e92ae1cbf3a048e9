import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import { defineConnector } from '../../src/connectors/connector.ts';
import { builtInConnectors } from '../../src/connectors/registry.ts';
import { assertError } from '../support/assertions.ts';
import { body, type Harness, harness } from '../support/harness.ts';

/**
 * A connector is one self-contained unit registered through `build()` (issue 10): this one lives in this file only.
 * It echoes what it is given, logs its configuration (as a careless connector might), and fails on demand, with a
 * bug (a TypeError) or after a write that "reached" its upstream.
 */
const messageSchema = {
  type: 'object',
  required: ['message'],
  additionalProperties: false,
  properties: { message: { type: 'string', maxLength: 100 }, fail: { enum: ['bug', 'after-write'] } },
} as const;

const echoConnector = defineConnector<typeof messageSchema, typeof messageSchema>({
  id: 'echo-1.0.0',
  configProperties: {
    greeting: { type: ['string', 'null'], maxLength: 100 },
    secret: { type: ['string', 'null'], maxLength: 100 },
  },
  secretFields: ['secret'],
  urlFields: [],
  defaults: { timeout_seconds: 30, greeting: 'hello' },
  offers: ['send', 'receive', 'sync', 'batch', 'test'],
  requestSchemas: { send: messageSchema, receive: messageSchema },
  connect(integration, context) {
    const greeting = String(integration.config.greeting);
    context.log.info({ integration: { id: integration.id, config: integration.config } }, 'echo connector bound');
    const answer = (operation: string, message: string) => {
      // The upstream's answer quotes the secret: replies and records must not.
      return { data: { operation, echo: `${greeting}, ${message}`, quoted: String(integration.config.secret) }, messageCount: 1 };
    };
    return {
      async prepare(_operation, fields) {
        return fields.message === 'refuse' ? [{ path: 'message', message: 'is refused' }] : [];
      },
      async send(fields) {
        if (fields.fail === 'bug') throw new TypeError('a bug in the echo connector');
        context.budget.stats.posts += 1;
        if (fields.fail === 'after-write') throw new Error('lost the answer after writing');
        return answer('send', fields.message);
      },
      async receive(fields) {
        return answer('receive', fields.message);
      },
      async test() {
        return { data: { message: 'echo is there', details: { greeting } }, messageCount: 0 };
      },
    };
  },
});

describe('a connector defined outside src, registered through build()', () => {
  let h: Harness;
  let auth: { key: string; tenant: string };
  const logs = new PassThrough();
  let logged = '';
  logs.on('data', (chunk) => {
    logged += String(chunk);
  });
  const secret = 'echo-secret-value-42';
  const execute = (payload: object, headers: Record<string, string> = {}) =>
    h.call(auth, { method: 'POST', url: '/api/v1/integrations/echo/execute', payload, headers });

  before(async () => {
    h = await harness(
      { LOG_LEVEL: 'info' },
      { connectors: (config) => [...builtInConnectors(config), echoConnector], logStream: logs },
    );
    await h.tenant('acme');
    auth = { key: (await h.key('acme', ['*'])).key, tenant: 'acme' };
    const put = await h.call(auth, {
      method: 'PUT',
      url: '/api/v1/integrations/echo',
      payload: { connector: 'echo-1.0.0', config: { secret } },
    });
    assert.equal(put.statusCode, 201, put.body);
    assert.deepEqual(body(put).data.config, { greeting: 'hello', secret_set: true });
  });
  after(() => h?.close());

  test('it runs send, receive, sync, batch and test through the one execute endpoint, its secret redacted', async () => {
    const send = await execute({ operation: 'send', message: 'one' });
    assert.equal(send.statusCode, 200, send.body);
    assert.deepEqual(body(send).data, { operation: 'send', echo: 'hello, one', quoted: '[REDACTED]' });
    assert.match(String(send.headers['server-timing']), /^upstream;dur=[\d.]+, interchange;dur=[\d.]+, total;dur=[\d.]+$/);
    assert.equal(body(await execute({ operation: 'receive', message: 'two' })).data.echo, 'hello, two');
    const sync = body(await execute({ operation: 'sync', outbound: { message: 'a' }, inbound: { message: 'b' } })).data;
    assert.deepEqual([sync.message_count, sync.outbound.echo, sync.inbound.echo], [2, 'hello, a', 'hello, b']);
    const batch = body(
      await execute({
        operation: 'batch',
        operations: [
          { operation: 'send', data: { message: 'x' } },
          { operation: 'receive', data: {} },
        ],
      }),
    ).data;
    assert.deepEqual([batch.succeeded, batch.failed, batch.results[1].error.code], [1, 1, 'validation_failed']);
    assert.deepEqual(body(await execute({ operation: 'test' })).data, {
      message: 'echo is there',
      details: { greeting: 'hello', circuit: 'closed' },
    });
    // Its schema and its own checks come before anything runs.
    assertError(await execute({ operation: 'send', message: 1 }), 400, 'validation_failed');
    assert.deepEqual(
      assertError(await execute({ operation: 'send', message: 'refuse' }), 400, 'validation_failed').details?.issues,
      [{ path: 'message', message: 'is refused' }],
    );
  });

  test('its secret config field is redacted from the logs, derived from its secretFields', async () => {
    await execute({ operation: 'receive', message: 'log me' });
    assert.match(logged, /echo connector bound/);
    assert.ok(!logged.includes(secret), 'the secret reached the logs');
    assert.match(logged, /"secret":"\[redacted\]"/);
  });

  test('Idempotency-Key: a bug gives the key back; a failure after a write is kept and replayed', async () => {
    const bug = await execute({ operation: 'send', message: 'm', fail: 'bug' }, { 'idempotency-key': 'k-bug' });
    assertError(bug, 500, 'internal_error');
    const retried = await execute({ operation: 'send', message: 'm', fail: 'bug' }, { 'idempotency-key': 'k-bug' });
    assert.equal(retried.headers['idempotent-replayed'], undefined, 'the key was given back');

    const lost = await execute({ operation: 'send', message: 'm', fail: 'after-write' }, { 'idempotency-key': 'k-write' });
    assertError(lost, 500, 'internal_error');
    const replay = await execute({ operation: 'send', message: 'm', fail: 'after-write' }, { 'idempotency-key': 'k-write' });
    assert.equal(replay.headers['idempotent-replayed'], 'true');
    assert.equal(body(replay).error.code, 'internal_error');
  });

  test('an app built without it does not know it', async () => {
    const plain = await harness();
    try {
      await plain.tenant('acme');
      const key = (await plain.key('acme', ['*'])).key;
      const put = await plain.call(
        { key, tenant: 'acme' },
        { method: 'PUT', url: '/api/v1/integrations/echo', payload: { connector: 'echo-1.0.0', config: {} } },
      );
      assert.match(assertError(put, 400, 'validation_failed').message, /connector/);
    } finally {
      await plain.close();
    }
  });
});
