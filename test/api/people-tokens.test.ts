import assert from 'node:assert/strict';
import { createPublicKey, generateKeyPairSync } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { base64url, createLocalJWKSet, decodeJwt, decodeProtectedHeader, jwtVerify, SignJWT } from 'jose';
import { cliSource } from '../../src/audit/audit-log.ts';
import { AccessTokens, tokenAudience, tokenIssuer } from '../../src/auth/access-tokens.ts';
import { revokeRole } from '../../src/auth/user-service.ts';
import { defineConnector } from '../../src/connectors/connector.ts';
import { builtInConnectors } from '../../src/connectors/registry.ts';
import { assertError, assertOk, assertRateLimitHeaders } from '../support/assertions.ts';
import { body, type Harness, harness } from '../support/harness.ts';
import { asPerson, person, signingKeysOf, tokensOf } from '../support/people.ts';

/** Bearer access tokens on tenant endpoints: what is accepted, what is refused and why (docs/api.md#tenant-endpoints, docs/people-and-console.md#access-tokens). */

const echoSchema = { type: 'object', additionalProperties: true, properties: {} } as const;

/** A connector of this file only: `test` answers at once, so an execute needs no upstream. */
const echoConnector = defineConnector<typeof echoSchema, typeof echoSchema>({
  id: 'echo-0.1.0',
  configProperties: {},
  secretFields: [],
  urlFields: [],
  defaults: { timeout_seconds: 30 },
  offers: ['test'],
  requestSchemas: { send: echoSchema, receive: echoSchema },
  connect() {
    return {
      async send() {
        return { data: {}, messageCount: 0 };
      },
      async receive() {
        return { data: {}, messageCount: 0 };
      },
      async test() {
        return { data: { message: 'echo is there', details: {} }, messageCount: 0 };
      },
    };
  },
});

