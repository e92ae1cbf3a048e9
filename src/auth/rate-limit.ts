import type { FastifyBaseLogger } from 'fastify';
import type { Redis } from 'ioredis';
import { RateLimiterMemory, RateLimiterRedis, type RateLimiterRes } from 'rate-limiter-flexible';

export interface LimitDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** whole seconds until the window ends (at least 1) */
  resetSeconds: number;
}

const windowSeconds = 60;
// Each key has its own limit, so the store counts without a cap and the decision compares against the key's.
const uncapped = Number.MAX_SAFE_INTEGER;

/** What a counter needs from rate-limiter-flexible: count one more, read the count, or start over. */
interface CounterStore {
  penalty(key: string, points: number): Promise<RateLimiterRes>;
  get(key: string): Promise<RateLimiterRes | null>;
  delete(key: string): Promise<boolean>;
}

export interface LimiterStores {
  /** A counter of fixed windows under `prefix`, one minute long unless told. */
  counter(prefix: string, durationSeconds?: number): CounterStore;
}

/** Counters in this process's memory: each instance limits on its own. */
export const memoryStores: LimiterStores = {
  counter: (prefix, duration = windowSeconds) => new RateLimiterMemory({ points: uncapped, duration, keyPrefix: prefix }),
};

/**
 * Counters in Redis, shared by every instance. When Redis does not answer, an in-memory insurance
 * limiter takes over (limits then hold per instance), and the log says so once per outage.
 */
export function redisStores(client: Redis, keyPrefix: string, log: FastifyBaseLogger): LimiterStores {
  let down = false;
  const location = redisLocation(client);
  client.on('error', (error: NodeJS.ErrnoException) => {
    if (down) return;
    down = true;
    log.warn(
      // Several addresses tried (localhost) fail as one AggregateError with an empty message: the code says it.
      { err: error.message || error.code, redis: location },
      `cannot reach Redis at ${location} (REDIS_URL): rate limits are kept per instance until it is back`,
    );
  });
  client.on('ready', () => {
    if (down) log.info('Redis is reachable again: rate limits are shared again');
    down = false;
  });
  return {
    counter: (prefix, duration = windowSeconds) =>
      new RateLimiterRedis({
        storeClient: client,
        points: uncapped,
        duration,
        keyPrefix: `${keyPrefix}:${prefix}`,
        rejectIfRedisNotReady: true,
        insuranceLimiter: new RateLimiterMemory({ points: uncapped, duration, keyPrefix: prefix }),
      }),
  };
}

/** The client's server as a URL without credentials, for the log (the client keeps REDIS_URL only in pieces). */
function redisLocation(client: Redis): string {
  const { host, port, db, tls, path } = client.options;
  if (path) return `unix:${path}`;
  return `${tls ? 'rediss' : 'redis'}://${host?.includes(':') ? `[${host}]` : host}:${port}/${db ?? 0}`;
}

/** Fixed one-minute windows per key lineage (a rotated key shares its predecessor's window). */
export class KeyRateLimiter {
  readonly #store: CounterStore;

  constructor(stores: LimiterStores = memoryStores) {
    this.#store = stores.counter('key');
  }

  async hit(lineageId: string, limit: number): Promise<LimitDecision> {
    const res = await this.#store.penalty(lineageId, 1);
    const resetSeconds = Math.max(1, Math.ceil(res.msBeforeNext / 1000));
    return {
      allowed: res.consumedPoints <= limit,
      limit,
      remaining: Math.max(0, limit - res.consumedPoints),
      resetSeconds,
    };
  }
}

/**
 * Failures counted per key in fixed windows: once a key has `limit` failures in its window, it waits until the window
 * ends. What the IP guard and the account lockout share; they differ in window, limit and names.
 */
class FailureCounter {
  readonly #store: CounterStore;
  readonly #limit: number;

  constructor(store: CounterStore, limit: number) {
    this.#store = store;
    this.#limit = limit;
  }

  /** Seconds `key` must wait, or 0 when it may try. */
  protected async waitSeconds(key: string): Promise<number> {
    const res = await this.#store.get(key);
    if (!res || res.consumedPoints < this.#limit) return 0;
    return Math.max(1, Math.ceil(res.msBeforeNext / 1000));
  }

  async fail(key: string): Promise<void> {
    await this.#store.penalty(key, 1);
  }

  protected async reset(key: string): Promise<void> {
    await this.#store.delete(key);
  }
}

/**
 * Counts failed authentications per source IP. An IP's first `limit` failures in a minute are answered
 * 401; once it has `limit`, every request from it is refused until its minute ends (docs/api.md#failed-authentications: with 30,
 * the 31st attempt is the first 429).
 */
export class AuthFailureGuard extends FailureCounter {
  constructor(limit: number, stores: LimiterStores = memoryStores) {
    super(stores.counter('authfail'), limit);
  }

  /** Seconds the IP must wait, or 0 when it may try. */
  blockedFor(ip: string): Promise<number> {
    return this.waitSeconds(ip);
  }
}

/**
 * Locks an account after `limit` failed sign-ins within a 15-minute window (docs/people-and-console.md#sign-in: 10 failures → 429 for that
 * account until the window ends). Counted per lower-cased email, known or not, so a locked answer says nothing of
 * which emails exist; a successful sign-in starts the count over.
 */
export class AccountLockout extends FailureCounter {
  constructor(stores: LimiterStores = memoryStores, limit = 10, windowSeconds = 15 * 60) {
    super(stores.counter('lockout', windowSeconds), limit);
  }

  /** Seconds the account stays locked, or 0 when it may try. */
  lockedFor(account: string): Promise<number> {
    return this.waitSeconds(account);
  }

  succeed(account: string): Promise<void> {
    return this.reset(account);
  }
}
