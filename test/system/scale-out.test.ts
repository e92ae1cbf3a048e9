import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { Redis } from 'ioredis';
import pg from 'pg';
import { sleep } from '../support/assertions.ts';
import { cliJson, runCli } from '../support/cli.ts';
import { type GraphqlServer, startGraphqlServer } from '../support/graphql-server.ts';
import { createTestDatabase, redisTestUrl, testMasterKey } from '../support/postgres.ts';
import { type Env, freePort, type Json, killAll, runCliProcess, type ServerProcess, startServer } from '../support/processes.ts';
import { acceptedAfterRevocation, describeAcceptance } from '../support/revocation.ts';
import { until } from '../support/until.ts';

/**
 * Scale out (README "Scale out") with real processes: `interchange serve`
 * twice on one PostgreSQL database and one Redis, the CLI beside them. Every Redis key these tests
 * cause lives under a prefix of this run's own, removed at the end.
 */

after(killAll);

const prefix = `ixtest-${randomBytes(6).toString('hex')}`;
const masterKey = testMasterKey();
const databases: Array<{ drop(): Promise<void> }> = [];

after(async () => {
  const redis = new Redis(redisTestUrl, { lazyConnect: true, maxRetriesPerRequest: 1 });
  try {
    await redis.connect();
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 500);
      cursor = next;
      if (keys.length > 0) await redis.del(...keys);
    } while (cursor !== '0');
  } finally {
    redis.disconnect();
  }
  for (const database of databases) await database.drop();
});

/** A fresh, empty PostgreSQL database, dropped after the file's tests. */
async function freshDatabase(): Promise<string> {
  const database = await createTestDatabase();
  databases.push(database);
  return database.url;
}

/** What every instance of one deployment shares. */
function deployment(databaseUrl: string): Env {
  return { DATABASE_URL: databaseUrl, REDIS_URL: redisTestUrl, IX_REDIS_PREFIX: prefix, IX_MASTER_KEY: masterKey };
}

async function query<T = Json>(databaseUrl: string, text: string, values: unknown[] = []): Promise<T[]> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    return (await client.query(text, values)).rows as T[];
  } finally {
    await client.end();
  }
}

interface Key {
  id: string;
  key: string;
}

const tenant = 'acme';
const headersOf = (key: Key) => ({ 'x-api-key': key.key, 'x-tenant-id': tenant });

function call(server: ServerProcess, key: Key, path: string, init: RequestInit = {}): Promise<Response> {
  const headers = { ...headersOf(key), ...(init.body !== undefined && { 'content-type': 'application/json' }) };
  return fetch(`${server.url}${path}`, { ...init, headers });
}

/** A response read whole: status, headers and the parsed body. */
async function read(response: Promise<Response>): Promise<{ status: number; headers: Headers; body: Json }> {
  const res = await response;
  return { status: res.status, headers: res.headers, body: await res.json() };
}

function createKey(env: Env, scopes: string, rateLimit: number): Promise<Key> {
  return cliJson(['keys', 'create', '--tenant', tenant, '--scopes', scopes, '--rate-limit', String(rateLimit)], env);
}

/**
 * Holds a row lock on one key in PostgreSQL, so that its revocation (an update of the row) waits, in
 * the revoking process, until `release()`: a test can then act just before the revocation commits,
 * whatever the revoking process's start-up cost.
 */
async function holdKeyRow(databaseUrl: string, keyId: string) {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  await client.query('begin');
  await client.query('select id from api_keys where id = $1 for update', [keyId]);
  return {
    /** Resolves once a revocation waits for the lock. */
    revocationWaiting: () =>
      until(async () => {
        // Inside a transaction, pg_stat_activity is read once and kept: drop that snapshot first.
        await client.query('select pg_stat_clear_snapshot()');
        const { rows } = await client.query(
          `select count(*)::int as waiting from pg_stat_activity
            where datname = current_database() and wait_event_type = 'Lock' and query ilike 'update "api_keys" set "revoked_at"%'`,
        );
        return rows[0].waiting > 0;
      }, 'the revocation waits for the row lock'),
    async release(): Promise<void> {
      await client.query('rollback');
      await client.end();
    },
  };
}

