import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { cliSource } from '../../src/audit/audit-log.ts';
import { createUser } from '../../src/auth/user-service.ts';
import { findUserByEmail } from '../../src/storage/users.ts';
import { assertError, assertOk } from '../support/assertions.ts';
import { body, type Harness, harness } from '../support/harness.ts';
import { asPerson, password, person, signIn, tokensOf } from '../support/people.ts';

/** Sign-in, refresh, reuse detection, sign-out and the console's cookie (docs/people-and-console.md#refresh-tokens). */

const refreshUrl = '/api/v1/auth/refresh';

function cookieOf(res: { headers: Record<string, unknown> }): string {
  const header = res.headers['set-cookie'];
  assert.equal(typeof header, 'string', 'one Set-Cookie header');
  return header as string;
}

/** The `ix_refresh` value a Set-Cookie header sets. */
const cookieValue = (header: string) => /^ix_refresh=([^;]*)/.exec(header)?.[1];

describe('people: sessions', () => {
  let h: Harness;
  let adaId: string;

  before(async () => {
    // Failures here are many and deliberate: the per-IP guard has its own test below.
    h = await harness({ IX_AUTH_FAILURE_LIMIT: '10000' });
    await h.tenant('acme');
    await h.tenant('globex');
    adaId = await person(h, 'ada@example.com', { acme: 'admin', globex: 'viewer' });
    await person(h, 'grace@example.com', { acme: 'viewer' });
  });
  after(() => h.close());

  test('sign-in: 200 with both tokens, the user and their memberships; the email is case-insensitive', async () => {
    const res = await signIn(h, 'Ada@Example.COM');
    const data = assertOk(res);
    assert.deepEqual(Object.keys(data).sort(), [
      'access_token',
      'expires_in',
      'memberships',
      'refresh_token',
      'token_type',
      'user',
    ]);
    assert.equal(data.token_type, 'Bearer');
    assert.equal(data.expires_in, 900);
    assert.match(data.access_token, /^[\w-]+\.[\w-]+\.[\w-]+$/);
    assert.match(data.refresh_token, /^ixr_[0-9A-Za-z]{43}$/);
    assert.deepEqual(Object.keys(data.user).sort(), ['created_at', 'email', 'id', 'name']);
    assert.equal(data.user.id, adaId);
    assert.equal(data.user.email, 'ada@example.com');
    assert.deepEqual(data.memberships, [
      { tenant_id: 'acme', tenant_name: 'Tenant acme', role: 'admin' },
      { tenant_id: 'globex', tenant_name: 'Tenant globex', role: 'viewer' },
    ]);
    assert.equal(res.headers['cache-control'], 'no-store');
    assert.ok(!res.body.includes('password'), 'no password or hash in the answer');
  });

  test('a password is stored as scrypt N=2^15, r=8, p=3 with a salt of its own, and signs in at that cost', async () => {
    // The other users here are fixtures with a cheaper hash (test/support/people.ts): this one is made as the CLI makes it.
    await createUser(h.storage.db, { email: 'Cost@example.com', password }, cliSource());
    const stored = (await findUserByEmail(h.storage.db, 'cost@example.com'))?.password_hash;
    assert.match(stored ?? '', /^scrypt\$32768\$8\$3\$[\w-]{22}\$[\w-]{43}$/);
    assertOk(await signIn(h, 'cost@example.com'));
    assertError(await signIn(h, 'cost@example.com', 'not the password at all'), 401, 'invalid_credentials');
  });

  test('a wrong password and an unknown email get the same 401 invalid_credentials', async () => {
    const wrong = await signIn(h, 'grace@example.com', 'not the password at all');
    const unknown = await signIn(h, 'nobody@example.com', 'not the password at all');
    const a = assertError(wrong, 401, 'invalid_credentials');
    const b = assertError(unknown, 401, 'invalid_credentials');
    assert.deepEqual(a, b);
    assert.equal(wrong.headers['set-cookie'], undefined);
    assert.equal(unknown.headers['set-cookie'], undefined);
    // A short password is just a wrong one here (the length rule is for setting it): the same answer again.
    assert.deepEqual(assertError(await signIn(h, 'grace@example.com', 'short'), 401, 'invalid_credentials'), a);
  });

  test('sign-in refuses bad bodies with validation_failed and non-JSON with 415', async () => {
    const missing = await h.app.inject({ method: 'POST', url: '/api/v1/auth/sign-in', payload: { email: 'ada@example.com' } });
    assertError(missing, 400, 'validation_failed');
    const form = await h.app.inject({
      method: 'POST',
      url: '/api/v1/auth/sign-in',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: `email=ada%40example.com&password=${encodeURIComponent(password)}`,
    });
    assertError(form, 415, 'unsupported_media_type');
  });

  test('refresh: new tokens for the body token; the old one is spent, and presenting it again ends the family', async () => {
    const first = await tokensOf(h, 'ada@example.com');
    const res = await h.app.inject({ method: 'POST', url: refreshUrl, payload: { refresh_token: first.refresh } });
    const data = assertOk(res);
    assert.equal(data.user.id, adaId);
    assert.equal(data.memberships.length, 2);
    assert.notEqual(data.refresh_token, first.refresh);
    assert.notEqual(data.access_token, first.access);
    assert.equal(cookieValue(cookieOf(res)), data.refresh_token);
    const second = { access: data.access_token as string, refresh: data.refresh_token as string };
    assertOk(await asPerson(h, second.access, 'acme', { method: 'GET', url: '/api/v1/me' }));

    // The spent token again: refused, and the whole family with it, its descendant and access tokens included.
    const reuse = await h.app.inject({ method: 'POST', url: refreshUrl, payload: { refresh_token: first.refresh } });
    assertError(reuse, 401, 'invalid_credentials');
    const descendant = await h.app.inject({ method: 'POST', url: refreshUrl, payload: { refresh_token: second.refresh } });
    assertError(descendant, 401, 'invalid_credentials');
    assertError(await asPerson(h, second.access, 'acme', { method: 'GET', url: '/api/v1/me' }), 401, 'invalid_credentials');

    // Another session of the same person is untouched.
    const other = await tokensOf(h, 'ada@example.com');
    assertOk(await h.app.inject({ method: 'POST', url: refreshUrl, payload: { refresh_token: other.refresh } }));
  });

  test('refresh refuses unknown and malformed tokens, and asks for one when none is sent', async () => {
    const unknown = `ixr_${'A'.repeat(43)}`;
    assertError(
      await h.app.inject({ method: 'POST', url: refreshUrl, payload: { refresh_token: unknown } }),
      401,
      'invalid_credentials',
    );
    assertError(
      await h.app.inject({ method: 'POST', url: refreshUrl, payload: { refresh_token: 'x' } }),
      401,
      'invalid_credentials',
    );
    assertError(await h.app.inject({ method: 'POST', url: refreshUrl, payload: {} }), 401, 'missing_credentials');
  });

  test('the refresh cookie: HttpOnly, SameSite=Strict, Path=/api/v1/auth, 14 days, Secure except on loopback', async () => {
    const loopback = cookieOf(await signIn(h, 'ada@example.com'));
    const attributes = loopback.split('; ').slice(1);
    assert.deepEqual(attributes.sort(), ['HttpOnly', 'Max-Age=1209600', 'Path=/api/v1/auth', 'SameSite=Strict']);
    for (const host of ['127.0.0.1:8080', '[::1]:8080', 'localhost']) {
      const res = await signIn(h, 'ada@example.com', password, { headers: { host } });
      assert.ok(!cookieOf(res).includes('Secure'), `${host}: ${cookieOf(res)}`);
    }
    const remote = cookieOf(await signIn(h, 'ada@example.com', password, { headers: { host: 'interchange.example.com' } }));
    assert.ok(remote.split('; ').includes('Secure'), remote);
    assert.ok(remote.split('; ').includes('HttpOnly'));
  });

  test('refresh by cookie works with Content-Type: application/json; a cross-site form post is refused', async () => {
    const token = (await tokensOf(h, 'ada@example.com')).refresh;
    const cookie = `theme=dark; ix_refresh=${token}`;
    // What a form on another site can send: form-encoded, or text/plain, or no body at all. None spends the token.
    const attempts = [
      { 'content-type': 'application/x-www-form-urlencoded', payload: 'a=1' },
      { 'content-type': 'text/plain', payload: 'a' },
      { 'content-type': 'application/x-www-form-urlencoded', payload: '' },
      { payload: undefined },
    ];
    for (const { payload, ...type } of attempts) {
      const res = await h.app.inject({ method: 'POST', url: refreshUrl, headers: { cookie, ...type }, payload });
      assertError(res, 415, 'unsupported_media_type');
      assert.equal(res.headers['set-cookie'], undefined);
    }
    const res = await h.app.inject({
      method: 'POST',
      url: refreshUrl,
      headers: { cookie, 'content-type': 'application/json' },
    });
    const data = assertOk(res);
    assert.equal(cookieValue(cookieOf(res)), data.refresh_token);
    assert.equal(data.user.id, adaId);
  });

  test('sign-out: 200, the cookie cleared, the refresh family and the access token refused', async () => {
    const { access, refresh } = await tokensOf(h, 'grace@example.com');
    assertOk(await asPerson(h, access, 'acme', { method: 'GET', url: '/api/v1/me' }));
    const res = await h.app.inject({
      method: 'POST',
      url: '/api/v1/auth/sign-out',
      headers: { authorization: `Bearer ${access}` },
    });
    assert.deepEqual(assertOk(res), { signed_out: true });
    const cleared = cookieOf(res);
    assert.equal(cookieValue(cleared), '');
    assert.ok(cleared.includes('Max-Age=0') && cleared.includes('Path=/api/v1/auth'), cleared);
    assertError(
      await h.app.inject({ method: 'POST', url: refreshUrl, payload: { refresh_token: refresh } }),
      401,
      'invalid_credentials',
    );
    assertError(await asPerson(h, access, 'acme', { method: 'GET', url: '/api/v1/me' }), 401, 'invalid_credentials');
  });

  test('sign-out without a valid access token: 401', async () => {
    assertError(await h.app.inject({ method: 'POST', url: '/api/v1/auth/sign-out' }), 401, 'missing_credentials');
    const bad = await h.app.inject({ method: 'POST', url: '/api/v1/auth/sign-out', headers: { authorization: 'Bearer a.b.c' } });
    assertError(bad, 401, 'invalid_credentials');
  });

  test('lockout: 10 failed sign-ins lock that account (429 with Retry-After, the right password too); others are unaffected', async () => {
    await person(h, 'locked@example.com', { acme: 'viewer' });
    for (let i = 0; i < 10; i++) {
      assertError(await signIn(h, 'locked@example.com', `wrong password ${i}`), 401, 'invalid_credentials');
    }
    const locked = await signIn(h, 'LOCKED@example.com');
    assertError(locked, 429, 'rate_limited');
    const retryAfter = Number(locked.headers['retry-after']);
    assert.ok(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 900, `Retry-After ${retryAfter}`);
    // An unknown email is locked the same way (a lockout says nothing of which emails exist)…
    for (let i = 0; i < 10; i++) await signIn(h, 'ghost@example.com', 'wrong password!');
    assertError(await signIn(h, 'ghost@example.com'), 429, 'rate_limited');
    // …and another account, from the same address, signs in as before.
    assertOk(await signIn(h, 'grace@example.com'));
  });

  test('a successful sign-in starts the account’s failure count over', async () => {
    await person(h, 'typo@example.com');
    for (let i = 0; i < 9; i++) await signIn(h, 'typo@example.com', 'wrong password!');
    assertOk(await signIn(h, 'typo@example.com'));
    for (let i = 0; i < 9; i++) await signIn(h, 'typo@example.com', 'wrong password!');
    assertOk(await signIn(h, 'typo@example.com'));
  });
});

