import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { generateKey } from '../../src/auth/key-format.ts';
import { insertEntity } from '../../src/storage/entities.ts';
import { insertExecutions } from '../../src/storage/executions.ts';
import { saveIntegration } from '../../src/storage/integrations.ts';
import { assertError, assertRateLimitHeaders, rateLimitHeaders } from '../support/assertions.ts';
import { body, type Harness, harness } from '../support/harness.ts';

/** One authenticated route of docs/api.md#scopes and a request it accepts. */
interface RouteCase {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  path: string;
  /** The scope docs/api.md#scopes requires, or `any` (GET /me). */
  scope: string;
  /** The status of an accepted request. */
  status: number;
  /** A request this route accepts in tenant `acme`; creates the objects it needs, fresh each time. */
  request(h: Harness): Promise<{ url: string; payload?: object }>;
}

let seq = 0;
// A key any caller that may use the key routes may also rotate (no scope escalation).
const targetKey = async (h: Harness) => (await h.key('acme', ['api_keys.write'])).record.id;
const entityId = async (h: Harness) => {
  const id = `sec-${++seq}`;
  await insertEntity(h.storage.db, 'acme', { entity_id: id, name: id, status: 'active' });
  return id;
};

const integrationId = async (h: Harness) => {
  const id = `int/${++seq}`;
  await saveIntegration(h.storage.db, 'acme', id, { name: id, connector: 'graphql-1.0.0', config: {}, secrets: {} }, undefined);
  return encodeURIComponent(id);
};
const executionId = async (h: Harness) => {
  const id = `exe_sec${++seq}`;
  await insertExecutions(h.storage.db, [
    {
      tenantId: 'acme',
      execution: {
        id,
        integration_id: 'x',
        connector: 'graphql-1.0.0',
        operation: 'test',
        operation_name: null,
        status: 'succeeded',
        http_status: 200,
        error_code: null,
        error_message: null,
        error_details: null,
        message_count: 0,
        duration_ms: 1,
        api_key_id: 'key_x',
        user_id: null,
        request_id: 'r',
        started_at: new Date().toISOString(),
        mode: 'sync',
        via: 'api',
        attempts: 1,
        finished_at: new Date().toISOString(),
      },
    },
  ]);
  return id;
};

