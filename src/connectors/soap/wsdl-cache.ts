import { LRUCache } from 'lru-cache';

interface Entry<V> {
  version: string;
  value: Promise<V>;
}

/**
 * Parsed WSDLs per integration, bounded (lru-cache): at most `maxEntries` (least recently used dropped first), each
 * for at most `ttlMs`, replaced when the integration's version changes. Concurrent first calls share one load; a
 * failed load is not kept, so the next call tries again.
 */
export class WsdlCache<V> {
  readonly #entries: LRUCache<string, Entry<V>>;
  /** Loads started (misses): what tests, the benchmark and /metrics read. */
  loads = 0;
  /** Calls answered from the cache. */
  hits = 0;

  constructor(maxEntries: number, ttlMs: number) {
    this.#entries = new LRUCache({
      max: maxEntries,
      // lru-cache keeps an entry while its age is not over `ttl`; this cache keeps one for less than `ttlMs`.
      ttl: ttlMs - 1,
      // The wall clock, read on every look (no cached reading between ticks): a WSDL's life is in seconds, and the
      // tests move Date to its end.
      perf: { now: () => Date.now() },
      ttlResolution: 0,
    });
  }

  get size(): number {
    return this.#entries.size;
  }

  get(key: string, version: string, load: () => Promise<V>): Promise<V> {
    const entry = this.#entries.get(key);
    if (entry && entry.version === version) {
      this.hits += 1;
      return entry.value;
    }
    this.loads += 1;
    const fresh: Entry<V> = { version, value: load() };
    this.#entries.set(key, fresh);
    fresh.value.catch(() => {
      if (this.#entries.peek(key) === fresh) this.#entries.delete(key);
    });
    return fresh.value;
  }
}
