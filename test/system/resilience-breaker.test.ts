import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, describe, test } from 'node:test';
import { Redis } from 'ioredis';
import { type CircuitBreakers, MemoryBreakers } from '../../src/resilience/breaker.ts';
import { RedisBreakers } from '../../src/resilience/breaker-redis.ts';
import { redisTestUrl } from '../support/postgres.ts';
import { closedPort } from '../support/raw-upstream.ts';
import { until } from '../support/until.ts';

/**
 * The circuit breaker of docs/resilience.md (src/resilience/breaker.ts, breaker-redis.ts): every transition on a clock the
 * test moves, on both stores; then what only Redis does (shared by instances, keys that expire, falling back to
 * memory when Redis is away). The Redis tests need the test Redis (bash scripts/test-services.sh) and are skipped,
 * saying so, when it is not reachable.
 */

/** A log that keeps what it was told. */
function recordingLog() {
  const lines: { level: 'warn' | 'info'; msg: string }[] = [];
  return {
    lines,
    warn: (_obj: unknown, msg?: string) => void lines.push({ level: 'warn', msg: String(msg) }),
    info: (msg: unknown) => void lines.push({ level: 'info', msg: String(msg) }),
  };
}

/** Whether the test Redis answers; the reason to skip when it does not. */
async function redisReachable(): Promise<string | undefined> {
  const probe = new Redis(redisTestUrl, {
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    connectTimeout: 2000,
    retryStrategy: () => null,
  });
  probe.on('error', () => {});
  try {
    await probe.connect();
    await probe.ping();
    return undefined;
  } catch (error) {
    return `Redis is not reachable at ${redisTestUrl} (${(error as Error).message || 'no answer'}): start it with bash scripts/test-services.sh`;
  } finally {
    probe.disconnect();
  }
}

const redisSkip = await redisReachable();
/** A test that needs Redis: skipped, with the reason, when it is not reachable. */
const redisTest = (name: string, fn: () => Promise<void>) => test(name, { skip: redisSkip }, fn);
const prefix = `ixtest-${randomBytes(6).toString('hex')}`;
const clients: Redis[] = [];

after(async () => {
  if (clients.length > 0 && clients[0].status === 'ready') {
    const keys = await clients[0].keys(`${prefix}:*`);
    if (keys.length > 0) await clients[0].del(...keys);
  }
  for (const client of clients) client.disconnect();
});

/** A connected client of its own, as each instance has. */
async function redisClient(): Promise<Redis> {
  const client = new Redis(redisTestUrl, { lazyConnect: true, enableOfflineQueue: false, maxRetriesPerRequest: 1 });
  client.on('error', () => {});
  clients.push(client);
  await client.connect();
  return client;
}

let keys = 0;
/** A key no other test uses. */
const freshKey = () => `tenant-${++keys}/crm`;

const silent = { warn() {}, info() {} };

const stores: { name: string; skip?: string; make(now: () => number): Promise<CircuitBreakers> }[] = [
  { name: 'in memory', make: async (now) => new MemoryBreakers({ now }) },
  { name: 'in Redis', skip: redisSkip, make: async (now) => new RedisBreakers(await redisClient(), prefix, silent, { now }) },
];

