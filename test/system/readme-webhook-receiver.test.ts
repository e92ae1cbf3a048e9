import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { type GraphqlServer, startGraphqlServer } from '../support/graphql-server.ts';
import { type Auth, body, type Harness, harness, integrationCalls } from '../support/harness.ts';
import { freePort } from '../support/processes.ts';
import { until } from '../support/until.ts';

const readme = readFileSync(join(import.meta.dirname, '../..', 'README.md'), 'utf8');

/** The README's receiver: the first js block of its "Asynchronous calls and webhooks" section. */
function receiverSource(): string {
  const at = readme.indexOf('## Asynchronous calls and webhooks');
  assert.ok(at >= 0, 'the README has its async section');
  const block = /```js\n([\s\S]*?)```/.exec(readme.slice(at));
  assert.ok(block, 'the section has a js block');
  return block[1];
}

/**
 * The receiver the README shows, run as the reader would run it (a file of its own, WEBHOOK_SECRET and PORT set),
 * against real deliveries of a real app: a signed event is accepted and printed, a forged or stale one refused.
 */
describe('the README’s webhook receiver checks signatures as it says', () => {
  let h: Harness;
  let auth: Auth;
  let graphql: GraphqlServer;
  let receiver: ChildProcess;
  let output = '';
  let url: string;
  let secret: string;
  let dir: string;
  const { put, execute } = integrationCalls(() => ({ h, auth }));

  before(async () => {
    h = await harness();
    await h.tenant('acme');
    auth = await h.auth('acme', ['*']);
    graphql = await startGraphqlServer();
    assert.equal((await put('crm', 'graphql-1.0.0', { base_url: graphql.url })).statusCode, 201);
    const port = await freePort();
    url = `http://127.0.0.1:${port}`;
    const created = await h.call(auth, {
      method: 'POST',
      url: '/api/v1/webhooks',
      payload: { url: `${url}/interchange`, events: ['execution.succeeded', 'execution.failed'] },
    });
    assert.equal(created.statusCode, 201, created.body);
    secret = body(created).data.secret;
    dir = mkdtempSync(join(tmpdir(), 'ix-receiver-'));
    writeFileSync(join(dir, 'receiver.mjs'), receiverSource());
    receiver = spawn(process.execPath, [join(dir, 'receiver.mjs')], {
      env: { PATH: process.env.PATH, WEBHOOK_SECRET: secret, PORT: String(port) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    receiver.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
      output += chunk;
    });
    await until(
      async () => (await fetch(url, { method: 'POST' }).catch(() => undefined))?.status === 401,
      'the receiver listens',
    );
  });
  after(async () => {
    receiver?.kill();
    await h.close();
    await graphql.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test('a delivery of a real event is verified and printed; the delivery is recorded 204', async () => {
    await execute('crm', { operation: 'test' });
    const [newest] = body(await h.call(auth, { method: 'GET', url: '/api/v1/executions?limit=1' })).data;
    await until(
      () => output.includes(`execution.succeeded ${newest.id}`),
      () => `the receiver printed the event (${output})`,
    );
    const [webhook] = body(await h.call(auth, { method: 'GET', url: '/api/v1/webhooks' })).data;
    const deliveries = body(await h.call(auth, { method: 'GET', url: `/api/v1/webhooks/${webhook.id}/deliveries` })).data;
    assert.equal(deliveries[0].http_status, 204);
  });

  test('a forged signature, a changed body or a stale timestamp is refused 401', async () => {
    const sign = (key: Buffer, id: string, timestamp: number, text: string) =>
      `v1,${createHmac('sha256', key).update(`${id}.${timestamp}.${text}`).digest('base64')}`;
    const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
    const now = Math.floor(Date.now() / 1000);
    const text = JSON.stringify({ type: 'execution.succeeded', timestamp: new Date().toISOString(), data: { id: 'x' } });
    const send = (headers: Record<string, string>, payload = text) =>
      fetch(`${url}/interchange`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: payload });
    const good = { 'webhook-id': 'msg_1', 'webhook-timestamp': String(now), 'webhook-signature': sign(key, 'msg_1', now, text) };
    assert.equal((await send(good)).status, 204, 'the control: rightly signed');
    const wrongKey = Buffer.alloc(32, 7);
    assert.equal((await send({ ...good, 'webhook-signature': sign(wrongKey, 'msg_1', now, text) })).status, 401);
    assert.equal((await send(good, text.replace('"x"', '"y"'))).status, 401);
    const stale = now - 3600;
    const old = {
      'webhook-id': 'msg_1',
      'webhook-timestamp': String(stale),
      'webhook-signature': sign(key, 'msg_1', stale, text),
    };
    assert.equal((await send(old)).status, 401);
  });
});
