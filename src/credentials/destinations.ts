import type { ResolvedIntegration } from '../integrations/resolved-integration.ts';

/**
 * The origin (scheme, host, port) of a configured URL (`https://h:443/x` → `https://h`), or null when it is unset; a
 * value that does not parse is its own origin, so that changing it still counts as a move.
 */
export function originOf(value: unknown): string | null {
  return typeof value === 'string' && value !== '' ? (URL.parse(value)?.origin ?? value) : null;
}

/**
 * The origins the owner sent the integration's credentials to: those of its URL fields (the connector's `urlFields`:
 * `base_url`, `endpoint_url`, `service_url`). Worked out once, when the integration is resolved.
 */
export function credentialOrigins(config: Readonly<Record<string, unknown>>, urlFields: readonly string[]): ReadonlySet<string> {
  const origins = new Set<string>();
  for (const field of urlFields) {
    // A dot path (`auth.token_url`) names a URL inside an object.
    let value: unknown = config;
    for (const segment of field.split('.')) value = (value as Record<string, unknown> | undefined)?.[segment];
    const url = typeof value === 'string' ? URL.parse(value) : null;
    // An opaque origin ("null") is no place a credential may go.
    if (url && (url.protocol === 'http:' || url.protocol === 'https:')) origins.add(url.origin);
  }
  return origins;
}

/**
 * Whether the integration's credentials may go with a request to `url` (docs/security.md#secrets-follow-their-origin: a secret goes only where its owner
 * sent it): only when `url` is on the origin of one of the URLs the owner configured. Every request an integration
 * makes asks this, whatever scheme its credentials are (a header, Basic, a bearer token, an OAuth2 access token): a
 * WSDL's import from another host, or a document it points to, is fetched without them.
 *
 * @example credentialsMayGoTo({ credentialOrigins: new Set(['https://a.example']) }, 'https://a.example:443/x.xsd') // true
 * @example credentialsMayGoTo({ credentialOrigins: new Set(['https://a.example']) }, 'http://a.example/x.xsd') // false
 */
export function credentialsMayGoTo(integration: Pick<ResolvedIntegration, 'credentialOrigins'>, url: string): boolean {
  const parsed = URL.parse(url);
  return parsed !== null && integration.credentialOrigins.has(parsed.origin);
}