/** True once the key is refused with 401 invalid_credentials; any other answer but 200 fails the test. */
async function isRefused(server: ServerProcess, key: Key): Promise<boolean> {
  const res = await read(call(server, key, '/api/v1/me'));
  if (res.status === 200) return false;
  assert.equal(res.status, 401, JSON.stringify(res.body));
  assert.equal(res.body.error.code, 'invalid_credentials');
  return true;
}

describe('two instances on one PostgreSQL and one Redis', () => {
  let databaseUrl: string;
  let env: Env;
  let a: ServerProcess;
  let b: ServerProcess;
  let admin: Key;

  before(async () => {
    databaseUrl = await freshDatabase();
    // A short flush interval so that both instances write usage to the same rows while the other does.
    env = { ...deployment(databaseUrl), IX_USAGE_FLUSH_MS: '50' };
    await cliJson(['tenants', 'create', tenant], env);
    [a, b, admin] = await Promise.all([startServer(env), startServer(env), createKey(env, '*', 100_000)]);
  });

  after(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
  });

  test('the rate limit is shared: 10 requests alternating between A and B, the 11th is 429 on either', async () => {
    const key = await createKey(env, 'entities.read', 10);
    const servers = [a, b];
    for (let i = 0; i < 10; i++) {
      const res = await read(call(servers[i % 2], key, '/api/v1/me'));
      assert.equal(res.status, 200, `request ${i + 1}: ${JSON.stringify(res.body)}`);
      assert.equal(res.headers.get('ratelimit-limit'), '10');
      assert.equal(res.headers.get('ratelimit-remaining'), String(9 - i), `RateLimit-Remaining after request ${i + 1}`);
      assert.equal(res.headers.get('ratelimit-policy'), '"default";q=10;w=60');
    }
    for (const server of [a, b]) {
      const res = await read(call(server, key, '/api/v1/me'));
      assert.equal(res.status, 429, JSON.stringify(res.body));
      assert.equal(res.body.success, false);
      assert.equal(res.body.error.code, 'rate_limited');
      assert.equal(res.headers.get('ratelimit-remaining'), '0');
      const retryAfter = Number(res.headers.get('retry-after'));
      assert.ok(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 60, `Retry-After ${retryAfter}`);
      // Never earlier than the window's end: the same seconds as RateLimit-Reset.
      assert.equal(res.headers.get('retry-after'), res.headers.get('ratelimit-reset'));
    }

    // The one counter both used is in Redis, under this deployment's prefix (a new key's lineage is its id).
    const redis = new Redis(redisTestUrl, { maxRetriesPerRequest: 1 });
    try {
      assert.equal(await redis.get(`${prefix}:key:${key.id}`), '12');
      const ttl = await redis.pttl(`${prefix}:key:${key.id}`);
      assert.ok(ttl > 0 && ttl <= 60_000, `the window expires (pttl ${ttl})`);
    } finally {
      redis.disconnect();
    }
  });

  test('a key revoked through A is refused by B within 1 second (and by A at once)', async (t) => {
    const key = await createKey(env, 'entities.read', 1000);
    // Both instances have the key in their caches now.
    assert.equal(await isRefused(a, key), false);
    assert.equal(await isRefused(b, key), false);

    const revoke = await read(call(a, admin, `/api/v1/api-keys/${key.id}`, { method: 'DELETE' }));
    assert.equal(revoke.status, 200, JSON.stringify(revoke.body));
    assert.equal(revoke.body.data.id, key.id);
    const revokedAt = Date.parse(revoke.body.data.revoked_at);
    assert.ok(revokedAt <= Date.now());

    assert.equal(await isRefused(a, key), true, 'the instance that revoked it refuses it at once');
    const accepted = await acceptedAfterRevocation(() => isRefused(b, key), Promise.resolve(revokedAt));
    t.diagnostic(`B: ${describeAcceptance(accepted)}`);
    assert.ok(accepted < 1000, `B: ${describeAcceptance(accepted)}`);
  });

  test('a key revoked by the CLI is refused by both instances within 1 second', async (t) => {
    const key = await createKey(env, 'entities.read', 1000);
    assert.equal(await isRefused(a, key), false);
    assert.equal(await isRefused(b, key), false);

    // Polled from before the CLI starts; timed from the moment the revocation was written (revoked_at).
    const revocation = runCli(['keys', 'revoke', key.id, '--json'], env).then((revoke) => {
      assert.equal(revoke.code, 0, revoke.stderr);
      const revoked = JSON.parse(revoke.stdout);
      assert.equal(revoked.id, key.id);
      return Date.parse(revoked.revoked_at);
    });
    const [acceptedA, acceptedB] = await Promise.all([
      acceptedAfterRevocation(() => isRefused(a, key), revocation),
      acceptedAfterRevocation(() => isRefused(b, key), revocation),
    ]);
    t.diagnostic(`A: ${describeAcceptance(acceptedA)}; B: ${describeAcceptance(acceptedB)}`);
    assert.ok(acceptedA < 1000, `A: ${describeAcceptance(acceptedA)}`);
    assert.ok(acceptedB < 1000, `B: ${describeAcceptance(acceptedB)}`);
  });

  describe('an integration changed on one instance', () => {
    let first: GraphqlServer;
    let second: GraphqlServer;

    before(async () => {
      [first, second] = await Promise.all([startGraphqlServer(), startGraphqlServer()]);
    });
    after(async () => {
      await Promise.all([first?.close(), second?.close()]);
    });

    const receive = (server: ServerProcess) =>
      read(
        call(server, admin, '/api/v1/integrations/crm/execute', {
          method: 'POST',
          body: JSON.stringify({ operation: 'receive', query: '{ usersList { id } }' }),
        }),
      );
    const patch = (server: ServerProcess, baseUrl: string) =>
      read(
        call(server, admin, '/api/v1/integrations/crm', {
          method: 'PATCH',
          body: JSON.stringify({ config: { base_url: baseUrl } }),
        }),
      );

    /**
     * Integrations are cached 1 s per instance (README: Scale out): a call that starts 1 s after the change was
     * answered uses the new form on every instance. Waited from the change's answer, the bound the contract gives.
     */
    const afterCacheLifetime = async (changedAt: number) => {
      const left = changedAt + 1000 - performance.now();
      if (left > 0) await sleep(left + 10);
    };

    test('is used in its new form by the other instance within 1 s', async () => {
      const created = await read(
        call(a, admin, '/api/v1/integrations/crm', {
          method: 'PUT',
          // Schema-aware checking off: the upstreams' request counts below are the calls' alone.
          body: JSON.stringify({ connector: 'graphql-1.0.0', config: { base_url: first.url, validate_schema: false } }),
        }),
      );
      assert.equal(created.status, 201, JSON.stringify(created.body));

      const before = await receive(b);
      assert.equal(before.status, 200, JSON.stringify(before.body));
      assert.equal(before.body.data.message_count, 25);
      assert.deepEqual([first.requests.length, second.requests.length], [1, 0], 'B called the first upstream');

      const changed = await patch(a, second.url);
      await afterCacheLifetime(performance.now());
      assert.equal(changed.status, 200, JSON.stringify(changed.body));
      assert.equal(changed.body.data.config.base_url, second.url);
      const after = await receive(b);
      assert.equal(after.status, 200, JSON.stringify(after.body));
      assert.deepEqual([first.requests.length, second.requests.length], [1, 1], 'B called the second upstream');

      // And the other way round: changed on B, used by A once the change is 1 s old.
      assert.equal((await patch(b, first.url)).status, 200);
      await afterCacheLifetime(performance.now());
      assert.equal((await receive(a)).status, 200);
      assert.deepEqual([first.requests.length, second.requests.length], [2, 1], 'A called the first upstream again');
    });
  });

  // Last: it stops both instances.
  test('usage counts from both instances add up exactly after SIGTERM', async () => {
    const key = await createKey(env, 'entities.read', 100_000);
    // Per instance, 60 authenticated requests, 10 at a time: 50 answered 200 and 10 answered 403
    // (a scope the key lacks), which count as requests and as errors.
    const load = async (server: ServerProcess) => {
      const paths = Array.from({ length: 60 }, (_, i) => (i % 6 === 5 ? '/api/v1/api-keys' : '/api/v1/me'));
      const statuses: number[] = [];
      await Promise.all(
        Array.from({ length: 10 }, async () => {
          for (let path = paths.pop(); path !== undefined; path = paths.pop()) {
            const res = await call(server, key, path);
            await res.arrayBuffer();
            statuses.push(res.status);
          }
        }),
      );
      return statuses;
    };
    const statuses = (await Promise.all([load(a), load(b)])).flat();
    const count = (status: number) => statuses.filter((s) => s === status).length;
    assert.equal(statuses.length, 120);
    assert.equal(count(200), 100);
    assert.equal(count(403), 20);

    const [codeA, codeB] = await Promise.all([a.stop(), b.stop()]);
    assert.equal(codeA, 0, `A's exit code (stderr: ${a.stderr()})`);
    assert.equal(codeB, 0, `B's exit code (stderr: ${b.stderr()})`);
    // The log (stdout, warn and above): no flush failed, e.g. on a lock conflict between the two.
    assert.equal(a.stdout() + b.stdout(), '', 'nothing logged at warn or above');

    const { data } = await cliJson(['keys', 'list', '--tenant', tenant], env);
    const stored = data.find((k: { id: string }) => k.id === key.id);
    assert.equal(stored.usage.request_count, 120);
    assert.equal(stored.usage.last_used_ip, '127.0.0.1');
    const days = await query<{ requests: number; errors: number }>(
      databaseUrl,
      'select sum(requests)::int as requests, sum(errors)::int as errors from api_key_usage_daily where key_id = $1',
      [key.id],
    );
    assert.deepEqual(days, [{ requests: 120, errors: 20 }]);
  });
});

