interface Entry<V> {
  version: string;
  loadedAt: number;
  value: Promise<V>;
}

/**
 * Parsed WSDLs per integration, bounded: at most `maxEntries` (least recently used dropped first),
 * each for at most `ttlMs`, replaced when the integration's version changes. Concurrent first calls
 * share one load; a failed load is not kept, so the next call tries again.
 */
export class WsdlCache<V> {
  readonly #entries = new Map<string, Entry<V>>();
  readonly #maxEntries: number;
  readonly #ttlMs: number;
  /** Loads started (misses): what tests, the benchmark and /metrics read. */
  loads = 0;
  /** Calls answered from the cache. */
  hits = 0;

  constructor(maxEntries: number, ttlMs: number) {
    this.#maxEntries = maxEntries;
    this.#ttlMs = ttlMs;
  }

  get size(): number {
    return this.#entries.size;
  }

  get(key: string, version: string, load: () => Promise<V>, now = Date.now()): Promise<V> {
    const entry = this.#entries.get(key);
    if (entry && entry.version === version && now - entry.loadedAt < this.#ttlMs) {
      // Map order is insertion order: re-inserting marks the entry most recently used.
      this.#entries.delete(key);
      this.#entries.set(key, entry);
      this.hits += 1;
      return entry.value;
    }
    this.loads += 1;
    const value = load();
    const fresh: Entry<V> = { version, loadedAt: now, value };
    this.#entries.delete(key);
    this.#entries.set(key, fresh);
    while (this.#entries.size > this.#maxEntries) {
      const oldest = this.#entries.keys().next().value as string;
      this.#entries.delete(oldest);
    }
    value.catch(() => {
      if (this.#entries.get(key) === fresh) this.#entries.delete(key);
    });
    return value;
  }
}
