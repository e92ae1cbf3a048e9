import type { FastifyBaseLogger } from 'fastify';
import type { Redis } from 'ioredis';

/** The Redis channel on which a revoked or rotated key's hash is announced. */
export function keyChannel(redisPrefix: string): string {
  return `${redisPrefix}:api-keys:changed`;
}

/**
 * Drops a changed key from every instance's cache at once: the instance (or CLI) that changes a key
 * publishes its hash, and every instance forgets it. The key cache's TTL stays the safety net for a
 * message missed while Redis was away, so a revocation is seen within IX_KEY_CACHE_MS in any case.
 */
export function subscribeToKeyChanges(
  client: Redis,
  redisPrefix: string,
  forget: (hash: string) => void,
  log: FastifyBaseLogger,
): { close(): void } {
  // A subscribed connection can do nothing else, so it is a second connection.
  const subscriber = client.duplicate({ enableOfflineQueue: true, maxRetriesPerRequest: null });
  subscriber.on('error', () => {}); // the limiter's client logs Redis outages already
  subscriber.on('message', (_channel: string, hash: string) => forget(hash));
  subscriber
    .subscribe(keyChannel(redisPrefix))
    .catch((error: Error) =>
      log.warn(
        { err: error.message },
        'key-change subscription failed (REDIS_URL): revocations reach this instance within IX_KEY_CACHE_MS instead of at once',
      ),
    );
  return { close: () => subscriber.disconnect() };
}

/** Announces a changed key; a failure only delays the other instances to their cache TTL. */
export async function publishKeyChange(client: Redis, redisPrefix: string, hash: string): Promise<void> {
  await client.publish(keyChannel(redisPrefix), hash).catch(() => 0);
}

/** For a process without a long-lived client (the CLI): connect, announce, disconnect. */
export async function announceKeyChange(redisUrl: string | undefined, redisPrefix: string, hash: string): Promise<void> {
  if (!redisUrl) return;
  const { Redis } = await import('ioredis');
  const client = new Redis(redisUrl, {
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    connectTimeout: 2000,
    retryStrategy: () => null,
  });
  client.on('error', () => {});
  try {
    await client.connect();
    await publishKeyChange(client, redisPrefix, hash);
  } catch {
    // Redis away: the instances see the change within their key cache TTL anyway.
  } finally {
    client.disconnect();
  }
}
