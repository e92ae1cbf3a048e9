import { type ValidationIssue, validationFailed } from '../core/errors.ts';
import { isJsonObject } from '../core/json-object.ts';
import { strictAjv, toIssues } from '../core/validation.ts';
import { credentialOrigins, originOf } from '../credentials/destinations.ts';
import { authProblems, credentialSchemes } from '../credentials/schemes.ts';
import { type TlsConfig, tlsProblems } from '../egress/tls.ts';
import { tlsView } from '../egress/tls-config.ts';
import { catalogSettings } from '../integrations/catalog-settings.ts';
import type { ResolvedIntegration } from '../integrations/resolved-integration.ts';
import { settingsOf } from '../integrations/settings.ts';
import { resilienceProblems, retryView } from '../resilience/config.ts';
import { decryptSecret, encryptSecret } from '../secrets/cipher.ts';
import type { IntegrationWrite, StoredIntegration } from '../storage/integrations.ts';
import type { ConnectorDefinition } from './connector.ts';
import { signatureCertificateView, type WsSecurityOptions, wsSecuritySecretPaths } from './soap/wsse/config.ts';
import { wsSecurityProblems } from './soap/wsse/problems.ts';

type Config = Record<string, unknown>;

/** The value at a dot path of a config (`auth.token_url`), or undefined. */
function valueAt(config: Readonly<Config>, path: string): unknown {
  let value: unknown = config;
  for (const segment of path.split('.')) {
    if (!isJsonObject(value) || !Object.hasOwn(value, segment)) return undefined;
    value = value[segment];
  }
  return value;
}

/** Whether `input` gives a value (`null` and `""` included) at the dot path. */
function gives(input: Readonly<Config>, path: string): boolean {
  return valueAt(input, path) !== undefined;
}

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
    const value = valueAt(config, field);
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
    (field) => gives(input, field) && originOf(valueAt(input, field)) !== originOf(valueAt(previous.config, field)),
  );
  if (moved.length === 0) return;
  const unsent = Object.keys(previous.secrets).filter(
    (path) => !gives(input, path) && !replacedParent(input, previous.config, path),
  );
  if (unsent.length === 0) return;
  const change = `${moved.join(' and ')} ${moved.length === 1 ? 'changes' : 'change'} origin`;
  throw validationFailed(
    unsent.map((path) => ({
      path: `config.${path}`,
      message: `${change}; send ${path} again (or null) so it is not sent to the new host`,
    })),
  );
}

/**
 * Whether the write drops a secret with the object that holds it: that object set to `null`, or replaced by one of
 * another `type` (an `auth` of another scheme), which clears the secrets of the one it replaces.
 */
function replacedParent(input: Readonly<Config>, stored: Readonly<Config>, path: string): boolean {
  const segments = path.split('.');
  for (let depth = 1; depth < segments.length; depth++) {
    const parent = segments.slice(0, depth).join('.');
    const given = valueAt(input, parent);
    if (given === null) return true;
    if (isJsonObject(given) && !mergesInto(given, valueAt(stored, parent))) return true;
  }
  return false;
}

/**
 * Whether a written object merges into the stored one (PATCH): when there is one and it is of the same kind. An object
 * with a `type` (`auth`) is of another kind when its type differs, and then replaces the stored one whole.
 */
function mergesInto(written: Readonly<Config>, stored: unknown): stored is Config {
  return isJsonObject(stored) && (written.type === undefined || written.type === stored.type);
}

function secretContext(tenantId: string, id: string, field: string): string {
  return `${tenantId}\u0000${id}\u0000${field}`;
}

/**
 * The secrets whose value a write changed, set or cleared, by path (`auth.client_secret`): compared opened, since each
 * sealing differs. For the audit log, which names the path and never the value.
 */
export function changedSecretPaths(
  target: { tenantId: string; id: string; masterKey: Buffer },
  before: Readonly<Record<string, string>>,
  after: Readonly<Record<string, string>>,
): string[] {
  const open = (secrets: Readonly<Record<string, string>>, path: string) =>
    secrets[path] === undefined
      ? undefined
      : decryptSecret(target.masterKey, secrets[path], secretContext(target.tenantId, target.id, path));
  const paths = new Set([...Object.keys(before), ...Object.keys(after)]);
  return [...paths].filter((path) => before[path] !== after[path] && open(before, path) !== open(after, path));
}