describe('people: the per-IP guard counts failed sign-ins and refreshes', () => {
  let h: Harness;

  before(async () => {
    h = await harness({ IX_AUTH_FAILURE_LIMIT: '3' });
    await h.tenant('acme');
    await person(h, 'ada@example.com', { acme: 'owner' });
  });
  after(() => h.close());

  test('after 3 failures from one address, its sign-ins, refreshes and API calls get 429; another address is served', async () => {
    const from = { remoteAddress: '203.0.113.7' };
    assertError(await signIn(h, 'ada@example.com', 'wrong password 1', from), 401, 'invalid_credentials');
    assertError(await signIn(h, 'nobody@example.com', 'wrong password 2', from), 401, 'invalid_credentials');
    const refresh = await h.app.inject({ method: 'POST', url: refreshUrl, payload: { refresh_token: 'nope' }, ...from });
    assertError(refresh, 401, 'invalid_credentials');

    const blocked = await signIn(h, 'ada@example.com', password, from);
    assertError(blocked, 429, 'rate_limited');
    assert.ok(Number(blocked.headers['retry-after']) >= 1);
    assertError(await h.app.inject({ method: 'POST', url: refreshUrl, payload: {}, ...from }), 429, 'rate_limited');
    const tokens = body(assertOkRes(await signIn(h, 'ada@example.com', password, { remoteAddress: '198.51.100.1' })));
    const api = await h.app.inject({
      method: 'GET',
      url: '/api/v1/me',
      headers: { authorization: `Bearer ${tokens.data.access_token}`, 'x-tenant-id': 'acme' },
      ...from,
    });
    assertError(api, 429, 'rate_limited');
  });
});

function assertOkRes<T extends { statusCode: number; body: string }>(res: T): T {
  assert.equal(res.statusCode, 200, res.body);
  return res;
}
