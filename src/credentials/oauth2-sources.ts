import type { OAuth2ClientCredentials } from './oauth2.ts';

interface Entry {
  version: number;
  source: OAuth2ClientCredentials;
}

/** Which integration, in which version: a changed integration (a new version) gets a new source and a new token. */
export interface IntegrationVersion {
  tenantId: string;
  integrationId: string;
  version: number;
}

/**
 * The OAuth2 sources of this instance, one per integration, so that its access token outlives one execute: created in
 * the composition root, at most `maxEntries` (least recently used dropped first). An integration keeps one entry, for
 * its newest version seen: a newer version replaces it (its token was got with the old credentials), and an older
 * version still running (an execute that began before the change, another instance's cache) gets a source of its own
 * that is not kept, rather than throwing away the new one's token.
 *
 * @example
 * const source = oauth2Sources.get({ tenantId, integrationId, version }, () => new OAuth2ClientCredentials(options));
 */
export class OAuth2Sources {
  readonly #entries = new Map<string, Entry>();
  readonly #maxEntries: number;

  constructor(options: { maxEntries?: number } = {}) {
    this.#maxEntries = options.maxEntries ?? 10_000;
  }

  get size(): number {
    return this.#entries.size;
  }

  /** The source of this integration version, made with `create` when there is none. */
  get(at: IntegrationVersion, create: () => OAuth2ClientCredentials): OAuth2ClientCredentials {
    const key = `${at.tenantId}\u0000${at.integrationId}`;
    const entry = this.#entries.get(key);
    if (entry !== undefined && entry.version > at.version) return create();
    // Deleted and set again, so the Map's order is least recently used first.
    this.#entries.delete(key);
    const kept = entry?.version === at.version ? entry : { version: at.version, source: create() };
    this.#entries.set(key, kept);
    if (this.#entries.size > this.#maxEntries) this.#entries.delete(this.#entries.keys().next().value as string);
    return kept.source;
  }

  /** Forgets an integration deleted or changed on this instance. */
  forget(tenantId: string, integrationId: string): void {
    this.#entries.delete(`${tenantId}\u0000${integrationId}`);
  }
}
