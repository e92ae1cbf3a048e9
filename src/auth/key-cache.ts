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
  // Bumped by every forget(): a lookup that started before a change must not cache what it read.
  #generation = 0;

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

  /** Call before reading storage; pass the result to set(). */
  generation(): number {
    return this.#generation;
  }

  /** Caches a lookup unless a key changed in this process since `readAt` (a generation()). */
  set(hash: string, key: ApiKeyRecord | undefined, readAt: number, now = Date.now()): void {
    if (this.#ttlMs === 0 || readAt !== this.#generation) return;
    if (this.#entries.size >= this.#maxEntries) {
      const oldest = this.#entries.keys().next().value;
      if (oldest !== undefined) this.#entries.delete(oldest);
    }
    this.#entries.set(hash, { key, storedAt: now });
  }

  /** Drops a changed key at once. */
  forget(hash: string): void {
    this.#generation += 1;
    this.#entries.delete(hash);
  }
}
