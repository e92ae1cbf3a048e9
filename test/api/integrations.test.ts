import assert from 'node:assert/strict';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { type Auth, body, type Harness, harness, twoTenants } from '../support/harness.ts';

describe('integrations', () => {
  let h: Harness;
  let acme: Auth;
  let globex: Auth;

  before(async () => {
    h = await harness();
    ({ acme, globex } = await twoTenants(h, ['integrations.*']));
  });
  after(() => h.close());

  const put = (auth: { key: string; tenant: string }, id: string, payload: object) =>
    h.call(auth, { method: 'PUT', url: `/api/v1/integrations/${encodeURIComponent(id)}`, payload });

  test('PUT creates (201) then replaces (200); defaults shown, secrets only as *_set', async () => {
    const created = await put(acme, 'crm', {
      name: 'CRM',
      connector: 'graphql-1.0.0',
      config: { base_url: 'https://crm.example.com/api', token: 's3cret-token' },
    });
    assert.equal(created.statusCode, 201);
    const data = body(created).data;
    assert.deepEqual(data.config, {
      base_url: 'https://crm.example.com/api',
      timeout_seconds: 30,
      token_set: true,
      auth: null,
      tls: null,
      retry: { max_attempts: 3, base_delay_ms: 200, max_delay_ms: 10_000 },
      max_concurrency: null,
      validate_schema: true,
      schema_ttl_seconds: 600,
    });
    assert.equal(data.id, 'crm');
    assert.equal(data.name, 'CRM');
    assert.equal(data.connector, 'graphql-1.0.0');
    assert.ok(!created.body.includes('s3cret-token'));

    const replaced = await put(acme, 'crm', {
      connector: 'graphql-1.0.0',
      config: { base_url: 'https://crm.example.com/v2', timeout_seconds: 5, retry: { max_attempts: 5 }, max_concurrency: 4 },
    });
    assert.equal(replaced.statusCode, 200);
    // A secret left out of a PUT is cleared; a name left out becomes the id.
    assert.deepEqual(body(replaced).data.config, {
      base_url: 'https://crm.example.com/v2',
      timeout_seconds: 5,
      token_set: false,
      auth: null,
      tls: null,
      // Each retry field left out runs at its default, and is shown so.
      retry: { max_attempts: 5, base_delay_ms: 200, max_delay_ms: 10_000 },
      max_concurrency: 4,
      validate_schema: true,
      schema_ttl_seconds: 600,
    });
    assert.equal(body(replaced).data.name, 'crm');
  });

  test('PATCH merges config: a secret left out is kept, null or "" clears it', async () => {
    await put(acme, 'patchy', { connector: 'graphql-1.0.0', config: { base_url: 'https://a.example/graphql', token: 't1' } });
    const renamed = await h.call(acme, {
      method: 'PATCH',
      url: '/api/v1/integrations/patchy',
      payload: { config: { timeout_seconds: 12 } },
    });
    assert.deepEqual(body(renamed).data.config, {
      base_url: 'https://a.example/graphql',
      timeout_seconds: 12,
      token_set: true,
      auth: null,
      tls: null,
      validate_schema: true,
      schema_ttl_seconds: 600,
      retry: { max_attempts: 3, base_delay_ms: 200, max_delay_ms: 10_000 },
      max_concurrency: null,
    });
    const cleared = await h.call(acme, {
      method: 'PATCH',
      url: '/api/v1/integrations/patchy',
      payload: { config: { token: '' } },
    });
    assert.equal(body(cleared).data.config.token_set, false);
    await h.call(acme, { method: 'PATCH', url: '/api/v1/integrations/patchy', payload: { config: { token: 't2' } } });
    const nulled = await h.call(acme, {
      method: 'PATCH',
      url: '/api/v1/integrations/patchy',
      payload: { config: { token: null, base_url: null } },
    });
    assert.deepEqual(body(nulled).data.config, {
      base_url: null,
      timeout_seconds: 12,
      token_set: false,
      auth: null,
      tls: null,
      retry: { max_attempts: 3, base_delay_ms: 200, max_delay_ms: 10_000 },
      max_concurrency: null,
      validate_schema: true,
      schema_ttl_seconds: 600,
    });
    const missing = await h.call(acme, { method: 'PATCH', url: '/api/v1/integrations/nope', payload: { name: 'x' } });
    assert.equal(missing.statusCode, 404);
  });

  test('secrets are encrypted at rest (on SQLite under a generated master key, mode 0600)', async () => {
    await put(acme, 'enc', {
      connector: 'graphql-1.0.0',
      config: { base_url: 'https://a.example', token: 'plain-text-token-123' },
    });
    const row = await h.storage.db.selectFrom('integrations').selectAll().where('id', '=', 'enc').executeTakeFirstOrThrow();
    assert.ok(!row.secrets.includes('plain-text-token-123'));
    assert.ok(!row.config.includes('plain-text-token-123'));
    assert.match(JSON.parse(row.secrets).token, /^v1:[A-Za-z0-9+/=]+$/);
    const keyFile = join(h.dir, 'master.key');
    if (h.storage.kind === 'postgres') {
      // PostgreSQL instances share IX_MASTER_KEY; nothing is generated.
      assert.equal(existsSync(keyFile), false);
      return;
    }
    assert.equal(statSync(keyFile).mode & 0o777, 0o600);
    assert.equal(Buffer.from(readFileSync(keyFile, 'utf8').trim(), 'base64').length, 32);
  });

  test('validation: unknown connector names the supported ones; config typed strictly; every problem listed', async () => {
    const unknown = await put(acme, 'x', { connector: 'rest-9', config: {} });
    assert.equal(unknown.statusCode, 400);
    assert.equal(body(unknown).error.code, 'validation_failed');
    assert.match(JSON.stringify(body(unknown).error), /graphql-1\.0\.0/);

    const bad = await put(acme, 'x', {
      connector: 'graphql-1.0.0',
      config: { base_url: 'ftp://nope', timeout_seconds: '30', token: 5, extra: true },
    });
    assert.equal(bad.statusCode, 400);
    const paths = body(bad)
      .error.details.issues.map((i: { path: string }) => i.path)
      .sort();
    assert.deepEqual(paths, ['config.base_url', 'config.extra', 'config.timeout_seconds', 'config.token']);

    for (const token of ['line\nbreak', 'with space', 'ünicode', 'nul\u0000']) {
      const badToken = await put(acme, 'x', { connector: 'graphql-1.0.0', config: { token } });
      assert.deepEqual(
        body(badToken).error.details.issues.map((i: { path: string }) => i.path),
        ['config.token'],
        JSON.stringify(token),
      );
    }
    const range = await put(acme, 'x', { connector: 'graphql-1.0.0', config: { timeout_seconds: 3601 } });
    assert.deepEqual(
      body(range).error.details.issues.map((i: { path: string }) => i.path),
      ['config.timeout_seconds'],
    );
    const missingConnector = await put(acme, 'x', { config: {} });
    assert.equal(body(missingConnector).error.details.issues[0].path, 'connector');
    assert.equal((await h.call(acme, { method: 'GET', url: '/api/v1/integrations/x' })).statusCode, 404, 'nothing half-written');
  });

  test('retry and max_concurrency: ranges checked on both connectors, PATCH merges retry field by field', async () => {
    const issuesOf = async (connector: string, config: object) =>
      body(await put(acme, 'r', { connector, config }))
        .error?.details.issues.map((i: { path: string }) => i.path)
        .sort();
    for (const connector of ['graphql-1.0.0', 'soap-1.0.0']) {
      assert.deepEqual(await issuesOf(connector, { retry: { max_attempts: 0 }, max_concurrency: 0 }), [
        'config.max_concurrency',
        'config.retry.max_attempts',
      ]);
      assert.deepEqual(await issuesOf(connector, { retry: { max_attempts: 11, jitter: true }, max_concurrency: 1001 }), [
        'config.max_concurrency',
        'config.retry.jitter',
        'config.retry.max_attempts',
      ]);
      // What one schema cannot say: a ceiling under the base, with a field left at its default counted.
      assert.deepEqual(await issuesOf(connector, { retry: { base_delay_ms: 20_000 } }), ['config.retry.max_delay_ms']);
    }
    assert.equal((await h.call(acme, { method: 'GET', url: '/api/v1/integrations/r' })).statusCode, 404, 'nothing written');

    await put(acme, 'r', { connector: 'graphql-1.0.0', config: { retry: { max_attempts: 5, base_delay_ms: 1 } } });
    const patched = await h.call(acme, {
      method: 'PATCH',
      url: '/api/v1/integrations/r',
      payload: { config: { retry: { max_delay_ms: 50 }, max_concurrency: 2 } },
    });
    assert.deepEqual(body(patched).data.config.retry, { max_attempts: 5, base_delay_ms: 1, max_delay_ms: 50 });
    assert.equal(body(patched).data.config.max_concurrency, 2);
    const cleared = await h.call(acme, {
      method: 'PATCH',
      url: '/api/v1/integrations/r',
      payload: { config: { retry: null, max_concurrency: null } },
    });
    assert.deepEqual(body(cleared).data.config.retry, { max_attempts: 3, base_delay_ms: 200, max_delay_ms: 10_000 });
    assert.equal(body(cleared).data.config.max_concurrency, null);
  });

  test('ids travel as one URL-encoded segment: slashes, spaces and non-ASCII round-trip', async () => {
    for (const id of ['a/b', 'with space', 'ünïcødé-名前', `x${'y'.repeat(127)}`]) {
      const res = await put(acme, id, { connector: 'graphql-1.0.0', config: {} });
      assert.equal(res.statusCode, 201, id);
      const got = await h.call(acme, { method: 'GET', url: `/api/v1/integrations/${encodeURIComponent(id)}` });
      assert.equal(body(got).data.id, id);
    }
    const tooLong = await put(acme, 'z'.repeat(129), { connector: 'graphql-1.0.0', config: {} });
    assert.equal(tooLong.statusCode, 400);
    const control = await put(acme, 'bad\u0001id', { connector: 'graphql-1.0.0', config: {} });
    assert.equal(control.statusCode, 400);
  });

  test('ids are per tenant; another tenant sees 404', async () => {
    await put(acme, 'shared', { name: 'Acme one', connector: 'graphql-1.0.0', config: {} });
    assert.equal((await h.call(globex, { method: 'GET', url: '/api/v1/integrations/shared' })).statusCode, 404);
    assert.equal((await h.call(globex, { method: 'DELETE', url: '/api/v1/integrations/shared' })).statusCode, 404);
    const patch = await h.call(globex, { method: 'PATCH', url: '/api/v1/integrations/shared', payload: { name: 'x' } });
    assert.equal(patch.statusCode, 404);
    const own = await put(globex, 'shared', { name: 'Globex one', connector: 'graphql-1.0.0', config: {} });
    assert.equal(own.statusCode, 201);
    assert.equal(body(await h.call(acme, { method: 'GET', url: '/api/v1/integrations/shared' })).data.name, 'Acme one');
  });

  test('list pages with a cursor; delete answers 200 and the integration is gone', async () => {
    for (const id of ['l1', 'l2', 'l3']) await put(globex, id, { connector: 'graphql-1.0.0', config: {} });
    const first = body(await h.call(globex, { method: 'GET', url: '/api/v1/integrations?limit=2' }));
    assert.equal(first.data.length, 2);
    const second = body(
      await h.call(globex, { method: 'GET', url: `/api/v1/integrations?limit=2&cursor=${first.pagination.next_cursor}` }),
    );
    const ids = [...first.data, ...second.data].map((i: { id: string }) => i.id);
    assert.deepEqual(ids.slice(0, 3), ['l1', 'l2', 'l3']);
    const deleted = await h.call(globex, { method: 'DELETE', url: '/api/v1/integrations/l1' });
    assert.deepEqual(body(deleted), { success: true, data: { id: 'l1', deleted: true } });
    assert.equal((await h.call(globex, { method: 'GET', url: '/api/v1/integrations/l1' })).statusCode, 404);
  });

  test('scopes: read cannot write, write cannot execute', async () => {
    const reader = { key: (await h.key('acme', ['integrations.read'])).key, tenant: 'acme' };
    const denied = await put(reader, 'r', { connector: 'graphql-1.0.0', config: {} });
    assert.equal(denied.statusCode, 403);
    assert.equal(body(denied).error.details.required_scope, 'integrations.write');
    const writer = { key: (await h.key('acme', ['integrations.write'])).key, tenant: 'acme' };
    const exec = await h.call(writer, {
      method: 'POST',
      url: '/api/v1/integrations/crm/execute',
      payload: { operation: 'test' },
    });
    assert.equal(body(exec).error.details.required_scope, 'integrations.execute');
  });
});
