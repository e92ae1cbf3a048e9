import type { TlsConfig } from '../egress/tls.ts';
import { type RetryConfig, type RetrySettings, retrySettings } from '../resilience/retry.ts';

/**
 * The settings every integration runs with, whatever its connector, read once from its config (defaults filled by the
 * connector's `defaults`) when the integration is resolved: the executor, the credentials and the connectors read
 * these, never a config field with a default of their own beside it.
 */
export interface IntegrationSettings {
  /** `timeout_seconds`: one upstream request's bound (the connector's default when unset), in ms. */
  readonly timeoutMs: number;
  /** `retry`, each missing field at its default. */
  readonly retry: RetrySettings;
  /** `max_concurrency`: calls of the integration at once on one instance; undefined for no cap. */
  readonly maxConcurrency: number | undefined;
  /** `tls`, when set. */
  readonly tls: TlsConfig | undefined;
}

/** What every connector's `defaults` must give: the settings that have no connector-independent default. */
export interface CommonDefaults {
  readonly timeout_seconds: number;
}

/**
 * The settings of a config whose fields the integration schema has validated, the connector's `defaults` beneath
 * them.
 *
 * @example
 * settingsOf({ timeout_seconds: 30 }, {}).timeoutMs; // 30000
 */
export function settingsOf(defaults: CommonDefaults, config: Readonly<Record<string, unknown>>): IntegrationSettings {
  const timeoutSeconds = typeof config.timeout_seconds === 'number' ? config.timeout_seconds : defaults.timeout_seconds;
  return Object.freeze({
    timeoutMs: timeoutSeconds * 1000,
    retry: retrySettings(config.retry as RetryConfig | undefined),
    maxConcurrency: maxConcurrencyIn(config),
    tls: config.tls as TlsConfig | undefined,
  });
}

/** `max_concurrency`, or undefined for no cap: what `settings.maxConcurrency` says, for a config not yet resolved. */
export function maxConcurrencyIn(config: Readonly<Record<string, unknown>>): number | undefined {
  const limit = config.max_concurrency;
  return typeof limit === 'number' ? limit : undefined;
}
