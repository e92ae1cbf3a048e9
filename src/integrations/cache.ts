import type { StoredIntegration } from '../storage/integrations.ts';

interface Entry {
  /** The read in flight or done: concurrent executes of one integration share it. */
  read: Promise<StoredIntegration | undefined>;
  loadedAt: number;
}

/**
 * Integrations as the execute path reads them, kept `ttlMs` (1 s): every execute would otherwise read (and decrypt)
 * its integration. A change made on this instance forgets the entry at once; one made on another instance is seen
 * here once the entry is older than `ttlMs`, so every instance uses an integration's new form within that time.
 * An integration that does not exist is not cached (one created elsewhere is usable at once).
 */
export class IntegrationCache {
  readonly #entries = new Map<string, Entry>();
  readonly #ttlMs: number;
  readonly #maxEntries: number;
  readonly #now: () => number;

  constructor(options: { ttlMs?: number; maxEntries?: number; now?: () => number } = {}) {
    this.#ttlMs = options.ttlMs ?? 1000;
    this.#maxEntries = options.maxEntries ?? 10_000;
    this.#now = options.now ?? (() => performance.now());
  }

  /** The integration, from the cache when read less than `ttlMs` ago, else from `read`. */
  get(tenantId: string, id: string, read: () => Promise<StoredIntegration | undefined>): Promise<StoredIntegration | undefined> {
    const key = `${tenantId}\u0000${id}`;
    const now = this.#now();
    const cached = this.#entries.get(key);
    if (cached && now - cached.loadedAt < this.#ttlMs) return cached.read;
    if (cached) this.#entries.delete(key);
    const entry: Entry = { read: read(), loadedAt: now };
    this.#entries.set(key, entry);
    if (this.#entries.size > this.#maxEntries) this.#entries.delete(this.#entries.keys().next().value as string);
    // A failed or empty read is not kept.
    entry.read.then(
      (found) => {
        if (found === undefined && this.#entries.get(key) === entry) this.#entries.delete(key);
      },
      () => {
        if (this.#entries.get(key) === entry) this.#entries.delete(key);
      },
    );
    return entry.read;
  }

  /** Forgets an integration this instance changed or deleted. */
  forget(tenantId: string, id: string): void {
    this.#entries.delete(`${tenantId}\u0000${id}`);
  }
}