const routes: RouteCase[] = [
  {
    method: 'PUT',
    path: '/api/v1/integrations/:id',
    scope: 'integrations.write',
    status: 201,
    request: async () => ({ url: `/api/v1/integrations/new-${++seq}`, payload: { connector: 'graphql-1.0.0', config: {} } }),
  },
  {
    method: 'PATCH',
    path: '/api/v1/integrations/:id',
    scope: 'integrations.write',
    status: 200,
    request: async (h) => ({ url: `/api/v1/integrations/${await integrationId(h)}`, payload: { name: 'renamed' } }),
  },
  {
    method: 'DELETE',
    path: '/api/v1/integrations/:id',
    scope: 'integrations.write',
    status: 200,
    request: async (h) => ({ url: `/api/v1/integrations/${await integrationId(h)}` }),
  },
  {
    method: 'GET',
    path: '/api/v1/integrations/:id',
    scope: 'integrations.read',
    status: 200,
    request: async (h) => ({ url: `/api/v1/integrations/${await integrationId(h)}` }),
  },
  {
    method: 'GET',
    path: '/api/v1/integrations',
    scope: 'integrations.read',
    status: 200,
    request: async () => ({ url: '/api/v1/integrations' }),
  },
  {
    // 422: authenticated and run, but the integration has no base_url (no upstream is needed here).
    method: 'POST',
    path: '/api/v1/integrations/:id/execute',
    scope: 'integrations.execute',
    status: 422,
    request: async (h) => ({ url: `/api/v1/integrations/${await integrationId(h)}/execute`, payload: { operation: 'test' } }),
  },
  {
    method: 'GET',
    path: '/api/v1/executions',
    scope: 'executions.read',
    status: 200,
    request: async () => ({ url: '/api/v1/executions' }),
  },
  {
    method: 'GET',
    path: '/api/v1/executions/:id',
    scope: 'executions.read',
    status: 200,
    request: async (h) => ({ url: `/api/v1/executions/${await executionId(h)}` }),
  },
  {
    method: 'GET',
    path: '/api/v1/api-keys',
    scope: 'api_keys.read',
    status: 200,
    request: async () => ({ url: '/api/v1/api-keys' }),
  },
  {
    method: 'POST',
    path: '/api/v1/api-keys',
    scope: 'api_keys.write',
    status: 201,
    request: async () => ({ url: '/api/v1/api-keys', payload: { name: 'sec', scopes: ['api_keys.write'] } }),
  },
  {
    method: 'GET',
    path: '/api/v1/api-keys/:id',
    scope: 'api_keys.read',
    status: 200,
    request: async (h) => ({ url: `/api/v1/api-keys/${await targetKey(h)}` }),
  },
  {
    method: 'GET',
    path: '/api/v1/api-keys/:id/usage',
    scope: 'api_keys.read',
    status: 200,
    request: async (h) => ({ url: `/api/v1/api-keys/${await targetKey(h)}/usage?days=2` }),
  },
  {
    method: 'POST',
    path: '/api/v1/api-keys/:id/rotate',
    scope: 'api_keys.write',
    status: 201,
    request: async (h) => ({ url: `/api/v1/api-keys/${await targetKey(h)}/rotate`, payload: { overlap_seconds: 60 } }),
  },
  {
    method: 'DELETE',
    path: '/api/v1/api-keys/:id',
    scope: 'api_keys.write',
    status: 200,
    request: async (h) => ({ url: `/api/v1/api-keys/${await targetKey(h)}` }),
  },
  { method: 'GET', path: '/api/v1/me', scope: 'any', status: 200, request: async () => ({ url: '/api/v1/me' }) },
  {
    method: 'GET',
    path: '/api/v1/entities',
    scope: 'entities.read',
    status: 200,
    request: async () => ({ url: '/api/v1/entities' }),
  },
  {
    method: 'POST',
    path: '/api/v1/entities',
    scope: 'entities.write',
    status: 201,
    request: async () => ({ url: '/api/v1/entities', payload: { name: 'sec' } }),
  },
  {
    method: 'GET',
    path: '/api/v1/entities/:id',
    scope: 'entities.read',
    status: 200,
    request: async (h) => ({ url: `/api/v1/entities/${await entityId(h)}` }),
  },
  {
    method: 'PATCH',
    path: '/api/v1/entities/:id',
    scope: 'entities.write',
    status: 200,
    request: async (h) => ({ url: `/api/v1/entities/${await entityId(h)}`, payload: { status: 'archived' } }),
  },
  {
    method: 'DELETE',
    path: '/api/v1/entities/:id',
    scope: 'entities.write',
    status: 200,
    request: async (h) => ({ url: `/api/v1/entities/${await entityId(h)}` }),
  },
];

const as = (key: string, tenant: string) => ({ 'x-api-key': key, 'x-tenant-id': tenant });

/** A new-format key whose last checksum character is changed. */
function withBadChecksum(key: string): string {
  const last = key.at(-1);
  return key.slice(0, -1) + (last === 'A' ? 'B' : 'A');
}

