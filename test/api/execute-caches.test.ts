import assert from 'node:assert/strict';
import { test } from 'node:test';
import { IntegrationCache } from '../../src/integrations/cache.ts';
import type { StoredIntegration } from '../../src/storage/integrations.ts';
import { harness } from '../support/harness.ts';

const stored = (version: number) => ({ tenant_id: 't', id: 'i', version }) as StoredIntegration;

test('the integration cache: an entry serves for 1 s from its read, then is read again; a local change forgets it', async () => {
  let now = 0;
  const cache = new IntegrationCache({ now: () => now });
  let reads = 0;
  let version = 1;
  const read = async () => {
    reads += 1;
    return stored(version);
  };
  assert.equal((await cache.get('t', 'i', read))?.version, 1);
  version = 2; // changed on another instance
  now = 999;
  assert.equal((await cache.get('t', 'i', read))?.version, 1, 'within 1 s the cached form serves');
  now = 1000;
  assert.equal((await cache.get('t', 'i', read))?.version, 2, 'from 1 s on, the new form');
  version = 3;
  cache.forget('t', 'i'); // changed on this instance
  assert.equal((await cache.get('t', 'i', read))?.version, 3);
  assert.equal(reads, 3);
});

test('the integration cache: concurrent first reads share one; a missing integration or a failed read is not kept', async () => {
  const cache = new IntegrationCache({ now: () => 0 });
  let reads = 0;
  const slow = () =>
    new Promise<StoredIntegration>((resolve) => {
      reads += 1;
      setTimeout(() => resolve(stored(1)), 5);
    });
  await Promise.all([cache.get('t', 'i', slow), cache.get('t', 'i', slow), cache.get('t', 'i', slow)]);
  assert.equal(reads, 1);
  let missing = 0;
  const none = async () => {
    missing += 1;
    return undefined;
  };
  await cache.get('t', 'gone', none);
  await new Promise((resolve) => setImmediate(resolve));
  await cache.get('t', 'gone', none);
  assert.equal(missing, 2, 'an integration created elsewhere is found at once');
  let failing = 0;
  const broken = async () => {
    failing += 1;
    throw new Error('storage down');
  };
  await assert.rejects(cache.get('t', 'x', broken));
  await new Promise((resolve) => setImmediate(resolve));
  await assert.rejects(cache.get('t', 'x', broken));
  assert.equal(failing, 2);
});

test('the executions log is written behind: in batches, flushed by reads and on close, one bad row costs only itself', async () => {
  const h = await harness();
  try {
    const log = h.app.executionLog;
    const row = (id: string, message: string | null = null) => ({
      id,
      integration_id: 'i',
      connector: 'graphql-1.0.0',
      operation: 'receive',
      operation_name: null,
      status: 'failed' as const,
      http_status: 502,
      error_code: 'upstream_http_error',
      error_message: message,
      error_details: { upstream_status: 500 },
      message_count: 0,
      duration_ms: 1,
      api_key_id: 'key_x',
      user_id: null,
      request_id: `r-${id}`,
      started_at: new Date().toISOString(),
      mode: 'sync' as const,
      via: 'api' as const,
      attempts: 1,
      finished_at: new Date().toISOString(),
    });
    const count = async () => (await h.storage.db.selectFrom('executions').select('id').execute()).length;
    log.record('acme', row('exe_1'));
    log.record('acme', row('exe_2'));
    assert.equal(await count(), 0, 'handed over, not yet written');
    await log.flush();
    assert.equal(await count(), 2);
    // A row that cannot be written (its id taken) fails alone; the rest of its batch is written.
    log.record('acme', row('exe_3'));
    log.record('acme', row('exe_1'));
    log.record('acme', row('exe_4', 'nul \u0000 stored as U+FFFD'));
    await log.flush();
    const ids = (await h.storage.db.selectFrom('executions').select(['id', 'error_message']).orderBy('id').execute()).map((r) => [
      r.id,
      r.error_message,
    ]);
    assert.deepEqual(ids, [
      ['exe_1', null],
      ['exe_2', null],
      ['exe_3', null],
      ['exe_4', 'nul \ufffd stored as U+FFFD'],
    ]);
    // What is pending when the app closes is written.
    log.record('acme', row('exe_5'));
    await h.app.close();
    assert.equal(await count(), 5);
  } finally {
    await h.close();
  }
});
