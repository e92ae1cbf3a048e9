import type { ConnectorDefinition, ResolvedIntegration } from '../connectors/connector.ts';
import { validationFailed } from '../errors.ts';
import { strictAjv, toIssues } from '../http/validation.ts';
import { decryptSecret, encryptSecret } from '../secrets/cipher.ts';
import type { IntegrationWrite, StoredIntegration } from '../storage/integrations.ts';

type Config = Record<string, unknown>;

const validators = new Map<string, ReturnType<typeof strictAjv.compile>>();

/** Types and ranges of a config against the connector's schema; every problem listed, paths under `config.`. */
export function checkConfig(definition: ConnectorDefinition, config: Config): void {
  let validate = validators.get(definition.id);
  if (!validate) {
    validate = strictAjv.compile({ type: 'object', additionalProperties: false, properties: definition.configProperties });
    validators.set(definition.id, validate);
  }
  if (!validate(config)) {
    throw validationFailed(toIssues(validate.errors ?? []).map((i) => ({ ...i, path: `config.${i.path}` })));
  }
}

function secretContext(tenantId: string, id: string, field: string): string {
  return `${tenantId}\u0000${id}\u0000${field}`;
}

/**
 * The stored form of a PUT (whole replacement: a field or secret left out is cleared) or a PATCH
 * (merge: left out is kept). `null` or `""` clears a secret; `null` unsets any other field.
 */
export function applyConfigWrite(
  definition: ConnectorDefinition,
  target: { tenantId: string; id: string; masterKey: Buffer },
  input: Config,
  previous: Pick<StoredIntegration, 'config' | 'secrets'> | undefined,
): Pick<IntegrationWrite, 'config' | 'secrets'> {
  checkConfig(definition, input);
  const config: Config = { ...(previous?.config ?? {}) };
  const secrets: Record<string, string> = { ...(previous?.secrets ?? {}) };
  for (const [field, value] of Object.entries(input)) {
    if (definition.secretFields.includes(field)) {
      if (value === null || value === '') delete secrets[field];
      else secrets[field] = encryptSecret(target.masterKey, String(value), secretContext(target.tenantId, target.id, field));
    } else if (value === null) {
      delete config[field];
    } else {
      config[field] = value;
    }
  }
  return { config, secrets };
}

/** The integration as the API shows it: every field with its default, secrets only as `<name>_set`. */
export function integrationView(definition: ConnectorDefinition | undefined, stored: StoredIntegration) {
  const config: Config = {};
  for (const field of Object.keys(definition?.configProperties ?? stored.config)) {
    if (definition?.secretFields.includes(field)) config[`${field}_set`] = field in stored.secrets;
    else config[field] = stored.config[field] ?? definition?.defaults[field] ?? null;
  }
  return {
    id: stored.id,
    name: stored.name,
    connector: stored.connector,
    config,
    created_at: stored.created_at,
    updated_at: stored.updated_at,
  };
}

/** Defaults, stored fields and decrypted secrets: what the connector runs with. */
export function resolveIntegration(
  definition: ConnectorDefinition,
  stored: StoredIntegration,
  masterKey: Buffer,
): ResolvedIntegration {
  const config: Config = { ...definition.defaults, ...stored.config };
  for (const [field, sealed] of Object.entries(stored.secrets)) {
    config[field] = decryptSecret(masterKey, sealed, secretContext(stored.tenant_id, stored.id, field));
  }
  return { tenantId: stored.tenant_id, id: stored.id, version: stored.version, config: Object.freeze(config) };
}
