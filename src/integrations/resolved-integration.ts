import type { IntegrationSettings } from './settings.ts';

/**
 * An integration as it runs: its stored config with the connector's defaults filled and its secrets decrypted, read
 * once (resolveIntegration, connectors/integration-config.ts): what the credentials and the connectors are given in
 * place of the stored row.
 */
export interface ResolvedIntegration {
  tenantId: string;
  id: string;
  version: number;
  config: Readonly<Record<string, unknown>>;
  /** The settings read from `config` once: what the executor and the connectors run with. */
  settings: IntegrationSettings;
  /**
   * The origins of its URL fields: the only ones its credentials go to (credentials/destinations.ts,
   * docs/security.md#secrets-follow-their-origin).
   */
  credentialOrigins: ReadonlySet<string>;
}