describe('key changes are announced over Redis (pub/sub), ahead of the key cache TTL', () => {
  let env: Env;
  let a: ServerProcess;
  let b: ServerProcess;
  let admin: Key;

  before(async () => {
    // The longest cache allowed: without the announcement, B would trust a cached key for a full second.
    env = { ...deployment(await freshDatabase()), IX_KEY_CACHE_MS: '1000' };
    await cliJson(['tenants', 'create', tenant], env);
    [a, b, admin] = await Promise.all([startServer(env), startServer(env), createKey(env, '*', 100_000)]);
  });
  after(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
  });

  /**
   * B caches the key at `cachedAt`; it may only refuse it before cachedAt + 1000 ms if it was told.
   * The revocation is started first and held on a row lock until B has cached the key, so what is
   * timed is the revocation's commit and announcement, not the revoking process's start-up.
   */
  async function refusedBeforeTtl(revoke: (key: Key) => Promise<void>, t: { diagnostic(message: string): void }): Promise<void> {
    const key = await createKey(env, 'entities.read', 1000);
    const lock = await holdKeyRow(env.DATABASE_URL, key.id);
    const revoking = revoke(key); // waits on the lock before it commits
    revoking.catch(() => {}); // awaited below; meanwhile a failure must not go unhandled
    let cachedAt: number;
    try {
      await lock.revocationWaiting();
      cachedAt = performance.now();
      assert.equal(await isRefused(b, key), false, 'B looked the key up and cached it');
    } finally {
      await lock.release();
    }
    let refusedAt = Number.NaN;
    await until(async () => {
      if (!(await isRefused(b, key))) return false;
      refusedAt = performance.now();
      return true;
    }, 'B refuses the key');
    await revoking;
    const delay = refusedAt - cachedAt;
    t.diagnostic(`B refused the key ${Math.round(delay)} ms after caching it (its TTL is 1000 ms)`);
    assert.ok(delay < 1000, `B refused the key only when its cache entry expired (${Math.round(delay)} ms)`);
  }

  test("a revocation through A reaches B before B's cached copy expires", async (t) => {
    await refusedBeforeTtl(async (key) => {
      const res = await read(call(a, admin, `/api/v1/api-keys/${key.id}`, { method: 'DELETE' }));
      assert.equal(res.status, 200);
    }, t);
  });

  test('so does a revocation by the CLI (it publishes too, when REDIS_URL is set)', async (t) => {
    await refusedBeforeTtl(async (key) => {
      const revoke = await runCli(['keys', 'revoke', key.id, '--json'], env);
      assert.equal(revoke.code, 0, revoke.stderr);
    }, t);
  });
});

