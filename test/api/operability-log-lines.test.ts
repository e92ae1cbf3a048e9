import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { type GraphqlServer, startGraphqlServer } from '../support/graphql-server.ts';
import { type Auth, body, type Harness, harness } from '../support/harness.ts';
import { until } from '../support/until.ts';
import { startReceiver, type WebhookReceiver } from '../support/webhook-receiver.ts';

type Line = Record<string, unknown>;

const levels = { debug: 20, info: 30, warn: 40, error: 50 } as const;

/** The JSON lines an app writes to its log stream, as they come. */
function captureLogs(): { stream: PassThrough; lines(): Line[] } {
  const stream = new PassThrough();
  let logged = '';
  stream.on('data', (chunk) => {
    logged += String(chunk);
  });
  return {
    stream,
    lines: () =>
      logged
        .split('\n')
        .filter((l) => l !== '')
        .map((l) => JSON.parse(l) as Line),
  };
}

/** The page's static files: one console module, the icon and one vendor module, as the page names them. */
function assetUrlsOf(page: LightMyRequestResponse): string[] {
  const icon = /<link rel="icon" href="([^"]+)"/.exec(page.body)?.[1];
  const main = /<script type="module" src="([^"]+)"/.exec(page.body)?.[1];
  const importMap = JSON.parse(/<script type="importmap">([^<]*)<\/script>/.exec(page.body)?.[1] ?? '{}');
  const vendor = Object.values(importMap.imports as Record<string, string>).find((url) => url.startsWith('/console/vendor/'));
  const urls = [icon, main, vendor];
  assert.ok(
    urls.every((url) => url !== undefined),
    `the page names its files: ${urls.join(', ')}`,
  );
  return urls as string[];
}

