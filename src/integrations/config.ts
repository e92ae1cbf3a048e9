import type { ConnectorDefinition, ResolvedIntegration } from '../connectors/connector.ts';
import { credentialOrigins, originOf } from '../credentials/destinations.ts';
import { validationFailed } from '../errors.ts';
import { strictAjv, toIssues } from '../http/validation.ts';
import { decryptSecret, encryptSecret } from '../secrets/cipher.ts';
import type { IntegrationWrite, StoredIntegration } from '../storage/integrations.ts';

type Config = Record<string, unknown>;

const validators = new Map<string, ReturnType<typeof strictAjv.compile>>();

/**
 * Types and ranges of a config against the connector's schema, and its URL fields parsed (user information
 * refused: a credential in a URL would be stored and shown in plain text); every problem listed, paths under `config.`.
 */
export function checkConfig(definition: ConnectorDefinition, config: Config): void {
  let validate = validators.get(definition.id);
  if (!validate) {
    validate = strictAjv.compile({ type: 'object', additionalProperties: false, properties: definition.configProperties });
    validators.set(definition.id, validate);
  }
  const issues = validate(config) ? [] : toIssues(validate.errors ?? []).map((i) => ({ ...i, path: `config.${i.path}` }));
  for (const field of definition.urlFields) {
    const value = config[field];
    const path = `config.${field}`;
    if (typeof value !== 'string' || issues.some((i) => i.path === path)) continue;
    const url = URL.parse(value);
    if (url === null) issues.push({ path, message: 'is not a valid URL' });
    else if (url.username !== '' || url.password !== '') {
      issues.push({ path, message: 'must not contain user information (user:password@); send credentials as a secret' });
    }
  }
  if (issues.length > 0) throw validationFailed(issues);
}

/**
 * A secret goes only where its owner sent it: when a PATCH moves any URL field to another origin while secrets are
 * stored, every stored secret must be sent again (a value, `null` or `""`), so a key that may only write cannot
 * point the integration at its own host and have the stored secret delivered there.
 *
 * An unset field has no origin, so setting one counts as a change, and so does unsetting one: without
 * `service_url` the SOAP call goes to the WSDL's `soap:address`, a host the owner never named; for the other
 * fields it changes nothing at once, but one rule for every field is easier to trust than a case per field.
 */
function checkSecretsFollowOrigin(
  definition: ConnectorDefinition,
  input: Config,
  previous: Pick<StoredIntegration, 'config' | 'secrets'>,
): void {
  const moved = definition.urlFields.filter(
    (field) => Object.hasOwn(input, field) && originOf(input[field]) !== originOf(previous.config[field]),
  );
  if (moved.length === 0) return;
  const unsent = Object.keys(previous.secrets).filter((field) => !Object.hasOwn(input, field));
  if (unsent.length === 0) return;
  const change = `${moved.join(' and ')} ${moved.length === 1 ? 'changes' : 'change'} origin`;
  throw validationFailed(
    unsent.map((field) => ({
      path: `config.${field}`,
      message: `${change}; send ${field} again (or null) so it is not sent to the new host`,
    })),
  );
}

function secretContext(tenantId: string, id: string, field: string): string {
  return `${tenantId}\u0000${id}\u0000${field}`;
}

/**
 * The stored form of a PUT (whole replacement: a field or secret left out is cleared) or a PATCH
 * (merge: left out is kept). `null` or `""` clears a secret; `null` unsets any other field. A PATCH that moves a
 * URL field to another origin must resend the stored secrets (a PUT clears those it leaves out anyway).
 */
export function applyConfigWrite(
  definition: ConnectorDefinition,
  target: { tenantId: string; id: string; masterKey: Buffer },
  input: Config,
  previous: Pick<StoredIntegration, 'config' | 'secrets'> | undefined,
): Pick<IntegrationWrite, 'config' | 'secrets'> {
  checkConfig(definition, input);
  if (previous) checkSecretsFollowOrigin(definition, input, previous);
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

/** A stored URL as shown: user information (kept by rows written before it was refused) left out. */
function shownUrl(value: unknown): unknown {
  const url = typeof value === 'string' ? URL.parse(value) : null;
  if (url === null || (url.username === '' && url.password === '')) return value;
  url.username = '';
  url.password = '';
  return url.href;
}

/** The integration as the API shows it: every field with its default, secrets only as `<name>_set`. */
export function integrationView(definition: ConnectorDefinition | undefined, stored: StoredIntegration) {
  const config: Config = {};
  for (const field of Object.keys(definition?.configProperties ?? stored.config)) {
    if (definition?.secretFields.includes(field)) config[`${field}_set`] = field in stored.secrets;
    else {
      const value = stored.config[field] ?? definition?.defaults[field] ?? null;
      config[field] = definition?.urlFields?.includes(field) ? shownUrl(value) : value;
    }
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
  return {
    tenantId: stored.tenant_id,
    id: stored.id,
    version: stored.version,
    config: Object.freeze(config),
    credentialOrigins: credentialOrigins(config, definition.urlFields),
  };
}
