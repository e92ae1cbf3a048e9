import { randomBytes } from 'node:crypto';
import pg from 'pg';

/** The server scripts/test-services.sh starts; the role may create databases. */
export const pgAdminUrl = process.env.IX_TEST_PG_ADMIN_URL ?? 'postgres://ix:ix@127.0.0.1:5432/postgres';
export const redisTestUrl = process.env.IX_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

/** True when this test process runs the storage suites on PostgreSQL (npm run test:api:pg). */
export function onPostgres(): boolean {
  return process.env.IX_TEST_STORAGE === 'postgres';
}

async function admin<T>(work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: pgAdminUrl });
  try {
    await client.connect();
  } catch (error) {
    throw new Error(
      `PostgreSQL for the tests is not reachable at ${pgAdminUrl} (run scripts/test-services.sh): ${(error as Error).message}`,
    );
  }
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/**
 * Drops a test database, forcing out what is left of its sessions (pg's pool resolves `end()` before its sockets
 * have closed). A role without superuser rights cannot force out an autovacuum worker (42501): tried again until
 * the worker has left.
 */
async function dropDatabase(name: string, attempts = 40): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await admin((c) => c.query(`drop database if exists ${name} with (force)`));
      return;
    } catch (error) {
      if (attempt >= attempts || (error as { code?: string }).code !== '42501') throw error;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }
}

/** A fresh, empty database for one suite; `drop()` removes it. */
export async function createTestDatabase(): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `ix_t_${randomBytes(8).toString('hex')}`;
  await admin((c) => c.query(`create database ${name}`));
  const url = new URL(pgAdminUrl);
  url.pathname = `/${name}`;
  return {
    url: url.href,
    drop: () => dropDatabase(name),
  };
}

/** A master key for a test app on PostgreSQL (required there). */
export function testMasterKey(): string {
  return randomBytes(32).toString('base64');
}

/** Deletes every key under `prefix` from the test Redis: what one test file's counters left there. */
export async function dropRedisKeys(prefix: string): Promise<void> {
  // ioredis only for the files that use Redis.
  const { Redis } = await import('ioredis');
  const redis = new Redis(redisTestUrl, { lazyConnect: true, maxRetriesPerRequest: 1 });
  try {
    await redis.connect();
    const keys = await redis.keys(`${prefix}:*`);
    if (keys.length > 0) await redis.del(...keys);
  } finally {
    redis.disconnect();
  }
}
