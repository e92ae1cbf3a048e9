import { createHash } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import { SecretMatcher } from './secret-matcher.ts';

/**
 * Secret matchers by secret set, bounded (least recently used dropped first; lru-cache). An integration is read anew
 * every second (IntegrationCache), but its secrets rarely change: compiling their forms once per set, not once per
 * read, keeps a long secret's matcher (tens of milliseconds to compile) off the execute path. Keyed by a digest, so the
 * keys are no copies of the secrets.
 */
export class SecretMatcherCache {
  readonly #entries: LRUCache<string, SecretMatcher>;

  constructor(maxEntries = 256) {
    this.#entries = new LRUCache({ max: maxEntries });
  }

  get size(): number {
    return this.#entries.size;
  }

  /** The matcher of these secrets (in this order), built when no current entry has them. */
  get(secrets: readonly string[]): SecretMatcher {
    if (secrets.length === 0) return SecretMatcher.none;
    const key = createHash('sha256').update(JSON.stringify(secrets)).digest('base64url');
    let matcher = this.#entries.get(key);
    if (!matcher) {
      matcher = new SecretMatcher(secrets);
      this.#entries.set(key, matcher);
    }
    return matcher;
  }
}
