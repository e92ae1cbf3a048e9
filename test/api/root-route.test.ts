import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { packageVersion } from '../../src/core/version.ts';
import { listeningText } from '../../src/server.ts';
import { body, type Harness, harness } from '../support/harness.ts';

/** Whoever lands on the service's address learns where to go (README: Quick start), instead of a 404. */
describe('GET /', () => {
  let h: Harness;
  before(async () => {
    h = await harness();
  });
  after(() => h.close());

  test('a browser is sent to the console', async () => {
    const res = await h.call(null, {
      method: 'GET',
      url: '/',
      headers: { accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8' },
    });
    assert.equal(res.statusCode, 302);
    assert.equal(res.headers.location, '/console');
  });

  test('anything else gets the entry points as JSON', async () => {
    for (const accept of [undefined, 'application/json', '*/*']) {
      const res = await h.call(null, { method: 'GET', url: '/', headers: accept ? { accept } : {} });
      assert.equal(res.statusCode, 200, res.body);
      assert.deepEqual(body(res).data, {
        name: 'Interchange',
        version: packageVersion(),
        links: {
          api: '/api/v1',
          console: '/console',
          docs: '/docs',
          openapi: '/api/v1/openapi.json',
          health: '/healthz',
          ready: '/readyz',
          metrics: '/metrics',
        },
      });
    }
  });

  test('with METRICS_PORT, /metrics is not listed here: the first log line names its own address', async () => {
    const other = await harness({ METRICS_PORT: '0' });
    try {
      const links = body(await other.call(null, { method: 'GET', url: '/' })).data.links;
      assert.equal(links.metrics, undefined);
    } finally {
      await other.close();
    }
    assert.equal(
      listeningText('http://10.0.0.5:8080', 'http://10.0.0.5:9464/metrics'),
      `Interchange ${packageVersion()} listening on http://10.0.0.5:8080: API http://10.0.0.5:8080/api/v1, ` +
        'console http://10.0.0.5:8080/console, docs http://10.0.0.5:8080/docs, metrics http://10.0.0.5:9464/metrics',
    );
  });
});