/**
 * The stored form of a PUT (whole replacement: a field or secret left out is cleared) or a PATCH
 * (merge: left out is kept, objects such as `auth` merged field by field unless their `type` changes). `null` or `""`
 * clears a secret; `null` unsets any other field. A PATCH that moves a URL field to another origin must resend the
 * stored secrets (a PUT clears those it leaves out anyway). Secrets may sit in objects (`auth.password`): they are kept
 * apart, under their dot path, and the object stored without them.
 */
export function applyConfigWrite(
  definition: ConnectorDefinition,
  target: { tenantId: string; id: string; masterKey: Buffer },
  input: Config,
  previous: Pick<StoredIntegration, 'config' | 'secrets'> | undefined,
): Pick<IntegrationWrite, 'config' | 'secrets'> {
  checkConfig(definition, input);
  if (previous) checkSecretsFollowOrigin(definition, input, previous);
  const secrets: Record<string, string> = { ...(previous?.secrets ?? {}) };
  const seal = (path: string, value: string) =>
    encryptSecret(target.masterKey, value, secretContext(target.tenantId, target.id, path));
  const config = mergeConfig(definition, input, previous?.config, secrets, seal, '');
  const open = (path: string) =>
    secrets[path] === undefined
      ? undefined
      : decryptSecret(target.masterKey, secrets[path], secretContext(target.tenantId, target.id, path));
  const issues = [
    ...credentialProblems(definition, config, secrets),
    ...tlsConfigProblems(config, open),
    ...wsSecurityConfigProblems(config, open),
    ...resilienceProblems(config),
  ];
  if (issues.length > 0) throw validationFailed(issues);
  return { config, secrets };
}

/** `input` written over `stored` at `prefix`: the fields merged, secrets sealed into `secrets` under their path. */
function mergeConfig(
  definition: ConnectorDefinition,
  input: Readonly<Config>,
  stored: Readonly<Config> | undefined,
  secrets: Record<string, string>,
  seal: (path: string, value: string) => string,
  prefix: string,
): Config {
  const config: Config = { ...(stored ?? {}) };
  for (const [field, value] of Object.entries(input)) {
    const path = prefix === '' ? field : `${prefix}.${field}`;
    if (definition.secretFields.includes(path)) {
      if (value === null || value === '') delete secrets[path];
      else secrets[path] = seal(path, String(value));
    } else if (value === null) {
      delete config[field];
      clearSecretsUnder(secrets, path);
    } else if (isJsonObject(value)) {
      const kept = config[field];
      if (!mergesInto(value, kept)) clearSecretsUnder(secrets, path);
      config[field] = mergeConfig(definition, value, mergesInto(value, kept) ? kept : undefined, secrets, seal, path);
    } else {
      config[field] = value;
    }
  }
  return config;
}

/**
 * What `config.tls` says of its certificates and key (egress/tls.ts): read with the key and password as they will be
 * used, the stored ones included, so a PATCH of the certificate alone is checked against the key kept.
 */
function tlsConfigProblems(config: Readonly<Config>, open: (path: string) => string | undefined): ValidationIssue[] {
  if (!isJsonObject(config.tls)) return [];
  const tls = { ...config.tls, client_key: open('tls.client_key'), client_key_password: open('tls.client_key_password') };
  return tlsProblems(tls as TlsConfig, { now: new Date() }).map(({ path, message }) => ({ path, message }));
}

/** What `config.ws_security` says of its parts, read with its secrets as they will be used, stored ones included. */
function wsSecurityConfigProblems(config: Readonly<Config>, open: (path: string) => string | undefined): ValidationIssue[] {
  if (!isJsonObject(config.ws_security)) return [];
  const options = structuredClone(config.ws_security);
  for (const path of wsSecuritySecretPaths) {
    const value = open(path);
    const [, part, field] = path.split('.');
    if (value !== undefined && isJsonObject(options[part])) (options[part] as Config)[field] = value;
  }
  return wsSecurityProblems(options as WsSecurityOptions);
}

function clearSecretsUnder(secrets: Record<string, string>, path: string): void {
  for (const key of Object.keys(secrets)) if (key.startsWith(`${path}.`)) delete secrets[key];
}

/**
 * What the written config says of credentials that no schema can: `auth` has what its type needs (a secret stored
 * before counts as given) and nothing else, and stands alone: the connector's shorthands (GraphQL's `token`, SOAP's
 * `auth_header`/`auth_value`) are refused beside it.
 */
