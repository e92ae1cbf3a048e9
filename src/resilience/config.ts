import type { ValidationIssue } from '../core/errors.ts';

/**
 * The config fields every connector has for upstreams that fail (docs/resilience.md): `retry` and
 * `max_concurrency`. Their schemas are part of each connector's `configProperties`; what one schema cannot say (a
 * backoff ceiling below its base) is `resilienceProblems`.
 */

export const retrySchema = {
  type: ['object', 'null'],
  additionalProperties: false,
  properties: {
    max_attempts: { type: 'integer', minimum: 1, maximum: 10 },
    base_delay_ms: { type: 'integer', minimum: 1, maximum: 60_000 },
    max_delay_ms: { type: 'integer', minimum: 1, maximum: 600_000 },
  },
} as const;

/** The documented defaults, as `config.retry` shows them when it is unset or partly set. */
export const retryDefaults = Object.freeze({ max_attempts: 3, base_delay_ms: 200, max_delay_ms: 10_000 });

/** The retry settings a config runs with, as the API shows them: each field stored or at its default. */
export function retryView(config: Readonly<Record<string, unknown>>): typeof retryDefaults {
  const stored = (config.retry ?? {}) as Partial<typeof retryDefaults>;
  return { ...retryDefaults, ...stored };
}

export const resilienceConfigProperties = {
  retry: retrySchema,
  max_concurrency: { type: ['integer', 'null'], minimum: 1, maximum: 1000 },
} as const;

/** What the schema cannot say of a config's `retry`, with the stored fields and defaults it will run with. */
export function resilienceProblems(config: Readonly<Record<string, unknown>>): ValidationIssue[] {
  if (config.retry === undefined || config.retry === null) return [];
  const { base_delay_ms: base, max_delay_ms: max } = retryView(config);
  if (base <= max) return [];
  return [{ path: 'config.retry.max_delay_ms', message: `must be at least base_delay_ms (${base})` }];
}

/**
 * An integration's key for its circuit breaker and its concurrency slots: its tenant and its id, encoded so that
 * neither can pose as the other (`a/b` of tenant `t` is not `b` of tenant `t/a`).
 */
export function integrationKey(tenantId: string, integrationId: string): string {
  return `${encodeURIComponent(tenantId)}/${encodeURIComponent(integrationId)}`;
}
