import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { cliSource } from '../../src/audit/audit-log.ts';
import { importLegacyKey } from '../../src/auth/key-service.ts';
import { randomString } from '../../src/core/ids.ts';
import { findTenant } from '../../src/storage/tenants.ts';
import { assertError, assertRateLimitHeaders, issuePaths } from '../support/assertions.ts';
import { body, type Harness, harness } from '../support/harness.ts';
import { until } from '../support/until.ts';

type Auth = { key: string; tenant: string };

const keyObjectFields = [
  ...['created_at', 'created_by', 'expires_at', 'id', 'last4', 'legacy', 'name', 'prefix'],
  ...['rate_limit_per_minute', 'revoked_at', 'rotated_to', 'scopes', 'start', 'tenant_id', 'usage'],
];
const newKeyPattern = (prefix: string) => new RegExp(`^${prefix}[0-9A-Za-z]{46}$`);
const rfc3339 = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/;
const day = (offset: number) => new Date(Date.now() + offset * 86_400_000).toISOString().slice(0, 10);
const keysUrl = '/api/v1/api-keys';
const list = { method: 'GET', url: '/api/v1/entities' } as const;

/** The key object of docs/api.md#the-key-object for a secret just issued: display parts taken from the secret itself. */
function assertIssued(data: Record<string, unknown>, prefix: string): string {
  const key = String(data.key);
  assert.deepEqual(Object.keys(data).sort(), [...keyObjectFields, 'key'].sort());
  assert.match(key, newKeyPattern(prefix));
  assert.equal(data.prefix, prefix);
  assert.equal(data.start, key.slice(0, 12));
  assert.equal(data.last4, key.slice(-4));
  assert.equal(data.legacy, false);
  assert.match(String(data.id), /^key_[0-9a-z]+$/);
  assert.match(String(data.created_at), rfc3339);
  return key;
}

