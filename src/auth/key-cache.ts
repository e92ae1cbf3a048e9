import type { ApiKeyRecord } from '../storage/api-keys.ts';

interface Entry {
  key: ApiKeyRecord | undefined;
  storedAt: number;
}

/**
 * Verified keys by hash, trusted for `ttlMs` so that a change made by another process (the CLI, a
 * second instance) is seen within that time; changes made in this process drop the entry at once.
 * Unknown hashes are cached too, so a flood of one bad key costs one lookup per TTL.
 */
export class KeyCache {
  readonly #entries = new Map<string, Entry>();
  readonly #ttlMs: number;
  readonly #maxEntries: number;

  constructor(ttlMs: number, maxEntries = 10_000) {
    this.#ttlMs = ttlMs;
    this.#maxEntries = maxEntries;
  }

  get(hash: string, now = Date.now()): Entry | undefined {
    const entry = this.#entries.get(hash);
    if (entry && now - entry.storedAt < this.#ttlMs) return entry;
    if (entry) this.#entries.delete(hash);
    return undefined;
  }

  set(hash: string, key: ApiKeyRecord | undefined, now = Date.now()): void {
    if (this.#ttlMs === 0) return;
    if (this.#entries.size >= this.#maxEntries) {
      const oldest = this.#entries.keys().next().value;
      if (oldest !== undefined) this.#entries.delete(oldest);
    }
    this.#entries.set(hash, { key, storedAt: now });
  }

  /** Drops a changed key at once. */
  forget(hash: string): void {
    this.#entries.delete(hash);
  }
}
