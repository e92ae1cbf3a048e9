import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { Redis } from 'ioredis';
import { build } from '../../src/app.ts';
import { assertError } from '../support/assertions.ts';
import { body, type Harness, harness } from '../support/harness.ts';
import { password, person } from '../support/people.ts';
import { dropRedisKeys, redisTestUrl } from '../support/postgres.ts';
import { until } from '../support/until.ts';

/**
 * Sign-in under parallel load (issue 17; docs/api.md#failed-authentications, docs/people-and-console.md#sign-in). Counts, not times: how many passwords were checked
 * (each check ends in a 401 or a 200, nothing else), how many were refused, and in which order answers came.
 * - Every attempt is counted toward its address (30 a minute) and its account (10 in 15 minutes) before its password is
 *   checked, in one atomic step: a burst cannot pass a count, on one instance or on two sharing Redis.
 * - Password checks wait in a bounded queue, served address by address: a flood from one address is refused early
 *   (429 sign_in_busy) and cannot put another person's sign-in behind it.
 * Sequential limits (the 31st attempt, the 11th) are pinned in test/api/security.test.ts and test/api/people-sessions.test.ts.
 */

const prefix = `ixtest-${randomBytes(6).toString('hex')}`;

after(() => dropRedisKeys(prefix));

/**
 * Until each instance's Redis connection is up: before that, an instance counts in memory (its insurance limiter, as
 * docs/api.md says), and a burst sent then would be counted per instance. Probes from addresses of their own, one
 * wrong sign-in per instance, until Redis holds a count from every instance.
 */
async function untilBothCountInRedis(apps: FastifyInstance[]): Promise<void> {
  const redis = new Redis(redisTestUrl, { lazyConnect: true, maxRetriesPerRequest: 1 });
  await redis.connect();
  let probes = 0;
  try {
    await until(
      async () => {
        const address = `198.18.7.${++probes}`;
        for (const app of apps) await signInOn(app, `probe${probes}@example.com`, 'not the password at all', address);
        return Number(await redis.get(`${prefix}:authfail:${address}`)) === apps.length;
      },
      () => `both instances counting in Redis (${probes} probes)`,
    );
  } finally {
    redis.disconnect();
  }
}

function signInOn(app: FastifyInstance, email: string, secret: string, remoteAddress: string) {
  return app.inject({ method: 'POST', url: '/api/v1/auth/sign-in', payload: { email, password: secret }, remoteAddress });
}

/** `401`, `200`, or `429 <details.reason>` for each answer, counted. */
function tally(answers: LightMyRequestResponse[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const res of answers) {
    const key = res.statusCode === 429 ? `429 ${body(res).error.details?.reason}` : String(res.statusCode);
    counts[key] = (counts[key] ?? 0) + 1;
  }
  return counts;
}

/** A 429 with its reason and a Retry-After within `maxSeconds`. */
function assertRefused(res: LightMyRequestResponse, reason: string, maxSeconds: number): void {
  const error = assertError(res, 429, 'rate_limited');
  assert.equal(error.details?.reason, reason);
  const wait = Number(res.headers['retry-after']);
  assert.ok(Number.isInteger(wait) && wait >= 1 && wait <= maxSeconds, `Retry-After ${res.headers['retry-after']}`);
}

const deployments = [
  { name: 'one instance, counters in memory', redis: false },
  { name: 'two instances sharing one Redis', redis: true },
];

for (const deployment of deployments) {
  describe(`sign-in counts each attempt before checking it: ${deployment.name}`, () => {
    let h: Harness;
    let apps: FastifyInstance[];

    before(async () => {
      h = await harness({
        // The queue's bounds out of the way: these bursts are about the counts (and one address gets two threads).
        IX_SIGN_IN_PER_ADDRESS: '1000',
        IX_SIGN_IN_QUEUE_LIMIT: '1000',
        IX_SIGN_IN_HASH_CONCURRENCY: '3',
        ...(deployment.redis && { REDIS_URL: redisTestUrl, IX_REDIS_PREFIX: prefix }),
      });
      // The second instance: its own app and Redis connection, the same storage and settings.
      apps = deployment.redis ? [h.app, await build(h.config, { storage: h.storage })] : [h.app];
      await h.tenant('acme');
      await person(h, 'ada@example.com', { acme: 'admin' });
      await person(h, 'bob@example.com', { acme: 'viewer' });
      if (deployment.redis) await untilBothCountInRedis(apps);
    });
    after(async () => {
      if (apps?.[1]) await apps[1].close();
      await h?.close();
    });

    test('100 parallel wrong sign-ins from one address: 30 are checked (401), 70 get 429 auth_failures', async () => {
      const address = deployment.redis ? '203.0.113.21' : '203.0.113.11';
      // Unknown emails, one each: no account reaches its lockout, only the address its limit.
      const answers = await Promise.all(
        Array.from({ length: 100 }, (_, i) =>
          signInOn(apps[i % apps.length], `guess${i}@example.com`, 'not the password at all', address),
        ),
      );
      assert.deepEqual(tally(answers), { 401: 30, '429 auth_failures': 70 });
      for (const res of answers.filter((r) => r.statusCode === 401)) assertError(res, 401, 'invalid_credentials');
      assertRefused(answers.find((r) => r.statusCode === 429) as LightMyRequestResponse, 'auth_failures', 60);

      // The address is blocked on every instance, the right password included; another address is not.
      for (const app of apps) assertRefused(await signInOn(app, 'ada@example.com', password, address), 'auth_failures', 60);
      assert.equal((await signInOn(apps.at(-1) as FastifyInstance, 'ada@example.com', password, '198.51.100.1')).statusCode, 200);
      if (deployment.redis) {
        const redis = new Redis(redisTestUrl, { maxRetriesPerRequest: 1 });
        try {
          assert.equal(await redis.get(`${prefix}:authfail:${address}`), '30', 'one count, in Redis: the 30 failures');
        } finally {
          redis.disconnect();
        }
      }
    });

    test('100 parallel wrong sign-ins at one account from 100 addresses: 10 are checked, 90 get 429 account_lockout', async () => {
      const answers = await Promise.all(
        Array.from({ length: 100 }, (_, i) =>
          signInOn(apps[i % apps.length], 'BOB@example.com', `wrong password ${i}`, `192.0.2.${i + 1}`),
        ),
      );
      assert.deepEqual(tally(answers), { 401: 10, '429 account_lockout': 90 });
      assertRefused(answers.find((r) => r.statusCode === 429) as LightMyRequestResponse, 'account_lockout', 900);
      // Locked on every instance: the right password, from an address that never failed, gets no session.
      for (const app of apps) {
        assertRefused(await signInOn(app, 'bob@example.com', password, '198.51.100.2'), 'account_lockout', 900);
      }
    });
  });
}