for (const store of stores) {
  describe(`circuit breaker ${store.name}: the transitions`, () => {
    // Skipped test by test (not the suite), so that the run's summary counts them.
    const it = (name: string, fn: () => Promise<void>) => test(name, { skip: store.skip }, fn);
    let now = Date.UTC(2025, 5, 15, 12, 0, 0);
    const clock = () => now;
    const later = (ms: number) => {
      now += ms;
    };
    let breakers: CircuitBreakers;

    /** Records `times` failures; whether each one opened the breaker. */
    async function fail(key: string, times: number, everyMs = 0): Promise<boolean[]> {
      const opened: boolean[] = [];
      for (let i = 0; i < times; i++) {
        if (i > 0) later(everyMs);
        opened.push(await breakers.record(key, { success: false, trial: false }));
      }
      return opened;
    }

    it('closed: calls are admitted, not as trials', async () => {
      breakers = await store.make(clock);
      const key = freshKey();
      assert.deepEqual(await breakers.admit(key), { ok: true, trial: false, quiet: true });
      assert.equal(await breakers.state(key), 'closed');
    });

    it('five failures in a row open it; four do not', async () => {
      const key = freshKey();
      assert.deepEqual(await fail(key, 4, 1000), [false, false, false, false]);
      assert.equal(await breakers.state(key), 'closed');
      assert.deepEqual(await breakers.admit(key), { ok: true, trial: false, quiet: false });
      later(1000);
      assert.deepEqual(await fail(key, 1), [true], 'the fifth failure is the one that opens it');
      assert.equal(await breakers.state(key), 'open');
      assert.deepEqual(await fail(key, 1), [false], 'a failure reported while open opens nothing');
      assert.deepEqual(await breakers.admit(key), { ok: false, retryAfterSeconds: 30 });
    });

    it('open: refused with the seconds left, rounded up', async () => {
      const key = freshKey();
      await fail(key, 5);
      later(10_000);
      assert.deepEqual(await breakers.admit(key), { ok: false, retryAfterSeconds: 20 });
      later(9_500);
      assert.deepEqual(await breakers.admit(key), { ok: false, retryAfterSeconds: 11 });
      later(10_400);
      assert.deepEqual(await breakers.admit(key), { ok: false, retryAfterSeconds: 1 }, '100 ms left is still a second to wait');
    });

    it('a success starts the count over', async () => {
      const key = freshKey();
      await fail(key, 4);
      await breakers.record(key, { success: true, trial: false });
      await fail(key, 4);
      assert.equal(await breakers.state(key), 'closed');
      await fail(key, 1);
      assert.equal(await breakers.state(key), 'open');
    });

    it('the five must fall within 30 s: spread wider, the oldest no longer count', async () => {
      const key = freshKey();
      await fail(key, 4, 10_000); // at 0, 10, 20, 30 s
      later(1_000);
      await fail(key, 1); // at 31 s: the one at 0 s is out of the window
      assert.equal(await breakers.state(key), 'closed');
      later(4_000);
      await fail(key, 1); // at 35 s: 10, 20, 30, 31, 35 are within 30 s
      assert.equal(await breakers.state(key), 'open');
    });

    it('exactly 30 s between the first and the fifth still opens it', async () => {
      const key = freshKey();
      await fail(key, 4, 7_500);
      later(7_500);
      await fail(key, 1);
      assert.equal(await breakers.state(key), 'open');
    });

    it('failures older than the window are forgotten', async () => {
      const key = freshKey();
      await fail(key, 4);
      later(30_001);
      await fail(key, 4);
      assert.equal(await breakers.state(key), 'closed');
    });

    it('after 30 s open: half_open, the first caller is the one trial, the others are refused', async () => {
      const key = freshKey();
      await fail(key, 5);
      later(29_999);
      assert.equal(await breakers.state(key), 'open');
      later(1);
      assert.equal(await breakers.state(key), 'half_open');
      assert.deepEqual(await breakers.admit(key), { ok: true, trial: true, quiet: false });
      assert.deepEqual(await breakers.admit(key), { ok: false, retryAfterSeconds: 60 }, "refused for the trial's lease");
      assert.equal(await breakers.state(key), 'half_open');
    });

    it('the trial succeeds: closed, every call admitted again', async () => {
      const key = freshKey();
      await fail(key, 5);
      later(30_000);
      const trial = await breakers.admit(key);
      assert.deepEqual(trial, { ok: true, trial: true, quiet: false });
      await breakers.record(key, { success: true, trial: true });
      assert.equal(await breakers.state(key), 'closed');
      assert.deepEqual(await breakers.admit(key), { ok: true, trial: false, quiet: true });
      await fail(key, 4);
      assert.equal(await breakers.state(key), 'closed', 'and the count starts from zero');
    });

    it('the trial fails: open for another 30 s, then another trial', async () => {
      const key = freshKey();
      await fail(key, 5);
      later(30_000);
      await breakers.admit(key);
      later(2_000);
      assert.equal(await breakers.record(key, { success: false, trial: true }), true, 'a failed trial opens it again');
      assert.equal(await breakers.state(key), 'open');
      assert.deepEqual(await breakers.admit(key), { ok: false, retryAfterSeconds: 30 });
      later(30_000);
      assert.deepEqual(await breakers.admit(key), { ok: true, trial: true, quiet: false });
    });

    it('a trial that never reports loses its lease after 60 s: the next caller is the trial', async () => {
      const key = freshKey();
      await fail(key, 5);
      later(30_000);
      assert.deepEqual(await breakers.admit(key), { ok: true, trial: true, quiet: false });
      later(59_000);
      assert.deepEqual(await breakers.admit(key), { ok: false, retryAfterSeconds: 1 });
      later(1_000);
      assert.deepEqual(await breakers.admit(key), { ok: true, trial: true, quiet: false });
      assert.deepEqual(await breakers.admit(key), { ok: false, retryAfterSeconds: 60 });
    });

    it('a late trial still decides: its success closes the breaker', async () => {
      const key = freshKey();
      await fail(key, 5);
      later(30_000);
      await breakers.admit(key);
      later(90_000);
      await breakers.record(key, { success: true, trial: true });
      assert.equal(await breakers.state(key), 'closed');
    });

    it('while open, calls admitted before it opened report nothing that counts', async () => {
      const key = freshKey();
      await fail(key, 5);
      await breakers.record(key, { success: true, trial: false });
      await breakers.record(key, { success: false, trial: false });
      assert.equal(await breakers.state(key), 'open');
      assert.deepEqual(await breakers.admit(key), { ok: false, retryAfterSeconds: 30 }, 'the open period is not extended');
      later(30_000);
      await breakers.record(key, { success: true, trial: false });
      assert.equal(await breakers.state(key), 'half_open');
    });

    it('a half-open breaker nobody calls is forgotten after 10 minutes', async () => {
      const key = freshKey();
      await fail(key, 5);
      later(30_000 + 599_999);
      assert.equal(await breakers.state(key), 'half_open');
      later(1);
      assert.equal(await breakers.state(key), 'closed');
      assert.deepEqual(await breakers.admit(key), { ok: true, trial: false, quiet: true });
    });

    it('100 callers at once on a half-open breaker: exactly one trial', async () => {
      const key = freshKey();
      await fail(key, 5);
      later(30_000);
      const admissions = await Promise.all(Array.from({ length: 100 }, () => breakers.admit(key)));
      assert.equal(admissions.filter((a) => a.ok && a.trial).length, 1);
      assert.equal(admissions.filter((a) => !a.ok).length, 99);
    });

    it('forget: the key is closed and without failures', async () => {
      const key = freshKey();
      await fail(key, 5);
      await breakers.forget(key);
      assert.equal(await breakers.state(key), 'closed');
      await fail(key, 4);
      assert.equal(await breakers.state(key), 'closed');
    });

    it('keys do not share anything', async () => {
      const [a, b] = [freshKey(), freshKey()];
      await fail(a, 5);
      assert.equal(await breakers.state(a), 'open');
      assert.deepEqual(await breakers.admit(b), { ok: true, trial: false, quiet: true });
      await fail(b, 4);
      assert.equal(await breakers.state(b), 'closed');
    });
  });
}