describe('api keys', () => {
  let h: Harness;
  let admin: Auth;
  let adminId: string;
  const call = (auth: Auth, options: Parameters<Harness['call']>[1]) => h.call(auth, options);
  const newKey = async (tenant: string, scopes: string[], extra = {}) => ({
    key: (await h.key(tenant, scopes, extra)).key,
    tenant,
  });
  const idOf = async (auth: Auth) => body(await call(auth, { method: 'GET', url: '/api/v1/me' })).data.key.id as string;

  before(async () => {
    // Usage is flushed at close only, so reads go through the unflushed counts deterministically.
    h = await harness({ IX_USAGE_FLUSH_MS: '60000' });
    await h.tenant('acme');
    await h.tenant('globex');
    await h.tenant('sand', 'sandbox');
    const created = await h.key('acme', ['*']);
    admin = { key: created.key, tenant: 'acme' };
    adminId = created.record.id;
  });
  after(() => h.close());

  test('create: 201 with the key object and the secret, which is never shown again nor stored', async () => {
    const res = await call(admin, { method: 'POST', url: keysUrl, payload: { name: 'crm sync', scopes: ['entities.read'] } });
    assert.equal(res.statusCode, 201, res.body);
    const data = body(res).data;
    const key = assertIssued(data, 'ix_live_');
    const { id: _id, key: _key, start: _start, last4: _last4, created_at: _createdAt, ...rest } = data;
    assert.deepEqual(rest, {
      tenant_id: 'acme',
      name: 'crm sync',
      prefix: 'ix_live_',
      scopes: ['entities.read'],
      expires_at: null,
      rate_limit_per_minute: 600,
      legacy: false,
      revoked_at: null,
      rotated_to: null,
      created_by: null,
      usage: { last_used_at: null, last_used_ip: null, request_count: 0 },
    });
    assert.equal((await call({ key, tenant: 'acme' }, list)).statusCode, 200);

    const got = await call(admin, { method: 'GET', url: `${keysUrl}/${data.id}` });
    const listed = await call(admin, { method: 'GET', url: `${keysUrl}?limit=100` });
    for (const res of [got, listed]) assert.ok(!res.body.includes(key.slice(12, -4)), 'the secret is shown again');
    const { key: _secret, usage: _usage, ...fields } = data;
    assert.deepEqual({ ...body(got).data, usage: undefined }, { ...fields, usage: undefined });
    assert.deepEqual(Object.keys(body(got).data).sort(), keyObjectFields);
    assert.ok(body(listed).data.some((k: { id: string }) => k.id === data.id));

    const row = await h.storage.db.selectFrom('api_keys').selectAll().where('id', '=', data.id).executeTakeFirstOrThrow();
    assert.equal(row.hash, createHash('sha256').update(key).digest('hex'));
    for (const [column, value] of Object.entries(row)) {
      assert.ok(!String(value).includes(key.slice(12, -4)), `api_keys.${column} holds the secret`);
    }
  });

  test('a sandbox tenant gets ix_test_ keys; name, expiry and limit are kept', async () => {
    const sand = await newKey('sand', ['api_keys.write', 'entities.read']);
    const expiresAt = new Date(Date.now() + 86_400_000).toISOString();
    const payload = { name: 'sandbox', scopes: ['entities.read'], expires_at: expiresAt, rate_limit_per_minute: 30 };
    const res = await call(sand, { method: 'POST', url: keysUrl, payload });
    assert.equal(res.statusCode, 201, res.body);
    const data = body(res).data;
    const key = assertIssued(data, 'ix_test_');
    assert.deepEqual(
      [data.tenant_id, data.name, data.expires_at, data.rate_limit_per_minute],
      ['sand', 'sandbox', expiresAt, 30],
    );
    const used = await call({ key, tenant: 'sand' }, list);
    assert.equal(used.statusCode, 200);
    assertRateLimitHeaders(used, 30, 29);
  });

  test('create: bad input is 400 validation_failed listing every problem', async () => {
    const create = async (payload: object) => issuePaths(await call(admin, { method: 'POST', url: keysUrl, payload }));
    const past = new Date(Date.now() - 1000).toISOString();
    assert.deepEqual(await create({ scopes: [] }), ['scopes']);
    assert.deepEqual(await create({ name: 'no scopes' }), ['scopes']);
    assert.deepEqual(await create({ scopes: ['foo.read', 'entities.READ', 'entities.read', 'entities'] }), [
      'scopes.0',
      'scopes.1',
      'scopes.3',
    ]);
    assert.deepEqual(await create({ scopes: ['entities.read'], expires_at: past }), ['expires_at']);
    assert.deepEqual(await create({ scopes: ['entities.read'], rate_limit_per_minute: '30' }), ['rate_limit_per_minute']);
    assert.deepEqual(await create({ scopes: ['entities.read'], rate_limit_per_minute: 0 }), ['rate_limit_per_minute']);
    assert.deepEqual(await create({ scopes: ['entities.read'], owner: 'me' }), ['owner']);
    assert.deepEqual(await create({ scopes: ['foo.read'], expires_at: past }), ['expires_at', 'scopes.0']);
  });

  test('a key grants only scopes it holds itself (403 scope_escalation); malformed scopes are still 400', async () => {
    const granter = await newKey('acme', ['entities.*', 'api_keys.write']);
    const create = (scopes: string[]) => call(granter, { method: 'POST', url: keysUrl, payload: { scopes } });
    const error = assertError(await create(['api_keys.read']), 403, 'scope_escalation');
    assert.equal(error.details?.field, 'scopes');
    assert.deepEqual(error.details?.missing_scopes, ['api_keys.read']);
    assert.deepEqual(error.details?.granted_scopes, ['entities.*', 'api_keys.write']);
    assertError(await create(['*']), 403, 'scope_escalation');
    assertError(await create(['entities.read', 'executions.*']), 403, 'scope_escalation');
    for (const scopes of [['entities.read'], ['entities.*'], ['entities.write', 'api_keys.write']]) {
      const res = await create(scopes);
      assert.equal(res.statusCode, 201, res.body);
      assert.deepEqual(body(res).data.scopes, scopes);
    }
    // A scope that does not exist is bad input, not an escalation, whatever the caller holds.
    assert.deepEqual(issuePaths(await create(['foo.read'])), ['scopes.0']);
  });

  describe('a key never mints more than it has: expiry and rate limit', () => {
    const inSeconds = (seconds: number) => new Date(Date.now() + seconds * 1000).toISOString();
    const create = (auth: Auth, payload: object) => call(auth, { method: 'POST', url: keysUrl, payload });
    const keyCount = async () =>
      Number(
        (
          await h.storage.db
            .selectFrom('api_keys')
            .select((eb) => eb.fn.countAll().as('n'))
            .executeTakeFirstOrThrow()
        ).n,
      );
    /** A key that expires in 90 s and may make 5 requests a minute (each test below makes at most 5). */
    const shortLived = async () => {
      const expiresAt = inSeconds(90);
      const created = await h.key('acme', ['api_keys.write', 'entities.read'], {
        expires_at: expiresAt,
        rate_limit_per_minute: 5,
      });
      return {
        auth: { key: created.key, tenant: 'acme' },
        id: created.record.id,
        expiresAt: created.record.expires_at as string,
      };
    };

    test('a key expiring in 90 s with 5/min cannot create one that never expires, expires later or allows more', async () => {
      const { auth, expiresAt } = await shortLived();
      const before = await keyCount();
      const scopes = ['entities.read'];

      const forever = assertError(await create(auth, { scopes, expires_at: null }), 403, 'scope_escalation');
      assert.equal(forever.details?.field, 'expires_at');
      assert.equal(forever.message, `This key expires at ${expiresAt}, so it cannot create a key that never expires.`);
      assert.deepEqual(forever.details, { field: 'expires_at', requested_expires_at: null, granted_expires_at: expiresAt });

      const later = assertError(await create(auth, { scopes, expires_at: inSeconds(86_400) }), 403, 'scope_escalation');
      assert.equal(later.details?.field, 'expires_at');
      assert.match(later.message, /^This key expires at .+, so it cannot create a key that expires later \(.+\)\.$/);

      const faster = assertError(await create(auth, { scopes, rate_limit_per_minute: 1_000_000 }), 403, 'scope_escalation');
      assert.equal(
        faster.message,
        'This key is limited to 5 requests per minute, so it cannot create a key with a limit of 1000000.',
      );
      assert.deepEqual(faster.details, {
        field: 'rate_limit_per_minute',
        requested_rate_limit_per_minute: 1_000_000,
        granted_rate_limit_per_minute: 5,
      });

      // Both at once, as in the report that found this: refused, nothing created.
      const both = { scopes, expires_at: null, rate_limit_per_minute: 1_000_000 };
      assert.equal(assertError(await create(auth, both), 403, 'scope_escalation').details?.field, 'expires_at');
      assert.equal(await keyCount(), before, 'no key was created');
    });

    test("omitted expires_at and rate_limit_per_minute are inherited: the creator's expiry, the lower limit", async () => {
      const { auth, expiresAt } = await shortLived();
      const res = await create(auth, { scopes: ['entities.read'] });
      assert.equal(res.statusCode, 201, res.body);
      const data = body(res).data;
      assert.deepEqual([data.expires_at, data.rate_limit_per_minute], [expiresAt, 5], 'the creator is below the default 600');
      assertRateLimitHeaders(await call({ key: data.key, tenant: 'acme' }, list), 5, 4);

      // A creator above the default gives the default; one that never expires gives no expiry.
      const generous = await newKey('acme', ['api_keys.write', 'entities.read'], { rate_limit_per_minute: 1000 });
      const child = body(await create(generous, { scopes: ['entities.read'] })).data;
      assert.deepEqual([child.expires_at, child.rate_limit_per_minute], [null, 600]);
    });

    test('equal (or lesser) expiry and limit are fine, whatever the offset the expiry is written in', async () => {
      const { auth, expiresAt } = await shortLived();
      const sameInstant = new Date(Date.parse(expiresAt) + 2 * 3_600_000).toISOString().replace('Z', '+02:00');
      const equal = await create(auth, { scopes: ['entities.read'], expires_at: sameInstant, rate_limit_per_minute: 5 });
      assert.equal(equal.statusCode, 201, equal.body);
      assert.deepEqual([body(equal).data.expires_at, body(equal).data.rate_limit_per_minute], [expiresAt, 5]);

      const earlier = new Date(Date.parse(expiresAt) - 30_000).toISOString();
      const less = await create(auth, { scopes: ['entities.read'], expires_at: earlier, rate_limit_per_minute: 1 });
      assert.equal(less.statusCode, 201, less.body);
      assert.deepEqual([body(less).data.expires_at, body(less).data.rate_limit_per_minute], [earlier, 1]);
    });

    test('a key that never expires may create keys with any expiry or none, up to its own limit', async () => {
      const unbounded = await newKey('acme', ['api_keys.write', 'entities.read']);
      for (const expiresAt of [null, inSeconds(60), inSeconds(10 * 365 * 86_400)]) {
        const res = await create(unbounded, { scopes: ['entities.read'], expires_at: expiresAt });
        assert.equal(res.statusCode, 201, res.body);
        assert.equal(body(res).data.expires_at, expiresAt);
      }
      const atLimit = await create(unbounded, { scopes: ['entities.read'], rate_limit_per_minute: 600 });
      assert.equal(atLimit.statusCode, 201, atLimit.body);
      const over = assertError(
        await create(unbounded, { scopes: ['entities.read'], rate_limit_per_minute: 601 }),
        403,
        'scope_escalation',
      );
      assert.equal(over.details?.field, 'rate_limit_per_minute');
    });

    test("rotate: refused when the successor would outlive or outpace the caller; a key's own rotation is fine", async () => {
      const { auth, id, expiresAt } = await shortLived();
      const rotate = (target: string) => call(auth, { method: 'POST', url: `${keysUrl}/${target}/rotate` });
      const target = async (extra: object) => (await h.key('acme', ['entities.read'], extra)).record.id;

      const forever = await target({ rate_limit_per_minute: 5 });
      const error = assertError(await rotate(forever), 403, 'scope_escalation');
      assert.deepEqual(error.details, { field: 'expires_at', requested_expires_at: null, granted_expires_at: expiresAt });
      assert.equal(error.message, `This key expires at ${expiresAt}, so it cannot rotate a key that never expires.`);
      assert.equal(body(await call(admin, { method: 'GET', url: `${keysUrl}/${forever}` })).data.rotated_to, null);

      const later = await target({ expires_at: inSeconds(86_400), rate_limit_per_minute: 5 });
      assert.equal(assertError(await rotate(later), 403, 'scope_escalation').details?.field, 'expires_at');

      const faster = await target({ expires_at: expiresAt });
      const limitError = assertError(await rotate(faster), 403, 'scope_escalation');
      assert.equal(limitError.details?.field, 'rate_limit_per_minute');
      assert.equal(
        limitError.message,
        'This key is limited to 5 requests per minute, so it cannot rotate a key with a limit of 600.',
      );

      const equal = await target({ expires_at: expiresAt, rate_limit_per_minute: 5 });
      assert.equal((await rotate(equal)).statusCode, 201);

      const self = await rotate(id);
      assert.equal(self.statusCode, 201, self.body);
      assert.deepEqual([body(self).data.expires_at, body(self).data.rate_limit_per_minute], [expiresAt, 5]);
    });
  });

  test('list: cursor pagination walks every key of the tenant once, limit=1', async () => {
    await h.tenant('pager');
    const lister = await h.key('pager', ['api_keys.read']);
    const ids = [lister.record.id];
    for (let i = 0; i < 3; i++) ids.push((await h.key('pager', ['entities.read'])).record.id);
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const url: string = `${keysUrl}?limit=1${cursor ? `&cursor=${cursor}` : ''}`;
      const res = await call({ key: lister.key, tenant: 'pager' }, { method: 'GET', url });
      assert.equal(res.statusCode, 200, res.body);
      const page = body(res);
      assert.equal(page.data.length, 1);
      assert.deepEqual(Object.keys(page.data[0]).sort(), keyObjectFields);
      seen.push(page.data[0].id);
      cursor = page.pagination.next_cursor;
      pages++;
    } while (cursor && pages < 10);
    assert.deepEqual(seen, [...ids].sort());
    assert.equal(cursor, null);
    const auth = { key: lister.key, tenant: 'pager' };
    assert.deepEqual(issuePaths(await call(auth, { method: 'GET', url: `${keysUrl}?limit=101` })), ['limit']);
    assert.deepEqual(issuePaths(await call(auth, { method: 'GET', url: `${keysUrl}?cursor=!!` })), ['cursor']);
  });

  test("get: one key of this tenant; another tenant's key id is 404 not_found", async () => {
    const own = await h.key('acme', ['entities.read'], { name: 'own' });
    const got = body(await call(admin, { method: 'GET', url: `${keysUrl}/${own.record.id}` })).data;
    assert.deepEqual([got.id, got.name, got.tenant_id, got.start], [own.record.id, 'own', 'acme', own.key.slice(0, 12)]);
    const foreign = await h.key('globex', ['*']);
    assertError(await call(admin, { method: 'GET', url: `${keysUrl}/${foreign.record.id}` }), 404, 'not_found');
    assertError(await call(admin, { method: 'GET', url: `${keysUrl}/key_missing` }), 404, 'not_found');
    assertError(await call(admin, { method: 'GET', url: `${keysUrl}/${foreign.record.id}/usage` }), 404, 'not_found');
  });

  test('usage: requests and errors per day, oldest first; 401s are not counted', async () => {
    const testStarted = Date.now();
    const user = await newKey('acme', ['entities.read']);
    const userId = await idOf(user); // 1 request, 200
    await call(user, list); // 200
    await call(user, { method: 'POST', url: '/api/v1/entities', payload: { name: 'x' } }); // 403
    await call(user, { method: 'GET', url: '/api/v1/entities?limit=500' }); // 400
    assertError(await call({ ...user, tenant: 'globex' }, list), 401, 'invalid_credentials');

    const res = await call(admin, { method: 'GET', url: `${keysUrl}/${userId}/usage?days=3` });
    assert.deepEqual(body(res), {
      success: true,
      data: [
        { date: day(-2), requests: 0, errors: 0 },
        { date: day(-1), requests: 0, errors: 0 },
        { date: day(0), requests: 4, errors: 2 },
      ],
    });
    const usage = body(await call(admin, { method: 'GET', url: `${keysUrl}/${userId}` })).data.usage;
    assert.equal(usage.request_count, 4);
    assert.equal(usage.last_used_ip, '127.0.0.1');
    // Used by the calls above: no later than now, no earlier than this test's first call.
    assert.ok(Date.parse(usage.last_used_at) <= Date.now() && Date.parse(usage.last_used_at) >= testStarted, usage.last_used_at);

    const month = body(await call(admin, { method: 'GET', url: `${keysUrl}/${userId}/usage` })).data;
    assert.equal(month.length, 30);
    assert.deepEqual([month[0].date, month[29].date], [day(-29), day(0)]);
    for (const days of ['0', '367', 'abc']) {
      assert.deepEqual(issuePaths(await call(admin, { method: 'GET', url: `${keysUrl}/${userId}/usage?days=${days}` })), [
        'days',
      ]);
    }
  });

  test('rotate: the successor copies the key, the old key works for the overlap, then expires', async (t) => {
    const expiresAt = new Date(Date.now() + 86_400_000).toISOString();
    const payload = { name: 'crm sync', scopes: ['entities.read'], expires_at: expiresAt, rate_limit_per_minute: 50 };
    const old = body(await call(admin, { method: 'POST', url: keysUrl, payload })).data;
    const oldAuth = { key: old.key, tenant: 'acme' };
    assert.equal((await call(oldAuth, list)).statusCode, 200);

    // Far longer than the calls below take however loaded the machine is: its end is reached by setting the clock.
    const overlapSeconds = 600;
    const before = Date.now();
    const res = await call(admin, {
      method: 'POST',
      url: `${keysUrl}/${old.id}/rotate`,
      payload: { overlap_seconds: overlapSeconds },
    });
    assert.equal(res.statusCode, 201, res.body);
    const next = body(res).data;
    const nextAuth = { key: assertIssued(next, 'ix_live_'), tenant: 'acme' };
    assert.notEqual(next.id, old.id);
    assert.deepEqual(
      [next.name, next.scopes, next.expires_at, next.rate_limit_per_minute, next.rotated_to, next.revoked_at],
      ['crm sync', ['entities.read'], expiresAt, 50, null, null],
    );
    const oldNow = body(await call(admin, { method: 'GET', url: `${keysUrl}/${old.id}` })).data;
    assert.equal(oldNow.rotated_to, next.id);
    const overlapEnd = Date.parse(oldNow.expires_at);
    const overlapMs = overlapSeconds * 1000;
    assert.ok(overlapEnd >= before + overlapMs && overlapEnd <= Date.now() + overlapMs, oldNow.expires_at);

    assert.equal((await call(oldAuth, list)).statusCode, 200);
    const fresh = await call(nextAuth, list);
    assert.equal(fresh.statusCode, 200);
    assertRateLimitHeaders(fresh, 50, 47); // the lineage shares one counter
    // The app's clock (Date, in this process) moved to the overlap's last millisecond, then to its end.
    t.mock.timers.enable({ apis: ['Date'], now: overlapEnd - 1 });
    assert.equal((await call(oldAuth, list)).statusCode, 200);
    t.mock.timers.setTime(overlapEnd);
    const error = assertError(await call(oldAuth, list), 401, 'expired_credentials');
    assert.match(error.message, /rotated/);
    assert.equal((await call(nextAuth, list)).statusCode, 200);
  });

  test('rotate: overlap_seconds 0 ends the old key at once; the default overlap is 3600 s', async () => {
    const now = await h.key('acme', ['entities.read']);
    await call({ key: now.key, tenant: 'acme' }, list); // cached by the auth layer
    const res = await call(admin, { method: 'POST', url: `${keysUrl}/${now.record.id}/rotate`, payload: { overlap_seconds: 0 } });
    assert.equal(res.statusCode, 201);
    assertError(await call({ key: now.key, tenant: 'acme' }, list), 401, 'expired_credentials');

    const later = await h.key('acme', ['entities.read']);
    const beforeRotate = Date.now();
    const rotated = await call(admin, { method: 'POST', url: `${keysUrl}/${later.record.id}/rotate` });
    const afterRotate = Date.now();
    assert.equal(rotated.statusCode, 201, rotated.body);
    const old = body(await call(admin, { method: 'GET', url: `${keysUrl}/${later.record.id}` })).data;
    // An hour from the rotation, whenever within the call it happened (the timestamps keep milliseconds).
    const oldExpiry = Date.parse(old.expires_at);
    assert.ok(oldExpiry >= beforeRotate + 3_600_000 && oldExpiry <= afterRotate + 3_600_000, old.expires_at);
    assert.equal((await call({ key: later.key, tenant: 'acme' }, list)).statusCode, 200);
  });

  test('rotate: 409 for a rotated or revoked key, 403 without its scopes, 400 for a bad overlap, 404 elsewhere', async () => {
    const rotate = (auth: Auth, id: string, payload?: object) =>
      call(auth, { method: 'POST', url: `${keysUrl}/${id}/rotate`, payload });
    const once = await h.key('acme', ['entities.read']);
    assert.equal((await rotate(admin, once.record.id)).statusCode, 201);
    assert.match(assertError(await rotate(admin, once.record.id), 409, 'conflict').message, /rotated/);
    const revoked = await h.key('acme', ['entities.read']);
    await call(admin, { method: 'DELETE', url: `${keysUrl}/${revoked.record.id}` });
    assert.match(assertError(await rotate(admin, revoked.record.id), 409, 'conflict').message, /revoked/);

    const keyAdmin = await newKey('acme', ['api_keys.*']);
    const target = await h.key('acme', ['entities.read']);
    const error = assertError(await rotate(keyAdmin, target.record.id), 403, 'scope_escalation');
    assert.equal(error.details?.field, 'scopes');
    assert.deepEqual(error.details?.missing_scopes, ['entities.read']);
    assert.equal(body(await call(admin, { method: 'GET', url: `${keysUrl}/${target.record.id}` })).data.rotated_to, null);

    for (const overlap of [-1, 604_801, '60', 1.5]) {
      assert.deepEqual(issuePaths(await rotate(admin, target.record.id, { overlap_seconds: overlap })), ['overlap_seconds']);
    }
    assert.equal((await rotate(admin, target.record.id, { overlap_seconds: 604_800 })).statusCode, 201);
    assertError(await rotate(admin, (await h.key('globex', ['*'])).record.id), 404, 'not_found');
  });

  test('rate limit: a rotated key shares its predecessor counter', async () => {
    const limited = await newKey('acme', ['api_keys.write', 'entities.read'], { rate_limit_per_minute: 3 });
    assertRateLimitHeaders(await call(limited, list), 3, 2);
    const id = await idOf(limited);
    const res = await call(limited, { method: 'POST', url: `${keysUrl}/${id}/rotate` });
    assert.equal(res.statusCode, 201, res.body);
    assertRateLimitHeaders(res, 3, 0);
    assert.equal(body(res).data.rate_limit_per_minute, 3);

    for (const auth of [{ key: body(res).data.key, tenant: 'acme' }, limited]) {
      const refused = await call(auth, list);
      const error = assertError(refused, 429, 'rate_limited');
      assert.match(error.message, /3 requests per minute/);
      const wait = Number(refused.headers['retry-after']);
      assert.ok(Number.isInteger(wait) && wait >= 1 && wait <= 60, `retry-after ${refused.headers['retry-after']}`);
      assert.equal(refused.headers['ratelimit-reset'], String(wait));
      assertRateLimitHeaders(refused, 3, 0);
    }
  });

  test('revoke: effective at once, idempotent, allowed on the key itself, 404 for another tenant', async () => {
    const victim = await newKey('acme', ['entities.read']);
    const victimId = await idOf(victim); // now cached by the auth layer
    const res = await call(admin, { method: 'DELETE', url: `${keysUrl}/${victimId}` });
    assert.equal(res.statusCode, 200, res.body);
    const revokedAt = body(res).data.revoked_at;
    assert.match(revokedAt, rfc3339);
    assert.deepEqual(Object.keys(body(res).data).sort(), keyObjectFields);
    assertError(await call(victim, list), 401, 'invalid_credentials');
    const again = await call(admin, { method: 'DELETE', url: `${keysUrl}/${victimId}` });
    assert.equal(again.statusCode, 200);
    assert.equal(body(again).data.revoked_at, revokedAt);
    assert.equal(body(await call(admin, { method: 'GET', url: `${keysUrl}/${victimId}` })).data.revoked_at, revokedAt);

    const self = await newKey('acme', ['api_keys.write']);
    const selfRes = await call(self, { method: 'DELETE', url: `${keysUrl}/${await idOf(self)}` });
    assert.equal(selfRes.statusCode, 200, selfRes.body);
    assertError(await call(self, { method: 'GET', url: '/api/v1/me' }), 401, 'invalid_credentials');

    const foreign = await h.key('globex', ['entities.read']);
    assertError(await call(admin, { method: 'DELETE', url: `${keysUrl}/${foreign.record.id}` }), 404, 'not_found');
    assert.equal((await call({ key: foreign.key, tenant: 'globex' }, list)).statusCode, 200);
  });

  test('legacy keys: imported keys authenticate and rotate to a new-format key', async () => {
    const tenant = (await findTenant(h.storage.db, 'acme'))!;
    const legacy = `ix_prod_${randomString(24)}`;
    const input = { name: 'old', scopes: ['api_keys.*', 'entities.read'] };
    await importLegacyKey(h.storage.db, tenant, legacy, input, h.config.defaultRateLimit, cliSource());
    const legacyAuth = { key: legacy, tenant: 'acme' };
    const me = await call(legacyAuth, { method: 'GET', url: '/api/v1/me' });
    assert.equal(me.statusCode, 200, me.body);
    const object = body(me).data.key;
    assert.deepEqual(
      [object.legacy, object.prefix, object.start, object.last4, object.name],
      [true, 'ix_prod_', legacy.slice(0, 12), legacy.slice(-4), 'old'],
    );

    const res = await call(legacyAuth, { method: 'POST', url: `${keysUrl}/${object.id}/rotate` });
    assert.equal(res.statusCode, 201, res.body);
    const next = body(res).data;
    assertIssued(next, 'ix_live_');
    assert.deepEqual(next.scopes, input.scopes);
    assert.equal((await call({ key: next.key, tenant: 'acme' }, list)).statusCode, 200);
    assert.equal((await call(legacyAuth, list)).statusCode, 200); // inside the default overlap

    const dev = `ix_dev_${randomString(24)}`;
    const { record } = await importLegacyKey(h.storage.db, tenant, dev, { scopes: ['entities.read'] }, 600, cliSource());
    assert.equal((await call({ key: dev, tenant: 'acme' }, list)).statusCode, 200);
    const shown = body(await call(admin, { method: 'GET', url: `${keysUrl}/${record.id}` })).data;
    assert.deepEqual([shown.legacy, shown.prefix], [true, 'ix_dev_']);
  });

  test('GET /me: the calling key and its tenant', async () => {
    const res = await call(admin, { method: 'GET', url: '/api/v1/me' });
    const data = body(res).data;
    assert.deepEqual(Object.keys(data).sort(), ['key', 'tenant']);
    assert.deepEqual(data.tenant, { id: 'acme', name: 'Tenant acme', type: 'production' });
    assert.deepEqual(Object.keys(data.key).sort(), keyObjectFields);
    assert.deepEqual([data.key.id, data.key.scopes, data.key.start], [adminId, ['*'], admin.key.slice(0, 12)]);
    const sand = body(await call(await newKey('sand', ['executions.read']), { method: 'GET', url: '/api/v1/me' })).data;
    assert.deepEqual([sand.tenant.type, sand.key.prefix], ['sandbox', 'ix_test_']);
  });
});

