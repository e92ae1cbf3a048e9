import { createRequire } from 'node:module';
import type { FastifyBaseLogger } from 'fastify';
import type { Redis } from 'ioredis';
import type * as Flexible from 'rate-limiter-flexible';
import { ApiError } from '../core/errors.ts';

// The two limiters this service uses, each from its own file: the package's index loads every store it supports
// (Mongo, MySQL, Postgres, Etcd, DynamoDB, Prisma, Drizzle…), 37 modules at start-up for 2.
const require = createRequire(import.meta.url);
const RateLimiterMemory: typeof Flexible.RateLimiterMemory = require('rate-limiter-flexible/lib/RateLimiterMemory.js');
const redisLimiter = (): typeof Flexible.RateLimiterRedis => require('rate-limiter-flexible/lib/RateLimiterRedis.js');

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

/** Whole seconds until the window of `res` ends, at least 1. */
const secondsLeft = (res: Flexible.RateLimiterRes) => Math.max(1, Math.ceil(res.msBeforeNext / 1000));

/** What a counter needs from rate-limiter-flexible: count more (atomically, in memory and in Redis), fewer, read the count, or start over. */
interface CounterStore {
  penalty(key: string, points: number): Promise<Flexible.RateLimiterRes>;
  reward(key: string, points: number): Promise<Flexible.RateLimiterRes>;
  get(key: string): Promise<Flexible.RateLimiterRes | null>;
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
      new (redisLimiter())({
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
    const resetSeconds = secondsLeft(res);
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
 *
 * A check that may fail is counted before it runs (`reserve`): the count is taken and compared in one atomic step, so
 * parallel attempts, on any instance, each see the ones before them, and at most `limit` are let through. An attempt
 * that turns out not to be a failure gives its count back (`giveBack`).
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
    return secondsLeft(res);
  }

  /**
   * Counts an attempt as a failure before it is checked: 0 when it is among the first `limit` of its window, else the
   * seconds to wait (and the attempt, refused, is not counted: the count stays the failures and the checks running).
   */
  async reserve(key: string): Promise<number> {
    const res = await this.#store.penalty(key, 1);
    if (res.consumedPoints <= this.#limit) return 0;
    await this.giveBack(key);
    return secondsLeft(res);
  }

  /**
   * Takes back one reserved attempt that was no failure. Given back after its window ended, it counts one fewer in the
   * next window: at most one attempt more there, for an attempt that was never a failure.
   */
  async giveBack(key: string): Promise<void> {
    await this.#store.reward(key, 1);
  }

  async fail(key: string): Promise<void> {
    await this.#store.penalty(key, 1);
  }

  protected async reset(key: string): Promise<void> {
    await this.#store.delete(key);
  }
}

/** The guard's refusal of an address (docs/api.md#failed-authentications), with `details.reason` for the caller and the request's log line. */
export function addressRefusal(waitSeconds: number): ApiError {
  return new ApiError(
    'rate_limited',
    `Too many failed authentications from this address; retry in ${waitSeconds} seconds.`,
    { reason: 'auth_failures' },
    { retryAfterSeconds: waitSeconds },
  );
}

/** The lockout's refusal of an account (docs/people-and-console.md#sign-in). */
export function accountRefusal(waitSeconds: number): ApiError {
  return new ApiError(
    'rate_limited',
    `Too many failed sign-ins for this account; retry in ${waitSeconds} seconds.`,
    {
      reason: 'account_lockout',
    },
    { retryAfterSeconds: waitSeconds },
  );
}

/**
 * Counts failed authentications per source IP. An IP's first `limit` failures in a minute are answered
 * 401; once it has `limit`, every request from it is refused until its minute ends
 * (docs/api.md#failed-authentications: with 30, the 31st attempt is the first 429). Sign-in reserves its attempts
 * (`reserve`); other routes read the count before and add their 401s after (`blockedFor`, `fail`).
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

  succeed(account: string): Promise<void> {
    return this.reset(account);
  }
}