describe('circuit breaker in memory: bounded', () => {
  test('state is kept only for keys with failures or an open breaker', async () => {
    const breakers = new MemoryBreakers();
    await breakers.admit('a');
    await breakers.record('a', { success: true, trial: false });
    assert.equal(breakers.size, 0, 'a closed key without failures takes no room');
    await breakers.record('b', { success: false, trial: false });
    assert.equal(breakers.size, 1);
    await breakers.record('b', { success: true, trial: false });
    assert.equal(breakers.size, 0, 'a success drops it');
  });

  test('expired entries are dropped when met', async () => {
    let now = 0;
    const breakers = new MemoryBreakers({ now: () => now });
    await breakers.record('a', { success: false, trial: false });
    now += 30_001;
    assert.equal(await breakers.state('a'), 'closed');
    assert.equal(breakers.size, 0);
  });

  test('at most maxKeys entries: the least recently used goes first', async () => {
    const breakers = new MemoryBreakers({ maxKeys: 3 });
    for (const key of ['a', 'b', 'c']) await breakers.record(key, { success: false, trial: false });
    await breakers.record('a', { success: false, trial: false }); // a is now the most recent
    await breakers.record('d', { success: false, trial: false });
    assert.equal(breakers.size, 3);
    for (let i = 0; i < 3; i++) await breakers.record('a', { success: false, trial: false });
    assert.equal(await breakers.state('a'), 'open', 'a kept its count: b was dropped, not a');
  });

  test('settings are checked once', () => {
    assert.throws(() => new MemoryBreakers({ openMs: 0 }), /openMs must be a positive integer/);
    assert.throws(() => new MemoryBreakers({ maxKeys: 0 }), /maxKeys/);
  });
});

