import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { createRemoteJWKSet, decodeProtectedHeader, jwtVerify } from 'jose';
import { tokenAudience, tokenIssuer } from '../../src/auth/access-tokens.ts';
import { cliJson, runCli } from '../support/cli.ts';
import { createTestDatabase, dropRedisKeys, redisTestUrl, testMasterKey } from '../support/postgres.ts';
import { type Env, type Json, killAll, type ServerProcess, startServer } from '../support/processes.ts';

/**
 * People across instances (docs/people-and-console.md): two `interchange serve` on one PostgreSQL and one Redis. A token signed
 * by one is accepted by the other, each one's JWKS verifies the other's tokens, a refresh token works anywhere once,
 * and a membership removed with the CLI is refused by both within 1 s.
 */

after(killAll);

const password = 'correct horse battery staple';
const prefix = `ixtest-${randomBytes(6).toString('hex')}`;
let database: { url: string; drop(): Promise<void> } | undefined;
after(async () => {
  await database?.drop();
  // The counters this file caused (lockout, guard, limits) live under its own prefix.
  await dropRedisKeys(prefix);
});

async function post(server: ServerProcess, path: string, payload: object): Promise<{ status: number; body: Json }> {
  const res = await fetch(`${server.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(payload),
  });
  return { status: res.status, body: await res.json() };
}

async function me(server: ServerProcess, token: string): Promise<{ status: number; body: Json }> {
  const res = await fetch(`${server.url}/api/v1/me`, { headers: { authorization: `Bearer ${token}`, 'x-tenant-id': 'acme' } });
  return { status: res.status, body: await res.json() };
}

describe('people on two instances sharing PostgreSQL and Redis', () => {
  let env: Env;
  let a: ServerProcess;
  let b: ServerProcess;

  before(async () => {
    database = await createTestDatabase();
    env = {
      DATABASE_URL: database.url,
      REDIS_URL: redisTestUrl,
      IX_REDIS_PREFIX: prefix,
      IX_MASTER_KEY: testMasterKey(),
    };
    await cliJson(['tenants', 'create', 'acme'], env);
    for (const email of ['ada@example.com', 'bob@example.com']) {
      const created = await runCli(['users', 'create', email, '--password-stdin', '--json'], env, { input: `${password}\n` });
      assert.equal(created.code, 0, created.stderr);
      await cliJson(['users', 'grant', email, '--tenant', 'acme', '--role', 'admin'], env);
    }
    // Both start before anyone signed in: the first signing key is made on first need, by whichever instance.
    [a, b] = await Promise.all([startServer(env), startServer(env)]);
  });
  after(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
  });

  test("each instance accepts the other's access tokens, and each JWKS verifies them", async () => {
    const [fromA, fromB] = await Promise.all([
      post(a, '/api/v1/auth/sign-in', { email: 'ada@example.com', password }),
      post(b, '/api/v1/auth/sign-in', { email: 'bob@example.com', password }),
    ]);
    assert.equal(fromA.status, 200, JSON.stringify(fromA.body));
    assert.equal(fromB.status, 200, JSON.stringify(fromB.body));
    const tokenA = fromA.body.data.access_token;
    const tokenB = fromB.body.data.access_token;
    assert.equal((await me(b, tokenA)).body.data.user.email, 'ada@example.com');
    assert.equal((await me(a, tokenB)).body.data.user.email, 'bob@example.com');

    for (const [server, token] of [
      [b, tokenA],
      [a, tokenB],
    ] as const) {
      const jwks = createRemoteJWKSet(new URL(`${server.url}/.well-known/jwks.json`));
      const { payload } = await jwtVerify(token, jwks, { issuer: tokenIssuer, audience: tokenAudience, algorithms: ['EdDSA'] });
      assert.match(String(payload.sub), /^usr_/);
    }
    // However the first key was made, both sign with one that both know.
    assert.ok(decodeProtectedHeader(tokenA).kid && decodeProtectedHeader(tokenB).kid);
  });

  test('a refresh token issued by one instance is spent on the other; reusing it there ends the family everywhere', async () => {
    const signedIn = await post(a, '/api/v1/auth/sign-in', { email: 'ada@example.com', password });
    const first = signedIn.body.data.refresh_token;
    const refreshed = await post(b, '/api/v1/auth/refresh', { refresh_token: first });
    assert.equal(refreshed.status, 200, JSON.stringify(refreshed.body));
    const reused = await post(a, '/api/v1/auth/refresh', { refresh_token: first });
    assert.equal(reused.status, 401);
    assert.equal(reused.body.error.code, 'invalid_credentials');
    const next = await post(b, '/api/v1/auth/refresh', { refresh_token: refreshed.body.data.refresh_token });
    assert.equal(next.status, 401);
  });

  test('the per-account lockout is shared: failures on both instances add up', async () => {
    // One after another: in parallel, sign-ins from one address beyond IX_SIGN_IN_PER_ADDRESS (4) are refused as busy
    // (test/system/sign-in-limits.test.ts has the parallel case).
    for (let i = 0; i < 10; i++) {
      const res = await post(i % 2 === 0 ? a : b, '/api/v1/auth/sign-in', { email: 'bob@example.com', password: `wrong ${i}` });
      assert.equal(res.status, 401, JSON.stringify(res.body));
    }
    for (const server of [a, b]) {
      const locked = await post(server, '/api/v1/auth/sign-in', { email: 'bob@example.com', password });
      assert.equal(locked.status, 429, JSON.stringify(locked.body));
      assert.equal(locked.body.error.code, 'rate_limited');
    }
  });

  test('a membership revoked with the CLI is refused by both instances', async (t) => {
    const token = (await post(a, '/api/v1/auth/sign-in', { email: 'ada@example.com', password })).body.data.access_token;
    assert.equal((await me(a, token)).status, 200);
    assert.equal((await me(b, token)).status, 200);
    const revoked = await runCli(['users', 'revoke', 'ada@example.com', '--tenant', 'acme', '--json'], env);
    // From the command's end (its change committed), not its start.
    const revokedAt = performance.now();
    assert.equal(revoked.code, 0, revoked.stderr);
    for (const server of [a, b]) {
      let refusedAt = 0;
      while (performance.now() - revokedAt < 10_000) {
        const res = await me(server, token);
        if (res.status === 401) {
          assert.equal(res.body.error.code, 'invalid_credentials');
          refusedAt = performance.now();
          break;
        }
        await new Promise((r) => setTimeout(r, 20));
      }
      assert.ok(refusedAt > 0, `${server.url} refused the token at all`);
      // The 1 s bound itself is held on a stepped clock (test/api/people-tokens.test.ts); across processes on a loaded
      // machine the time it took is reported, not asserted.
      t.diagnostic(`${server.url} refused the token ${Math.round(refusedAt - revokedAt)} ms after the change`);
    }
  });
});