describe('security: every authenticated route', () => {
  let h: Harness;
  let revoked: string;
  let expired: string;
  let globex: string;

  before(async () => {
    // The brute-force guard has its own test below; here it would stop the suite after 30 failures.
    h = await harness({ IX_AUTH_FAILURE_LIMIT: '1000000' });
    await h.tenant('acme');
    await h.tenant('globex');
    const admin = (await h.key('acme', ['*'])).key;
    const toRevoke = await h.key('acme', ['*']);
    const res = await h.call({ key: admin, tenant: 'acme' }, { method: 'DELETE', url: `/api/v1/api-keys/${toRevoke.record.id}` });
    assert.equal(res.statusCode, 200);
    revoked = toRevoke.key;
    const toExpire = await h.key('acme', ['*']);
    const past = new Date(Date.now() - 60_000).toISOString();
    await h.storage.db.updateTable('api_keys').set({ expires_at: past }).where('id', '=', toExpire.record.id).execute();
    expired = toExpire.key;
    globex = (await h.key('globex', ['*'])).key;
  });
  after(() => h.close());

  for (const route of routes) {
    describe(`${route.method} ${route.path}`, () => {
      const send = async (headers: Record<string, string>) => {
        const { url, payload } = await route.request(h);
        return h.app.inject({ method: route.method, url, payload, headers });
      };
      const keyWith = async (scopes: string[]) => (await h.key('acme', scopes)).key;
      const resource = route.scope.split('.')[0];

      test(`accepts a key holding ${route.scope === 'any' ? 'any scope' : route.scope}, with RateLimit headers`, async () => {
        const scopes = route.scope === 'any' ? ['executions.read'] : [route.scope];
        const res = await send(as(await keyWith(scopes), 'acme'));
        assert.equal(res.statusCode, route.status, res.body);
        assert.equal(body(res).success, route.status < 300);
        if (route.status >= 300) assert.equal(body(res).error.code, 'integration_misconfigured');
        assertRateLimitHeaders(res, 600, 599);
      });

      test('no key: 401 missing_credentials', async () => {
        assertError(await send({ 'x-tenant-id': 'acme' }), 401, 'missing_credentials');
      });

      test('malformed keys: 401 invalid_credentials', async () => {
        for (const key of ['nonsense', 'ix_live_short', `ix_live_${'!'.repeat(46)}`, 'ix_prod_x']) {
          assertError(await send(as(key, 'acme')), 401, 'invalid_credentials');
        }
      });

      test('a real key with one checksum character changed: 401 invalid_credentials', async () => {
        const key = await keyWith(['*']);
        assertError(await send(as(withBadChecksum(key), 'acme')), 401, 'invalid_credentials');
      });

      test('a revoked key: 401 invalid_credentials', async () => {
        assertError(await send(as(revoked, 'acme')), 401, 'invalid_credentials');
      });

      test('an expired key: 401 expired_credentials', async () => {
        const error = assertError(await send(as(expired, 'acme')), 401, 'expired_credentials');
        assert.match(error.message, /expired/);
      });

      test("another tenant's key with this X-Tenant-ID: the same answer as an unknown key", async () => {
        const foreign = assertError(await send(as(globex, 'acme')), 401, 'invalid_credentials');
        const unknown = assertError(await send(as(generateKey('ix_live_'), 'acme')), 401, 'invalid_credentials');
        assert.deepEqual(foreign, unknown);
      });

      test('an unknown tenant: 401 invalid_credentials', async () => {
        assertError(await send(as(await keyWith(['*']), 'no-such-tenant')), 401, 'invalid_credentials');
      });

      test('a valid key without X-Tenant-ID: 400 missing_tenant', async () => {
        const res = await send({ 'x-api-key': await keyWith(['*']) });
        assertError(res, 400, 'missing_tenant');
        for (const name of rateLimitHeaders) assert.equal(res.headers[name], undefined);
      });

      test('an API key as a Bearer token: 401 api_key_in_bearer', async () => {
        const key = await keyWith(['*']);
        const error = assertError(
          await send({ authorization: `Bearer ${key}`, 'x-tenant-id': 'acme' }),
          401,
          'api_key_in_bearer',
        );
        assert.match(error.message, /X-API-Key/);
        const both = await send({ ...as(key, 'acme'), authorization: `Bearer ${key}` });
        assertError(both, 401, 'api_key_in_bearer');
      });

      if (route.scope === 'any') return;

      test('a key without the scope: 403 insufficient_scope naming required and granted scopes', async () => {
        const granted = ['processflow.read', resource === 'entities' ? 'api_keys.read' : 'entities.read'];
        const res = await send(as(await keyWith(granted), 'acme'));
        const error = assertError(res, 403, 'insufficient_scope');
        assert.deepEqual(error.details, { required_scope: route.scope, granted_scopes: granted });
        assertRateLimitHeaders(res, 600, 599);
      });

      test(`wildcards: ${resource}.* and * are accepted, another resource's wildcard is refused`, async () => {
        for (const scope of [`${resource}.*`, '*']) {
          const res = await send(as(await keyWith([scope]), 'acme'));
          assert.equal(res.statusCode, route.status, `${scope}: ${res.body}`);
        }
        const other = resource === 'entities' ? 'api_keys.*' : 'entities.*';
        const error = assertError(await send(as(await keyWith([other]), 'acme')), 403, 'insufficient_scope');
        assert.deepEqual(error.details?.granted_scopes, [other]);
      });
    });
  }

  test('requests refused with 401 are not counted against the key', async () => {
    const key = (await h.key('acme', ['entities.read'], { rate_limit_per_minute: 5 })).key;
    for (let i = 0; i < 3; i++) {
      const res = await h.call({ key, tenant: 'globex' }, { method: 'GET', url: '/api/v1/entities' });
      assertError(res, 401, 'invalid_credentials');
    }
    const res = await h.call({ key, tenant: 'acme' }, { method: 'GET', url: '/api/v1/entities' });
    assert.equal(res.statusCode, 200);
    assertRateLimitHeaders(res, 5, 4);
  });
});