describe('circuit breaker in Redis: shared by instances', () => {
  redisTest('failures recorded through either of two instances open it for both', async () => {
    const [one, two] = [
      new RedisBreakers(await redisClient(), prefix, silent),
      new RedisBreakers(await redisClient(), prefix, silent),
    ];
    const key = freshKey();
    for (let i = 0; i < 5; i++) await (i % 2 === 0 ? one : two).record(key, { success: false, trial: false });
    for (const instance of [one, two]) {
      assert.equal(await instance.state(key), 'open');
      const admission = await instance.admit(key);
      assert.ok(
        !admission.ok && admission.retryAfterSeconds >= 1 && admission.retryAfterSeconds <= 30,
        JSON.stringify(admission),
      );
    }
    assert.equal(one.degraded || two.degraded, false);
  });

  redisTest('a success through one instance resets the count both see', async () => {
    const [one, two] = [
      new RedisBreakers(await redisClient(), prefix, silent),
      new RedisBreakers(await redisClient(), prefix, silent),
    ];
    const key = freshKey();
    for (let i = 0; i < 4; i++) await one.record(key, { success: false, trial: false });
    await two.record(key, { success: true, trial: false });
    for (let i = 0; i < 4; i++) await two.record(key, { success: false, trial: false });
    assert.equal(await one.state(key), 'closed');
  });

  redisTest('100 callers split over two instances on a half-open breaker: exactly one trial', async () => {
    let now = Date.UTC(2025, 5, 15, 12, 0, 0);
    const clock = () => now;
    const [one, two] = [
      new RedisBreakers(await redisClient(), prefix, silent, { now: clock }),
      new RedisBreakers(await redisClient(), prefix, silent, { now: clock }),
    ];
    const key = freshKey();
    for (let i = 0; i < 5; i++) await one.record(key, { success: false, trial: false });
    now += 30_000;
    const admissions = await Promise.all(Array.from({ length: 100 }, (_, i) => (i % 2 === 0 ? one : two).admit(key)));
    assert.equal(admissions.filter((a) => a.ok && a.trial).length, 1);
  });

  redisTest('every key has a TTL, and a closed breaker leaves no key', async () => {
    const client = await redisClient();
    const breakers = new RedisBreakers(client, prefix, silent);
    const key = freshKey();
    const redisKey = `${prefix}:breaker:${key}`;
    await breakers.admit(key);
    assert.equal(await client.exists(redisKey), 0, 'an admit to a closed breaker writes nothing');
    await breakers.record(key, { success: false, trial: false });
    const failing = await client.pttl(redisKey);
    assert.ok(failing > 0 && failing <= 30_000, `a failure is kept for the window: ${failing} ms`);
    for (let i = 0; i < 4; i++) await breakers.record(key, { success: false, trial: false });
    const open = await client.pttl(redisKey);
    assert.ok(open > 30_000 && open <= 630_000, `an open breaker for its open period and the half-open keep: ${open} ms`);
    await breakers.forget(key);
    assert.equal(await client.exists(redisKey), 0, 'forget deletes it');
    await breakers.record(key, { success: false, trial: false });
    await breakers.record(key, { success: true, trial: false });
    assert.equal(await client.exists(redisKey), 0, 'a success deletes it');
  });

  redisTest('the scripts are loaded again when Redis lost them (SCRIPT FLUSH)', async () => {
    const client = await redisClient();
    const breakers = new RedisBreakers(client, prefix, silent);
    const key = freshKey();
    await breakers.record(key, { success: false, trial: false });
    await client.script('FLUSH');
    for (let i = 0; i < 4; i++) await breakers.record(key, { success: false, trial: false });
    assert.equal(await breakers.state(key), 'open');
    assert.equal(breakers.degraded, false);
  });
});

describe('circuit breaker in Redis: when Redis is away', () => {
  redisTest('falls back to memory, says so once, and goes back when Redis answers again', async () => {
    const client = new Redis(redisTestUrl, { lazyConnect: true, enableOfflineQueue: false, maxRetriesPerRequest: 1 });
    client.on('error', () => {});
    clients.push(client);
    const log = recordingLog();
    const breakers = new RedisBreakers(client, prefix, log);
    const key = freshKey();
    // Not connected yet: every call is answered from this instance's memory.
    for (let i = 0; i < 5; i++) await breakers.record(key, { success: false, trial: false });
    assert.equal(await breakers.state(key), 'open', 'the fallback breaks on its own');
    assert.equal(breakers.degraded, true);
    assert.deepEqual(
      log.lines.map((line) => line.level),
      ['warn'],
      'one warning for the outage, not one per call',
    );
    await client.connect();
    assert.equal(await breakers.state(key), 'closed', 'back on Redis, which saw none of those failures');
    assert.equal(breakers.degraded, false);
    assert.deepEqual(
      log.lines.map((line) => line.level),
      ['warn', 'info'],
    );
  });

  redisTest('a Redis that cannot be reached at all: calls still get answers', async () => {
    const port = await closedPort();
    const client = new Redis({ host: '127.0.0.1', port, lazyConnect: true, enableOfflineQueue: false, maxRetriesPerRequest: 0 });
    client.on('error', () => {});
    clients.push(client);
    const log = recordingLog();
    const breakers = new RedisBreakers(client, prefix, log);
    client.connect().catch(() => {});
    await until(() => client.status !== 'connecting' && client.status !== 'wait', 'the connection attempt failed');
    const key = freshKey();
    assert.deepEqual(await breakers.admit(key), { ok: true, trial: false, quiet: true });
    for (let i = 0; i < 5; i++) await breakers.record(key, { success: false, trial: false });
    assert.equal((await breakers.admit(key)).ok, false);
    assert.equal(log.lines.length, 1);
    assert.match(log.lines[0].msg, /cannot use Redis/);
  });
});