describe('operability: which lines the log gets (LOG_LEVEL=info)', () => {
  let h: Harness;
  let upstream: GraphqlServer;
  let receiver: WebhookReceiver;
  let auth: Auth;
  const logs = captureLogs();
  /** The lines written under one request: those with its X-Request-Id as `request_id`. */
  const linesOf = (res: LightMyRequestResponse) => logs.lines().filter((l) => l.request_id === res.headers['x-request-id']);
  const executeAsync = (payload: object) =>
    h.call(auth, {
      method: 'POST',
      url: '/api/v1/integrations/crm/execute',
      headers: { prefer: 'respond-async' },
      payload,
    });

  before(async () => {
    upstream = await startGraphqlServer();
    receiver = await startReceiver();
    // The first attempt fails and is retried once, 100 ms later; the second is the last.
    h = await harness({ LOG_LEVEL: 'info' }, { logStream: logs.stream, webhooks: { retryDelaysMs: [100], timeoutMs: 2000 } });
    await h.tenant('acme');
    auth = await h.auth('acme', ['*']);
    const put = await h.call(auth, {
      method: 'PUT',
      url: '/api/v1/integrations/crm',
      payload: { connector: 'graphql-1.0.0', config: { base_url: upstream.url } },
    });
    assert.equal(put.statusCode, 201, put.body);
  });
  after(async () => {
    await h?.close();
    await receiver?.close();
    await upstream?.close();
  });

  test('the console page is one info line; its static files (modules, icon, vendor modules) none; a missing one info', async () => {
    const page = await h.call(null, { method: 'GET', url: '/console' });
    assert.equal(page.statusCode, 200);
    assert.deepEqual(
      linesOf(page).map((l) => [l.level, l.route, l.status]),
      [[levels.info, '/console', 200]],
    );
    for (const url of assetUrlsOf(page)) {
      const asset = await h.call(null, { method: 'GET', url });
      assert.equal(asset.statusCode, 200, url);
      assert.deepEqual(linesOf(asset), [], `${url} wrote a line`);
    }
    // A failure of an asset route is a 4xx like any other: info.
    const missing = await h.call(null, { method: 'GET', url: '/console/assets/0000/nope.js' });
    assert.equal(missing.statusCode, 404);
    assert.deepEqual(
      linesOf(missing).map((l) => [l.level, l.route, l.error_code]),
      [[levels.info, '/console/assets/:version/*', 'not_found']],
    );
  });

  test('an API request writes exactly one info line, with request_id and without Fastify’s reqId', async () => {
    const res = await h.call(auth, { method: 'GET', url: '/api/v1/me' });
    assert.equal(res.statusCode, 200, res.body);
    const own = linesOf(res);
    assert.equal(own.length, 1, JSON.stringify(own));
    assert.deepEqual([own[0].level, own[0].route, own[0].status], [levels.info, '/api/v1/me', 200]);
    assert.ok(
      logs.lines().every((l) => !('reqId' in l)),
      'no line has reqId',
    );
  });

  test('an async execution writes a start line and an end line with its ids, keyed by the accepting request', async () => {
    const accepted = await executeAsync({ operation: 'receive', query: '{ usersList { id } }', records_path: 'usersList' });
    assert.equal(accepted.statusCode, 202, accepted.body);
    const executionId = body(accepted).data.execution_id as string;
    const ofRun = () => logs.lines().filter((l) => l.execution_id === executionId);
    const end = (await until(
      () => ofRun().find((l) => l.msg === 'async execution succeeded'),
      () => `the end line of ${executionId}: ${JSON.stringify(ofRun())}`,
    )) as Line;
    const start = ofRun().find((l) => l.msg === 'async execution started');
    assert.ok(start, JSON.stringify(ofRun()));
    const ids = {
      execution_id: executionId,
      tenant_id: 'acme',
      integration_id: 'crm',
      operation: 'receive',
      request_id: accepted.headers['x-request-id'],
    };
    const pick = (line: Line, keys: string[]) => Object.fromEntries(keys.map((k) => [k, line[k]]));
    assert.deepEqual(pick(start, [...Object.keys(ids), 'level', 'connector', 'run']), {
      ...ids,
      level: levels.info,
      connector: 'graphql-1.0.0',
      run: 1,
    });
    assert.deepEqual(pick(end, [...Object.keys(ids), 'level', 'status', 'http_status', 'error_code', 'attempts', 'run']), {
      ...ids,
      level: levels.info,
      status: 'succeeded',
      http_status: 200,
      error_code: null,
      attempts: 1,
      run: 1,
    });
    assert.ok(typeof end.duration_ms === 'number' && end.duration_ms >= 0, `duration_ms ${end.duration_ms}`);
    // Besides them, only the accepting request's own line (written before or after the run began).
    assert.deepEqual(
      ofRun()
        .map((l) => String(l.msg))
        .sort(),
      ['POST /api/v1/integrations/:id/execute 202', 'async execution started', 'async execution succeeded'],
    );
    // No request body in the log: not the query it ran.
    assert.ok(!ofRun().some((l) => JSON.stringify(l).includes('usersList')), 'the request’s fields are not logged');
  });

  test('a failed webhook delivery writes a warn line with its ids and its retry; given up, an error line', async () => {
    receiver.otherwise = 500;
    const created = await h.call(auth, {
      method: 'POST',
      url: '/api/v1/webhooks',
      payload: { url: receiver.url, events: ['*'] },
    });
    assert.equal(created.statusCode, 201, created.body);
    const webhookId = body(created).data.id as string;
    const accepted = await executeAsync({ operation: 'receive', query: '{ usersList { id } }', records_path: 'usersList' });
    assert.equal(accepted.statusCode, 202, accepted.body);
    const executionId = body(accepted).data.execution_id as string;
    const ofWebhook = () => logs.lines().filter((l) => l.webhook_id === webhookId);
    const gaveUp = (await until(
      () => ofWebhook().find((l) => l.level === levels.error),
      () => `the given-up line of ${webhookId}: ${JSON.stringify(ofWebhook())}`,
    )) as Line;
    const failed = ofWebhook().find((l) => l.level === levels.warn);
    assert.ok(failed, JSON.stringify(ofWebhook()));
    const eventId = receiver.received[0]?.headers['webhook-id'];
    assert.ok(eventId, 'the receiver got the event');
    const common = {
      webhook_id: webhookId,
      tenant_id: 'acme',
      event_id: eventId,
      event_type: 'execution.succeeded',
      execution_id: executionId,
      http_status: 500,
      error: 'The receiver answered HTTP 500.',
    };
    const pick = (line: Line) => Object.fromEntries([...Object.keys(common), 'attempt', 'retry'].map((k) => [k, line[k]]));
    assert.deepEqual(pick(failed), { ...common, attempt: 1, retry: true });
    assert.ok(
      typeof failed.next_attempt_at === 'string' && !Number.isNaN(Date.parse(failed.next_attempt_at)),
      `next_attempt_at ${failed.next_attempt_at}`,
    );
    assert.match(String(failed.delivery_id), /^dlv_/);
    assert.deepEqual(pick(gaveUp), { ...common, attempt: 2, retry: false });
    assert.equal(gaveUp.next_attempt_at, null);
    assert.equal(ofWebhook().length, 2, JSON.stringify(ofWebhook()));
    // The endpoint's URL is not logged (a receiver's URL can hold a token).
    assert.ok(!ofWebhook().some((l) => JSON.stringify(l).includes(receiver.url)), 'the URL is not logged');
  });
});

describe('operability: the console’s static files at LOG_LEVEL=debug', () => {
  let h: Harness;
  const logs = captureLogs();
  before(async () => {
    h = await harness({ LOG_LEVEL: 'debug' }, { logStream: logs.stream });
  });
  after(() => h?.close());

  test('each static file writes its one line at debug; the page at info', async () => {
    const page = await h.call(null, { method: 'GET', url: '/console' });
    assert.equal(page.statusCode, 200);
    const lineOf = (res: LightMyRequestResponse) => {
      const own = logs.lines().filter((l) => l.request_id === res.headers['x-request-id']);
      assert.equal(own.length, 1, JSON.stringify(own));
      return own[0];
    };
    assert.equal(lineOf(page).level, levels.info);
    for (const url of assetUrlsOf(page)) {
      const asset = await h.call(null, { method: 'GET', url });
      assert.equal(asset.statusCode, 200, url);
      const line = lineOf(asset);
      assert.deepEqual([line.level, line.status], [levels.debug, 200], url);
      assert.match(String(line.route), /^\/console\/(assets|vendor)\/:version\/\*$/);
    }
  });
});