describe('starting on PostgreSQL', () => {
  test('three instances started at once on an empty database all come up; each migration is applied once', async () => {
    const databaseUrl = await freshDatabase();
    const env = deployment(databaseUrl);
    const started = await Promise.allSettled([1, 2, 3].map(() => startServer(env)));
    const servers = started.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
    let codes: Array<number | null>;
    try {
      for (const result of started) assert.equal(result.status, 'fulfilled', String((result as PromiseRejectedResult).reason));
      for (const server of servers) {
        const ready = await read(fetch(`${server.url}/readyz`));
        assert.equal(ready.status, 200);
        assert.deepEqual(ready.body, { success: true, data: { status: 'ready', storage: 'postgres' } });
      }
      const migrations = await query(databaseUrl, 'select name from kysely_migration order by name');
      assert.deepEqual(migrations, [
        { name: '001_foundation' },
        { name: '002_integrations' },
        { name: '003_execution_messages' },
        { name: '004_execution_details' },
        { name: '005_people' },
        { name: '006_async_executions' },
        { name: '007_webhooks' },
        { name: '008_execution_runs' },
        { name: '009_execution_claims' },
        { name: '010_queue_rounds' },
        { name: '011_catalog' },
        { name: '012_audit_log' },
      ]);
    } finally {
      codes = await Promise.all(servers.map((server) => server.stop()));
    }
    assert.deepEqual(codes, [0, 0, 0], 'every instance stopped cleanly');
  });

  test('without IX_MASTER_KEY, serve refuses to start: exit 2, the reason on stderr, the database untouched', async () => {
    const databaseUrl = await freshDatabase();
    const { IX_MASTER_KEY: _omitted, ...env } = deployment(databaseUrl);
    // With REDIS_URL set, a half-started server would be held open by its Redis client: it would be
    // killed at runCliProcess's ceiling (code null). A ceiling, not a measure: start-up may be slow here.
    const result = await runCliProcess(['serve'], { ...env, PORT: String(await freePort()) });
    assert.notEqual(result.code, null, `serve did not exit (stderr: ${result.stderr})`);
    assert.equal(result.code, 2, result.stderr);
    assert.equal(result.stdout, '');
    assert.match(result.stderr, /IX_MASTER_KEY is required with PostgreSQL/);
    assert.deepEqual(
      await query(databaseUrl, "select table_name from information_schema.tables where table_schema = 'public'"),
      [],
    );
  });

  test('with Redis unreachable, an instance still authenticates and limits (per instance), says so once, and stops cleanly', async () => {
    const databaseUrl = await freshDatabase();
    // A port nobody listens on: connections are refused at once.
    const env = { ...deployment(databaseUrl), REDIS_URL: `redis://127.0.0.1:${await freePort()}` };
    await cliJson(['tenants', 'create', tenant], env);
    const key = await createKey(env, 'entities.read', 3);
    const server = await startServer(env);
    let code: number | null;
    try {
      const statuses: number[] = [];
      for (let i = 0; i < 4; i++) {
        const res = await read(call(server, key, '/api/v1/me'));
        statuses.push(res.status);
        assert.equal(res.headers.get('ratelimit-remaining'), String(Math.max(0, 2 - i)));
        if (res.status === 429) {
          assert.equal(res.body.error.code, 'rate_limited');
          assert.equal(res.headers.get('retry-after'), res.headers.get('ratelimit-reset'));
        }
      }
      assert.deepEqual(statuses, [200, 200, 200, 429]);
      const wrong = await read(call(server, { ...key, key: `${key.key.slice(0, -5)}Zzzzz` }, '/api/v1/me'));
      assert.equal(wrong.status, 401, 'a wrong key is still refused');

      // The warning is logged (stdout) on the first failed connection, at start; waited for, not assumed.
      // It names the setting to fix, and the address without credentials.
      const unreachable = `cannot reach Redis at ${env.REDIS_URL}/0 (REDIS_URL): rate limits are kept per instance until it is back`;
      const warnings = () =>
        server
          .stdout()
          .split('\n')
          .slice(0, -1) // complete lines only
          .filter((line) => line.startsWith('{'))
          .map((line) => JSON.parse(line))
          .filter((entry) => entry.msg === unreachable);
      await until(
        () => warnings().length > 0,
        () => `a "${unreachable}" warning in the log:\n${server.stdout()}`,
      );
      const [warning, ...more] = warnings();
      assert.ok(warning, `no "${unreachable}" warning in the log:\n${server.stdout()}`);
      assert.equal(warning.level, 40, 'logged at warn');
      assert.match(warning.err, /ECONNREFUSED/);
      assert.equal(server.child.exitCode, null, 'still running');
      assert.equal(more.length, 0, 'said once per outage, however often ioredis retries');
    } finally {
      code = await server.stop();
    }
    assert.equal(code, 0, `exit code (stderr: ${server.stderr()})`);
  });
});