describe('security: failed authentications are limited per IP (brute-force guard, docs/api.md#failed-authentications)', () => {
  let h: Harness;
  let valid: { key: string; tenant: string };
  const list = { method: 'GET', url: '/api/v1/entities' } as const;
  const bad = { key: generateKey('ix_live_'), tenant: 'acme' };

  before(async () => {
    h = await harness(); // the default IX_AUTH_FAILURE_LIMIT: 30
    await h.tenant('acme');
    valid = { key: (await h.key('acme', ['entities.read'])).key, tenant: 'acme' };
  });
  after(() => h.close());

  /** A 429 from the guard: Retry-After within the minute, no RateLimit headers (no key was charged). */
  function assertBlocked(res: Awaited<ReturnType<Harness['call']>>): void {
    const error = assertError(res, 429, 'rate_limited');
    assert.match(error.message, /failed authentications/);
    const wait = Number(res.headers['retry-after']);
    assert.ok(Number.isInteger(wait) && wait >= 1 && wait <= 60, `retry-after ${res.headers['retry-after']}`);
    for (const name of rateLimitHeaders) assert.equal(res.headers[name], undefined);
  }

  test("an IP's first 30 failed authentications are 401; its 31st attempt and every request after are 429", async () => {
    const from = { ...list, remoteAddress: '198.51.100.1' };
    for (let attempt = 1; attempt <= 30; attempt++) {
      const res = await h.call(bad, from);
      assert.equal(res.statusCode, 401, `attempt ${attempt}: ${res.body}`);
      assertError(res, 401, 'invalid_credentials');
    }
    assertBlocked(await h.call(bad, from));
    // Every request from that IP, a valid key's included, until the minute ends.
    assertBlocked(await h.call(valid, from));
    assertBlocked(await h.call(bad, { ...from, url: '/api/v1/me' }));

    // Another address is not affected.
    const elsewhere = await h.call(valid, { ...list, remoteAddress: '198.51.100.2' });
    assert.equal(elsewhere.statusCode, 200, elsewhere.body);
  });

  test('requests that authenticate do not count: 29 failures, a success, the 30th failure is still 401', async () => {
    const from = { ...list, remoteAddress: '198.51.100.3' };
    for (let attempt = 1; attempt <= 29; attempt++) assertError(await h.call(bad, from), 401, 'invalid_credentials');
    const ok = await h.call(valid, from);
    assert.equal(ok.statusCode, 200, ok.body);
    assertError(await h.call(bad, from), 401, 'invalid_credentials');
    assertBlocked(await h.call(valid, from));
  });

  test('IX_AUTH_FAILURE_LIMIT sets the number: with 3, the 4th attempt is 429', async () => {
    const small = await harness({ IX_AUTH_FAILURE_LIMIT: '3' });
    try {
      await small.tenant('acme');
      const from = { ...list, remoteAddress: '198.51.100.4' };
      for (let attempt = 1; attempt <= 3; attempt++) assertError(await small.call(bad, from), 401, 'invalid_credentials');
      assertError(await small.call(bad, from), 429, 'rate_limited');
    } finally {
      await small.close();
    }
  });
});
