/**
 * How many calls of one integration run at once on this instance (`config.max_concurrency`, docs/resilience.md). Promises:
 * - A call gets a slot when fewer than its `limit` calls of the key are running and nobody is waiting before it;
 *   otherwise it waits, first come first served. The limit is the caller's, per call: an integration's config may
 *   change between calls, and the new limit applies from the next call on. With limits that differ while a change
 *   settles, a waiter whose limit is lower holds the ones behind it until enough calls end (no overtaking: FIFO).
 * - `acquire` (synchronous calls) waits at most `waitMs`, then gives up with undefined (1 s, then 429);
 *   `acquireWhenFree` (the async worker) waits as long as it takes, unless its AbortSignal fires (shutdown).
 * - No leaks: a waiter that gives up (timeout, abort) is removed at once, and a key with nothing running and nobody
 *   waiting takes no room. A release counts once, however often it is called.
 *
 * @example
 * const release = await slots.acquire(integrationKey, config.max_concurrency, { waitMs: 1000 });
 * if (!release) throw concurrencyRefusal();
 * try { await run(); } finally { release(); }
 */

/** Gives the slot back; calling it again does nothing. */
export type Release = () => void;

interface Waiter {
  readonly limit: number;
  /** Hands the waiter its slot (already counted as running). */
  readonly grant: (release: Release) => void;
}

interface Slots {
  running: number;
  readonly waiters: Waiter[];
}

function checkLimit(limit: number): void {
  if (!Number.isInteger(limit) || limit < 1)
    throw new RangeError(`integration concurrency: the limit must be a positive integer, not ${limit}`);
}

export class IntegrationConcurrency {
  readonly name = 'integration-concurrency';
  readonly #keys = new Map<string, Slots>();

  /** Keys with calls running or waiting. */
  get size(): number {
    return this.#keys.size;
  }

  running(key: string): number {
    return this.#keys.get(key)?.running ?? 0;
  }

  waiting(key: string): number {
    return this.#keys.get(key)?.waiters.length ?? 0;
  }

  /** A slot now, or undefined when none is free (or others are waiting for one). */
  tryAcquire(key: string, limit: number): Release | undefined {
    checkLimit(limit);
    const slots = this.#keys.get(key);
    if (slots !== undefined && (slots.waiters.length > 0 || slots.running >= limit)) return undefined;
    const owned = slots ?? { running: 0, waiters: [] };
    if (slots === undefined) this.#keys.set(key, owned);
    owned.running++;
    return this.#releaseFor(key, owned);
  }

  /**
   * A slot within `waitMs`, or undefined once it has passed (0: only if one is free now).
   *
   * @example
   * const release = await slots.acquire('acme/crm', 4, { waitMs: 1000 });
   */
  async acquire(key: string, limit: number, options: { readonly waitMs: number }): Promise<Release | undefined> {
    const now = this.tryAcquire(key, limit);
    if (now !== undefined || options.waitMs <= 0) return now;
    return new Promise((resolve) => {
      const waiter: Waiter = {
        limit,
        grant: (release) => {
          clearTimeout(timer);
          resolve(release);
        },
      };
      const timer = setTimeout(() => {
        this.#remove(key, waiter);
        resolve(undefined);
      }, options.waitMs);
      this.#enqueue(key, waiter);
    });
  }

  /**
   * A slot whenever one is free, however long that takes; rejects with the signal's reason when it is aborted first
   * (and at once when it already was).
   *
   * @example
   * const release = await slots.acquireWhenFree('acme/crm', 4, shutdown.signal);
   */
  async acquireWhenFree(key: string, limit: number, signal?: AbortSignal): Promise<Release> {
    checkLimit(limit);
    if (signal?.aborted) throw signal.reason;
    const now = this.tryAcquire(key, limit);
    if (now !== undefined) return now;
    return new Promise((resolve, reject) => {
      const onAbort = () => {
        this.#remove(key, waiter);
        reject(signal?.reason);
      };
      const waiter: Waiter = {
        limit,
        grant: (release) => {
          signal?.removeEventListener('abort', onAbort);
          resolve(release);
        },
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.#enqueue(key, waiter);
    });
  }

  #enqueue(key: string, waiter: Waiter): void {
    let slots = this.#keys.get(key);
    if (slots === undefined) {
      slots = { running: 0, waiters: [] };
      this.#keys.set(key, slots);
    }
    slots.waiters.push(waiter);
    // A waiter may find a slot free at once (nobody before it, but others were waiting a moment ago).
    this.#pump(key, slots);
  }

  #remove(key: string, waiter: Waiter): void {
    const slots = this.#keys.get(key);
    if (slots === undefined) return;
    const index = slots.waiters.indexOf(waiter);
    if (index === -1) return;
    slots.waiters.splice(index, 1);
    // The first in line may have been holding the ones behind it (a lower limit): they may fit now.
    this.#pump(key, slots);
  }

  #releaseFor(key: string, slots: Slots): Release {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      slots.running--;
      this.#pump(key, slots);
    };
  }

  /** Hands free slots to the waiters in order; drops the key when nothing runs and nobody waits. */
  #pump(key: string, slots: Slots): void {
    while (slots.waiters.length > 0 && slots.running < slots.waiters[0].limit) {
      const waiter = slots.waiters.shift() as Waiter;
      slots.running++;
      waiter.grant(this.#releaseFor(key, slots));
    }
    if (slots.running === 0 && slots.waiters.length === 0 && this.#keys.get(key) === slots) this.#keys.delete(key);
  }
}