describe('api keys: usage once flushed to storage', () => {
  let h: Harness;

  before(async () => {
    // Flushes every 10 ms while a verified key stays cached for a second.
    h = await harness({ IX_USAGE_FLUSH_MS: '10', IX_KEY_CACHE_MS: '1000' });
    await h.tenant('acme');
  });
  after(() => h.close());

  test('usage and GET /me count every request exactly once after a flush', async () => {
    const { key, record } = await h.key('acme', ['entities.read', 'api_keys.read']);
    const auth = { key, tenant: 'acme' };
    await h.call(auth, list);
    await h.call(auth, list);
    await h.call(auth, { method: 'GET', url: '/api/v1/entities?limit=0' });
    const stored = async () =>
      (await h.storage.db.selectFrom('api_key_usage_daily').selectAll().where('key_id', '=', record.id).execute()).map((r) => [
        r.date,
        Number(r.requests),
        Number(r.errors),
      ]);
    // Waited for, not assumed: a flush every 10 ms may come late on a loaded machine.
    await until(async () => (await stored())[0]?.[1] === 3, 'three requests flushed');
    assert.deepEqual(await stored(), [[day(0), 3, 1]]);
    const me = body(await h.call(auth, { method: 'GET', url: '/api/v1/me' })).data.key.usage;
    assert.equal(me.request_count, 3);
    assert.equal(me.last_used_ip, '127.0.0.1');
    // Once the GET /me is flushed too, the usage route must not count it twice (stored and pending).
    await until(async () => (await stored())[0]?.[1] === 4, 'the GET /me flushed');
    assert.deepEqual(await stored(), [[day(0), 4, 1]]);
    const usage = body(await h.call(auth, { method: 'GET', url: `${keysUrl}/${record.id}/usage?days=1` })).data;
    assert.deepEqual(usage, [{ date: day(0), requests: 4, errors: 1 }]);
  });
});
