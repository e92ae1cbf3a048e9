import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, describe, test } from 'node:test';
import type { FastifyBaseLogger } from 'fastify';
import { Redis } from 'ioredis';
import { AuthFailureGuard, type LimiterStores, memoryStores, redisStores } from '../../src/auth/rate-limit.ts';
import { redisTestUrl } from '../support/postgres.ts';

/**
 * The brute-force guard's count, on both stores (docs/api.md#failed-authentications): an IP's first 30 failed
 * authentications in a minute may be tried; from its 31st attempt on it waits for the minute's end.
 * Through HTTP: test/api/security.test.ts; across real instances: test/system/scale-out.test.ts.
 */

const silent = { warn() {}, info() {} } as unknown as FastifyBaseLogger;

/** Attempts 1…30 may go ahead (each then fails); attempt 31 must wait, on whichever guard it meets. */
async function assertThirtyFailuresThenBlocked(guards: AuthFailureGuard[], ip: string): Promise<void> {
  for (let attempt = 1; attempt <= 30; attempt++) {
    const guard = guards[attempt % guards.length];
    assert.equal(await guard.blockedFor(ip), 0, `attempt ${attempt} is refused`);
    await guard.fail(ip);
  }
  for (const guard of guards) {
    const wait = await guard.blockedFor(ip);
    assert.ok(Number.isInteger(wait) && wait >= 1 && wait <= 60, `attempt 31 waits ${wait} s`);
  }
  assert.equal(await guards[0].blockedFor(`${ip}0`), 0, 'another address is not affected');
}

describe('AuthFailureGuard', () => {
  test('in memory: 30 failures are tried, the 31st attempt waits', async () => {
    await assertThirtyFailuresThenBlocked([new AuthFailureGuard(30, memoryStores)], '192.0.2.1');
  });

  test('in memory: the limit is the setting, e.g. 1', async () => {
    const guard = new AuthFailureGuard(1, memoryStores);
    assert.equal(await guard.blockedFor('192.0.2.2'), 0);
    await guard.fail('192.0.2.2');
    assert.ok((await guard.blockedFor('192.0.2.2')) >= 1);
  });

  describe('in Redis, shared by two instances', () => {
    const prefix = `ixtest-${randomBytes(6).toString('hex')}`;
    const clients: Redis[] = [];

    after(async () => {
      const keys = await clients[0]?.keys(`${prefix}:*`);
      if (keys?.length) await clients[0].del(...keys);
      for (const client of clients) client.disconnect();
    });

    /** One instance's stores, on a client of its own that is connected (not still connecting) when returned. */
    async function instance(): Promise<LimiterStores> {
      const client = new Redis(redisTestUrl, { lazyConnect: true, enableOfflineQueue: false, maxRetriesPerRequest: 1 });
      clients.push(client);
      await client.connect();
      return redisStores(client, prefix, silent);
    }

    test('30 failures alternating between the instances are tried, the 31st attempt waits on both', async () => {
      const [a, b] = [await instance(), await instance()];
      await assertThirtyFailuresThenBlocked([new AuthFailureGuard(30, a), new AuthFailureGuard(30, b)], '192.0.2.3');
      assert.equal(await clients[0].get(`${prefix}:authfail:192.0.2.3`), '30', 'one counter, in Redis');
    });
  });
});