describe('sign-in refusals that are not failed authentications give their counts back', () => {
  let h: Harness;

  before(async () => {
    h = await harness({ IX_AUTH_FAILURE_LIMIT: '12', IX_SIGN_IN_PER_ADDRESS: '1' });
    await person(h, 'ada@example.com');
    await person(h, 'bob@example.com');
  });
  after(() => h.close());

  test('429 sign_in_busy: the attempt was never tried, and the address keeps its 12 failures', async () => {
    const address = '203.0.113.31';
    const answers = await Promise.all(Array.from({ length: 10 }, () => signInOn(h.app, 'ada@example.com', password, address)));
    const counts = tally(answers);
    assert.ok(counts[200] >= 1 && counts['429 sign_in_busy'] >= 1, JSON.stringify(counts));
    assert.equal(counts[200] + counts['429 sign_in_busy'], 10, JSON.stringify(counts));
    assertRefused(answers.find((r) => r.statusCode === 429) as LightMyRequestResponse, 'sign_in_busy', 1);
    for (let i = 1; i <= 12; i++) {
      assertError(await signInOn(h.app, `nobody${i}@example.com`, 'wrong password!', address), 401, 'invalid_credentials');
    }
    assertRefused(await signInOn(h.app, 'ada@example.com', password, address), 'auth_failures', 60);
  });

  test('429 account_lockout: not counted toward the address', async () => {
    const address = '203.0.113.32';
    for (let i = 1; i <= 10; i++) {
      assertError(await signInOn(h.app, 'bob@example.com', `wrong password ${i}`, address), 401, 'invalid_credentials');
    }
    for (let i = 1; i <= 3; i++)
      assertRefused(await signInOn(h.app, 'bob@example.com', password, address), 'account_lockout', 900);
    // 10 failures of 12: two more are tried, then the address is blocked.
    for (let i = 1; i <= 2; i++) {
      assertError(await signInOn(h.app, `nobody${i}@example.com`, 'wrong password!', address), 401, 'invalid_credentials');
    }
    assertRefused(await signInOn(h.app, 'ada@example.com', password, address), 'auth_failures', 60);
  });
});

describe('sign-in during a flood of sign-ins from one address (the queue at its defaults)', () => {
  let h: Harness;

  before(async () => {
    // The IP guard out of the way (it would stop this flood at 30 checks): this is about the password queue, which
    // bounds the checks whatever the guard lets through (a flood from many addresses, a raised limit).
    h = await harness({ IX_AUTH_FAILURE_LIMIT: '1000000' });
    await person(h, 'ada@example.com');
  });
  after(() => h.close());

  test('400 parallel sign-ins: most are refused at once (429 sign_in_busy); another person is checked before the flood', async (t) => {
    const flooder = '203.0.113.41';
    const answered: string[] = []; // who was answered after a password check, in order
    const flood = Array.from({ length: 400 }, (_, i) =>
      signInOn(h.app, `flood${i}@example.com`, 'not the password at all', flooder).then((res) => {
        if (res.statusCode === 401) answered.push('flood');
        return res;
      }),
    );
    const other = signInOn(h.app, 'ada@example.com', password, '198.51.100.41').then((res) => {
      answered.push('other');
      return res;
    });
    const [floodAnswers, otherAnswer] = await Promise.all([Promise.all(flood), other]);

    assert.equal(otherAnswer.statusCode, 200, otherAnswer.body);
    const counts = tally(floodAnswers);
    assert.ok(counts['429 sign_in_busy'] >= 300, `refused at once: ${JSON.stringify(counts)}`);
    assertRefused(floodAnswers.find((r) => r.statusCode === 429) as LightMyRequestResponse, 'sign_in_busy', 1);
    // Unbounded, the other person's check waited behind the flood's (all 400 were answered before it); queued address
    // by address, with a thread the flood cannot take, it starts at once: before it ends, only the flood's checks
    // already running can, and those that ran while the flood's requests were still arriving. 20 is a ceiling.
    const floodBefore = answered.indexOf('other');
    t.diagnostic(`flood: ${JSON.stringify(counts)}; flood checks answered before the other person's: ${floodBefore}`);
    assert.ok(floodBefore <= 20, `${floodBefore} of the flood's ${counts[401] ?? 0} checks were answered before it`);
  });
});
