import { createHash } from 'node:crypto';
import type { ResolvedIntegration } from '../integrations/resolved-integration.ts';

/**
 * What a connector's cached state of an integration (a parsed WSDL, an upstream's schema) is valid for: the
 * integration's version and a digest of its whole configuration. The version alone is not enough: an integration
 * deleted and created again under the same id starts at version 1 again, and must not be served its predecessor's.
 *
 * @example cache.get(key, cacheVersion(integration), load)
 */
export function cacheVersion(integration: ResolvedIntegration): string {
  let version = cacheVersions.get(integration);
  if (version === undefined) {
    const config = Object.entries(integration.config).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    version = `${integration.version}:${createHash('sha256').update(JSON.stringify(config)).digest('base64url')}`;
    cacheVersions.set(integration, version);
  }
  return version;
}

/** The cache version of each resolved integration (the execute path keeps one per version), hashed once. */
const cacheVersions = new WeakMap<ResolvedIntegration, string>();
