import { ApiError } from '../../core/errors.ts';
import type { ResolvedIntegration } from '../../integrations/resolved-integration.ts';
import { cacheVersion } from '../cache-version.ts';
import { resolveGraphqlUrl } from './url.ts';

/**
 * What every request of an integration's connections shares: its URL, headers and per-request timeout; and how its
 * upstream's schema is kept (docs/execute.md#schema-aware-checking).
 */
export interface Endpoint {
  url: string;
  headers: Readonly<Record<string, string>>;
  timeoutMs: number;
  /** `config.validate_schema`: documents are checked against the upstream's schema before they are sent. */
  validateSchema: boolean;
  /** The integration's place in the schema cache, and what its entry is valid for. */
  schemaKey: string;
  schemaVersion: string;
  schemaTtlMs: number;
}

/** The endpoint of each resolved integration (the execute path keeps one per integration version). */
const endpoints = new WeakMap<ResolvedIntegration, Endpoint>();

export function endpointOf(integration: ResolvedIntegration): Endpoint {
  let endpoint = endpoints.get(integration);
  if (endpoint) return endpoint;
  const { base_url: baseUrl } = integration.config;
  if (typeof baseUrl !== 'string' || baseUrl === '') {
    throw new ApiError('integration_misconfigured', 'The integration has no base_url; set config.base_url to run it.', {
      missing: ['config.base_url'],
    });
  }
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    accept: 'application/graphql-response+json, application/json',
    'accept-encoding': 'gzip',
  };
  const url = resolveGraphqlUrl(baseUrl);
  // Credentials are added per request (context.credentials) where they may go: every request, pages included, goes to
  // this one URL, on base_url's origin.
  // Frozen: the transport then checks and prepares them once, not on every request.
  const { config } = integration;
  endpoint = {
    url,
    headers: Object.freeze(headers),
    timeoutMs: integration.settings.timeoutMs,
    validateSchema: config.validate_schema !== false,
    schemaKey: `${integration.tenantId}\u0000${integration.id}`,
    schemaVersion: cacheVersion(integration),
    schemaTtlMs: Number(config.schema_ttl_seconds) * 1000,
  };
  endpoints.set(integration, endpoint);
  return endpoint;
}
