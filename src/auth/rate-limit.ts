import { RateLimiterMemory } from 'rate-limiter-flexible';

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

/**
 * Fixed one-minute windows per key lineage (a rotated key shares its predecessor's window).
 * rate-limiter-flexible does the counting; the memory store is per instance.
 */
export class KeyRateLimiter {
  readonly #store = new RateLimiterMemory({ points: uncapped, duration: windowSeconds, keyPrefix: 'key' });

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

/** Counts failed authentications per source IP; over the limit, the IP is refused until its minute ends. */
export class AuthFailureGuard {
  readonly #store = new RateLimiterMemory({ points: uncapped, duration: windowSeconds, keyPrefix: 'authfail' });
  readonly #limit: number;

  constructor(limit: number) {
    this.#limit = limit;
  }

  /** Seconds the IP must wait, or 0 when it may try. */
  async blockedFor(ip: string): Promise<number> {
    const res = await this.#store.get(ip);
    if (!res || res.consumedPoints <= this.#limit) return 0;
    return Math.max(1, Math.ceil(res.msBeforeNext / 1000));
  }

  async fail(ip: string): Promise<void> {
    await this.#store.penalty(ip, 1);
  }
}
