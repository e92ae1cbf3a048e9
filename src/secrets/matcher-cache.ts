import { createHash } from 'node:crypto';
import { SecretMatcher } from './secret-matcher.ts';

/**
 * Secret matchers by secret set, bounded (least recently used dropped first). An integration is read anew every
 * second (IntegrationCache), but its secrets rarely change: compiling their forms once per set, not once per read,
 * keeps a long secret's matcher (tens of milliseconds to compile) off the execute path. Keyed by a digest, so the
 * keys are no copies of the secrets.
 */
export class SecretMatcherCache {
  readonly #entries = new Map<string, SecretMatcher>();
  readonly #maxEntries: number;

  constructor(maxEntries = 256) {
    this.#maxEntries = maxEntries;
  }

  get size(): number {
    return this.#entries.size;
  }

  /** The matcher of these secrets (in this order), built when no current entry has them. */
  get(secrets: readonly string[]): SecretMatcher {
    if (secrets.length === 0) return SecretMatcher.none;
    const key = createHash('sha256').update(JSON.stringify(secrets)).digest('base64url');
    let matcher = this.#entries.get(key);
    if (matcher) {
      // Map order is insertion order: re-inserting marks the entry most recently used.
      this.#entries.delete(key);
    } else {
      matcher = new SecretMatcher(secrets);
    }
    this.#entries.set(key, matcher);
    if (this.#entries.size > this.#maxEntries) this.#entries.delete(this.#entries.keys().next().value as string);
    return matcher;
  }
}