function credentialProblems(
  definition: ConnectorDefinition,
  config: Readonly<Config>,
  secrets: Readonly<Record<string, string>>,
) {
  const auth = config.auth;
  if (!isJsonObject(auth)) return [];
  const stored = new Set(
    Object.keys(secrets)
      .filter((path) => path.startsWith('auth.'))
      .map((path) => path.slice('auth.'.length)),
  );
  const issues: ValidationIssue[] = authProblems(auth, stored);
  const shorthands = (definition.authShorthands ?? []).filter((field) => field in config || field in secrets);
  if (shorthands.length > 0) {
    issues.push({
      path: 'config.auth',
      message: `cannot stand beside ${shorthands.join(' and ')}, its shorthand; send ${shorthands.map((f) => `${f}: null`).join(' and ')} with it`,
    });
  }
  return issues;
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
    // The retry settings the integration runs with, defaults included: what a person checks when calls are retried.
    else if (field === 'retry') config.retry = retryView(stored.config);
    else if (field === 'tls' && isJsonObject(stored.config.tls)) {
      config.tls = tlsView(stored.config.tls, (path) => path in stored.secrets);
    } else if (isJsonObject(stored.config[field]))
      config[field] = objectView(definition, field, stored.config[field], stored.secrets);
    else if (
      definition &&
      Object.hasOwn(definition.configProperties, field) &&
      isObjectSchema(definition.configProperties[field])
    ) {
      config[field] = null;
    } else {
      const value = stored.config[field] ?? definition?.defaults[field] ?? null;
      config[field] = definition?.urlFields?.includes(field) ? shownUrl(value) : value;
    }
  }
  return {
    id: stored.id,
    name: stored.name,
    connector: stored.connector,
    config,
    catalog: catalogSettings(stored.catalog),
    created_at: stored.created_at,
    updated_at: stored.updated_at,
  };
}

function isObjectSchema(schema: unknown): boolean {
  const type = isJsonObject(schema) ? schema.type : undefined;
  return type === 'object' || (Array.isArray(type) && type.includes('object'));
}

/**
 * An object of the config (`auth`, `tls`, `ws_security`) as shown: its fields, objects within it shown the same way,
 * and for each secret directly in it whether it is set (`password_set`). An `auth` shows only its scheme's secrets.
 */
function objectView(
  definition: ConnectorDefinition | undefined,
  path: string,
  value: Readonly<Config>,
  secrets: Readonly<Record<string, string>>,
): Config {
  const shown: Config = {};
  for (const [field, item] of Object.entries(value)) {
    shown[field] = isJsonObject(item) ? objectView(definition, `${path}.${field}`, item, secrets) : item;
  }
  // A signing certificate is shown by its facts, as config.tls's are, never as PEM.
  if (path === 'ws_security.signature') shown.certificate = signatureCertificateView(value.certificate);
  const scheme = path === 'auth' ? credentialSchemes.get(String(value.type)) : undefined;
  for (const secretPath of definition?.secretFields ?? []) {
    const field = secretPath.slice(path.length + 1);
    if (!secretPath.startsWith(`${path}.`) || field.includes('.')) continue;
    if (path === 'auth' && !scheme?.secretFields.includes(field)) continue;
    shown[`${field}_set`] = secretPath in secrets;
  }
  return shown;
}

/** Defaults, stored fields and decrypted secrets: what the connector runs with. */
export function resolveIntegration(
  definition: ConnectorDefinition,
  stored: StoredIntegration,
  masterKey: Buffer,
): ResolvedIntegration {
  const config: Config = structuredClone({ ...definition.defaults, ...stored.config });
  for (const [path, sealed] of Object.entries(stored.secrets)) {
    const value = decryptSecret(masterKey, sealed, secretContext(stored.tenant_id, stored.id, path));
    const segments = path.split('.');
    let holder = config;
    for (const segment of segments.slice(0, -1)) {
      if (!isJsonObject(holder[segment])) holder[segment] = {};
      holder = holder[segment] as Config;
    }
    holder[segments[segments.length - 1]] = value;
  }
  return {
    tenantId: stored.tenant_id,
    id: stored.id,
    version: stored.version,
    config: Object.freeze(config),
    settings: settingsOf(definition.defaults, config),
    credentialOrigins: credentialOrigins(config, definition.urlFields),
  };
}