describe('people: access tokens on tenant endpoints', () => {
  let h: Harness;
  let adaId: string;
  let ada: string;
  let viewer: string;
  let developer: string;

  const me = (token: string, tenant = 'acme') => asPerson(h, token, tenant, { method: 'GET', url: '/api/v1/me' });

  /** A token signed with the service's own current key, with the claims given (defaults: a valid token for Ada). */
  async function forged(claims: Record<string, unknown>, header: Record<string, unknown> = {}): Promise<string> {
    const { kid, key } = await signingKeysOf(h).signing();
    const valid = decodeJwt(ada);
    const now = Math.floor(Date.now() / 1000);
    return new SignJWT({ ...valid, iat: now, exp: now + 600, ...claims })
      .setProtectedHeader({ alg: 'EdDSA', kid, typ: 'JWT', ...header })
      .sign(key);
  }

  /** Added to the clock people's cache reads: a test steps it past the 1 s bound instead of waiting for it. */
  let skewMs = 0;

  before(async () => {
    h = await harness(
      { IX_AUTH_FAILURE_LIMIT: '10000' },
      { connectors: (config) => [...builtInConnectors(config), echoConnector], people: { now: () => Date.now() + skewMs } },
    );
    await h.tenant('acme');
    await h.tenant('globex');
    adaId = await person(h, 'ada@example.com', { acme: 'owner' });
    await person(h, 'vic@example.com', { acme: 'viewer' });
    await person(h, 'dev@example.com', { acme: 'developer' });
    ada = (await tokensOf(h, 'ada@example.com')).access;
    viewer = (await tokensOf(h, 'vic@example.com')).access;
    developer = (await tokensOf(h, 'dev@example.com')).access;
  });
  after(() => h.close());

  test('the token: EdDSA with a kid; iss, aud, sub, iat, exp (15 minutes), jti', () => {
    const header = decodeProtectedHeader(ada);
    assert.equal(header.alg, 'EdDSA');
    assert.match(String(header.kid), /^sig_/);
    const claims = decodeJwt(ada);
    assert.equal(claims.iss, tokenIssuer);
    assert.equal(claims.aud, 'interchange');
    assert.equal(claims.sub, adaId);
    assert.equal(typeof claims.jti, 'string');
    assert.equal((claims.exp ?? 0) - (claims.iat ?? 0), 900);
  });

  test('GET /me with a token: {user, tenant, role}, with the RateLimit headers of a per-user limit of 600', async () => {
    const res = await me(ada);
    assert.deepEqual(assertOk(res), {
      user: { id: adaId, email: 'ada@example.com', name: 'ada', created_at: body(res).data.user.created_at },
      tenant: { id: 'acme', name: 'Tenant acme', type: 'production' },
      role: 'owner',
    });
    assertRateLimitHeaders(res, 600, 599);
    // The counter is the person's, across tenants and tokens.
    assertRateLimitHeaders(await me(ada), 600, 598);
  });

  test('refused with 401 invalid_credentials: tampered, wrong aud or iss, alg none, HS256 with the public key, unknown kid', async () => {
    const [head, payload, signature] = ada.split('.');
    const otherPayload = base64url.encode(JSON.stringify({ ...decodeJwt(ada), sub: 'usr_someone_else' }));
    const flipped = signature[5] === 'A' ? 'B' : 'A';
    const tampered = [
      `${head}.${otherPayload}.${signature}`,
      `${head}.${payload}.${signature.slice(0, 5)}${flipped}${signature.slice(6)}`,
      `${head}.${payload}.`,
    ];

    const none = `${base64url.encode(JSON.stringify({ alg: 'none', typ: 'JWT' }))}.${payload}.`;
    // The classic confusion: an HMAC keyed with the (public) verification key.
    const { kid } = decodeProtectedHeader(ada);
    const jwks = body(await h.app.inject({ method: 'GET', url: '/.well-known/jwks.json' }));
    const publicJwk = jwks.keys.find((k: { kid: string }) => k.kid === kid);
    const publicPem = createPublicKey({ key: publicJwk, format: 'jwk' }).export({ type: 'spki', format: 'pem' });
    const hmacs = await Promise.all(
      [Buffer.from(publicPem), Buffer.from(JSON.stringify(publicJwk)), base64url.decode(publicJwk.x)].map((secret) =>
        new SignJWT(decodeJwt(ada)).setProtectedHeader({ alg: 'HS256', kid }).sign(secret),
      ),
    );
    const stranger = generateKeyPairSync('ed25519').privateKey;
    const unknownKid = await new SignJWT(decodeJwt(ada)).setProtectedHeader({ alg: 'EdDSA', kid: 'sig_unknown' }).sign(stranger);
    const strangerWithOurKid = await new SignJWT(decodeJwt(ada)).setProtectedHeader({ alg: 'EdDSA', kid }).sign(stranger);

    const refused = {
      tampered,
      none: [none],
      hmacs,
      wrongAud: [await forged({ aud: 'someone-else' }), await forged({ aud: undefined })],
      wrongIss: [await forged({ iss: 'https://evil.example' }), await forged({ iss: undefined })],
      noKid: [await forged({}, { kid: undefined })],
      unknownKid: [unknownKid, strangerWithOurKid],
      unknownUser: [await forged({ sub: 'usr_nobody' })],
      unknownSession: [await forged({ sid: 'ses_nobody' })],
      garbage: ['a.b.c', 'not-a-jwt', `${head}.${payload}`],
    };
    for (const [why, tokens] of Object.entries(refused)) {
      for (const token of tokens) {
        const res = await me(token);
        assert.equal(res.statusCode, 401, `${why}: ${res.body}`);
        assertError(res, 401, 'invalid_credentials');
      }
    }
    // The real token still works: nothing above was refused for another reason.
    assertOk(await me(ada));
  });

  test('a token this service could not have issued is refused: iat ahead, a lifetime over the TTL, another typ', async () => {
    const now = Math.floor(Date.now() / 1000);
    // The forgery helper itself makes tokens that pass: what is refused below is refused for the claim changed.
    assertOk(await me(await forged({})));
    assertOk(await me(await forged({ iat: now + 30, exp: now + 600 }))); // iat within the skew
    assertOk(await me(await forged({ iat: now, exp: now + 900 + 60 }))); // the TTL plus the skew
    const refused = {
      iatAnHourAhead: await forged({ iat: now + 3600, exp: now + 3600 + 600 }),
      iatTwoMinutesAhead: await forged({ iat: now + 120, exp: now + 600 }),
      tenYears: await forged({ iat: now, exp: now + 10 * 365 * 86_400 }),
      ttlPlusSkewPlusOne: await forged({ iat: now, exp: now + 900 + 61 }),
      backdatedIat: await forged({ iat: now - 86_400, exp: now + 600 }),
      noTyp: await forged({}, { typ: undefined }),
      otherTyp: await forged({}, { typ: 'at+jwt' }),
    };
    for (const [why, token] of Object.entries(refused)) {
      const res = await me(token);
      assert.equal(res.statusCode, 401, `${why}: ${res.body}`);
      assertError(res, 401, 'invalid_credentials');
    }
  });

  test('an expired token: 401 expired_credentials (and an expired forgery is still invalid_credentials)', async () => {
    const past = Math.floor(Date.now() / 1000) - 60;
    assertError(await me(await forged({ iat: past - 900, exp: past })), 401, 'expired_credentials');
    const stranger = generateKeyPairSync('ed25519').privateKey;
    const { kid } = decodeProtectedHeader(ada);
    const expiredForgery = await new SignJWT({ ...decodeJwt(ada), exp: past })
      .setProtectedHeader({ alg: 'EdDSA', kid })
      .sign(stranger);
    assertError(await me(expiredForgery), 401, 'invalid_credentials');
  });

  test('a tenant without a membership, or an unknown one: 401 invalid_credentials; no tenant header: 400 missing_tenant', async () => {
    assertError(await me(ada, 'globex'), 401, 'invalid_credentials');
    assertError(await me(ada, 'no-such-tenant'), 401, 'invalid_credentials');
    const res = await h.app.inject({ method: 'GET', url: '/api/v1/me', headers: { authorization: `Bearer ${ada}` } });
    assertError(res, 400, 'missing_tenant');
  });

  test('an API key in Authorization: Bearer stays 401 api_key_in_bearer', async () => {
    const { key } = await h.key('acme', ['*']);
    const res = await h.app.inject({
      method: 'GET',
      url: '/api/v1/me',
      headers: { authorization: `Bearer ${key}`, 'x-tenant-id': 'acme' },
    });
    assertError(res, 401, 'api_key_in_bearer');
  });

  test('role scopes: a viewer reads but cannot create a key (403 insufficient_scope); a developer manages integrations', async () => {
    assertOk(await asPerson(h, viewer, 'acme', { method: 'GET', url: '/api/v1/api-keys' }));
    assertOk(await asPerson(h, viewer, 'acme', { method: 'GET', url: '/api/v1/integrations' }));
    const create = { method: 'POST', url: '/api/v1/api-keys', payload: { scopes: ['entities.read'] } };
    const refused = assertError(await asPerson(h, viewer, 'acme', create), 403, 'insufficient_scope');
    assert.equal(refused.details?.required_scope, 'api_keys.write');
    assert.deepEqual((refused.details as { granted_scopes: string[] }).granted_scopes.toSorted(), [
      'api_keys.read',
      'entities.read',
      'executions.read',
      'integrations.read',
      'processflow.read',
      'webhooks.read',
    ]);
    const entity = { method: 'POST', url: '/api/v1/entities', payload: { name: 'x' } };
    assertError(await asPerson(h, viewer, 'acme', entity), 403, 'insufficient_scope');

    assertError(await asPerson(h, developer, 'acme', create), 403, 'insufficient_scope');
    assert.equal((await asPerson(h, developer, 'acme', entity)).statusCode, 201);
    const put = {
      method: 'PUT',
      url: '/api/v1/integrations/dev-echo',
      payload: { connector: 'echo-0.1.0', config: {} },
    };
    assert.equal((await asPerson(h, developer, 'acme', put)).statusCode, 201);
  });

  test('keys created by a person record created_by; keys created by a key do not', async () => {
    const res = await asPerson(h, ada, 'acme', { method: 'POST', url: '/api/v1/api-keys', payload: { scopes: ['*'] } });
    assert.equal(res.statusCode, 201, res.body);
    const created = body(res).data;
    assert.equal(created.created_by, adaId);
    assert.equal(created.rate_limit_per_minute, 600);
    const byKey = await h.call(
      { key: created.key, tenant: 'acme' },
      { method: 'POST', url: '/api/v1/api-keys', payload: { scopes: ['entities.read'] } },
    );
    assert.equal(body(byKey).data.created_by, null);
    // Shown wherever the key object is: the list and GET /api-keys/{id}.
    const got = await asPerson(h, ada, 'acme', { method: 'GET', url: `/api/v1/api-keys/${created.id}` });
    assert.equal(body(got).data.created_by, adaId);
  });

  test("a person's execute records user_id and no api_key_id; a key's the other way round", async () => {
    await asPerson(h, ada, 'acme', {
      method: 'PUT',
      url: '/api/v1/integrations/echo',
      payload: { connector: 'echo-0.1.0', config: {} },
    });
    const run = await asPerson(h, ada, 'acme', {
      method: 'POST',
      url: '/api/v1/integrations/echo/execute',
      payload: { operation: 'test' },
    });
    assert.equal(run.statusCode, 200, run.body);
    const { key, record } = await h.key('acme', ['*']);
    const byKey = await h.call(
      { key, tenant: 'acme' },
      { method: 'POST', url: '/api/v1/integrations/echo/execute', payload: { operation: 'test' } },
    );
    assert.equal(byKey.statusCode, 200);
    const list = assertOk(await asPerson(h, ada, 'acme', { method: 'GET', url: '/api/v1/executions?integration_id=echo' }));
    assert.equal(list.length, 2);
    const [newest, oldest] = list;
    assert.equal(oldest.user_id, adaId);
    assert.equal(oldest.api_key_id, null);
    assert.equal(newest.user_id, null);
    assert.equal(newest.api_key_id, record.id);
  });

  test('a removed membership is refused within 1 s while the token is still live', async () => {
    await person(h, 'leaver@example.com', { acme: 'developer' });
    const token = (await tokensOf(h, 'leaver@example.com')).access;
    // Read once, so this instance keeps the membership (up to 1 s) and the next call may be answered from there.
    assertOk(await me(token));
    await revokeRole(h.storage.db, 'leaver@example.com', 'acme', cliSource());
    // 1 s on the cache's clock since the change (more since the read): whatever was kept is too old now.
    skewMs += 1000;
    assertError(await me(token), 401, 'invalid_credentials');
  });

  test('JWKS: public keys only, and it verifies an access token with jose', async () => {
    const res = await h.app.inject({ method: 'GET', url: '/.well-known/jwks.json' });
    assert.equal(res.statusCode, 200);
    const jwks = body(res);
    for (const key of jwks.keys) {
      assert.deepEqual(Object.keys(key).sort(), ['alg', 'crv', 'kid', 'kty', 'use', 'x']);
      assert.equal(key.d, undefined);
    }
    const { payload } = await jwtVerify(ada, createLocalJWKSet(jwks), {
      issuer: tokenIssuer,
      audience: tokenAudience,
      algorithms: ['EdDSA'],
    });
    assert.equal(payload.sub, adaId);
  });

  test('rotating the signing key logs no one out: old tokens verify, new ones are signed with the new key', async (t) => {
    const before = decodeProtectedHeader(ada).kid;
    // Rotated as another instance (or an operator) would: through storage, not this app's own objects.
    const keys = signingKeysOf(h);
    const kid = await keys.rotate(cliSource());
    assert.notEqual(kid, before);
    assertOk(await me(ada));
    const fresh = await new AccessTokens(keys, 900).issue({ userId: adaId, sessionId: String(decodeJwt(ada).sid) });
    assert.equal(decodeProtectedHeader(fresh).kid, kid);
    // An unknown kid makes the app read its keys again, but at most once a second (signing-keys.ts): its clock is
    // moved past that, rather than relying on the tests before this one having taken a second since its last read.
    t.mock.timers.enable({ apis: ['Date'], now: Date.now() + 1000 });
    assertOk(await me(fresh));
    const listed = body(await h.app.inject({ method: 'GET', url: '/.well-known/jwks.json' })).keys.map(
      (k: { kid: string }) => k.kid,
    );
    assert.deepEqual(listed.toSorted(), [before, kid].toSorted());
  });
});
