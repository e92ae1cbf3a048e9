import type { ConnectorDefinition, Operation, SharedConnectorContext } from '../connectors/connector.ts';
import { resolveIntegration } from '../connectors/integration-config.ts';
import type { ConnectorRegistry } from '../connectors/registry.ts';
import { ApiError } from '../core/errors.ts';
import { authHeaders } from '../credentials/schemes.ts';
import { upstreamCredentials } from '../credentials/upstream-credentials.ts';
import type { IntegrationCache } from '../integrations/cache.ts';
import type { ResolvedIntegration } from '../integrations/resolved-integration.ts';
import { SecretMatcherCache } from '../secrets/matcher-cache.ts';
import type { Db } from '../storage/database.ts';
import { findIntegration, type StoredIntegration } from '../storage/integrations.ts';
import type { ExecuteBudget } from '../transport/budget.ts';
import { BoundRun, type Resolved } from './bound-run.ts';
import { checkExecuteRequest } from './executor.ts';

/** What resolving an integration needs, named. */
export interface ResolverDeps {
  db: Db;
  /** Decrypts the integration's secrets. */
  masterKey: Buffer;
  registry: ConnectorRegistry;
  /** The plumbing every connection runs with: dispatchers, workers, OAuth2 sources, limits. */
  shared: SharedConnectorContext;
  /** Integrations as the execute path reads them (kept 1 s). */
  integrations: IntegrationCache;
}

/**
 * The secret values of the integration (decrypted), which no reply or record may show, and the header values made of
 * them (Basic's `base64(user:password)` is no secret's text, but shows one).
 */
function secretValues(definition: ConnectorDefinition, integration: ResolvedIntegration): string[] {
  const values = definition.secretFields.flatMap((path) => {
    let value: unknown = integration.config;
    for (const segment of path.split('.')) value = (value as Record<string, unknown> | undefined)?.[segment];
    return typeof value === 'string' && value !== '' ? [value] : [];
  });
  const derived = Object.values(authHeaders(integration.config.auth)).filter((value) => !values.includes(value));
  return [...values, ...derived];
}

/**
 * From an integration's id to a connection bound for one run: looked up (through the 1 s cache), its connector found,
 * decrypted once per stored version (with the matcher of its secrets and how its credentials are had), then bound
 * with a run's budget.
 */
export class IntegrationResolver {
  readonly #deps: ResolverDeps;
  /**
   * Decrypted integrations and the matchers of their secrets, per stored object (which the integration cache keeps
   * while it is current, so this holds no more than that cache does).
   */
  readonly #resolved = new WeakMap<StoredIntegration, Resolved>();
  /** Matchers by secret set: a stored object is read anew every second, its secrets' matcher is not compiled anew. */
  readonly #matchers = new SecretMatcherCache();

  constructor(deps: ResolverDeps) {
    this.#deps = deps;
  }

  /** The tenant's integration, through the cache; `404 not_found` when there is none. */
  async lookUp(tenantId: string, integrationId: string): Promise<StoredIntegration> {
    const { db, integrations } = this.#deps;
    const stored = await integrations.get(tenantId, integrationId, () => findIntegration(db, tenantId, integrationId));
    if (!stored) throw new ApiError('not_found', `No integration ${integrationId}.`);
    return stored;
  }

  /** The same, read from storage now (a run that must see the integration as it is: an async run, the schema view). */
  find(tenantId: string, integrationId: string): Promise<StoredIntegration | undefined> {
    return findIntegration(this.#deps.db, tenantId, integrationId);
  }

  /**
   * The integration ready to be bound: its connector found and the integration decrypted (once per stored version);
   * throws when it cannot run. The operation and the fields' schemas are checked before the integration is decrypted
   * (`request`).
   */
  resolve(stored: StoredIntegration, request?: { operation: Operation; fields: Record<string, unknown> }): Resolved {
    const definition = this.#definition(stored);
    if (request) checkExecuteRequest(definition, request.operation, request.fields);
    return this.#resolve(definition, stored);
  }

  /**
   * The resolved integration's connection, bound for one run with its budget. What the connector finds wrong comes
   * after, from the connection (`prepare`): connect does no I/O, so such a request costs no upstream call.
   */
  bind(resolved: Resolved, budget: ExecuteBudget): BoundRun {
    return new BoundRun(this.#deps.shared, resolved, budget);
  }

  /** The stored integration's connector, or integration_misconfigured when this service no longer offers it. */
  #definition(stored: StoredIntegration): ConnectorDefinition {
    const definition = this.#deps.registry.get(stored.connector);
    if (!definition) throw new ApiError('integration_misconfigured', `Connector ${stored.connector} is no longer offered.`);
    return definition;
  }

  #resolve(definition: ConnectorDefinition, stored: StoredIntegration): Resolved {
    let resolved = this.#resolved.get(stored);
    if (!resolved || resolved.definition !== definition) {
      const integration = resolveIntegration(definition, stored, this.#deps.masterKey);
      const { shared } = this.#deps;
      resolved = {
        definition,
        integration,
        secrets: this.#matchers.get(secretValues(definition, integration)),
        matchers: this.#matchers,
        credentials: upstreamCredentials(integration, {
          shorthand: definition.shorthandAuth?.(integration.config),
          oauth2: shared.oauth2,
          tokenRequest: { timeoutMs: integration.settings.timeoutMs, maxBodyBytes: shared.upstreamMaxBytes },
        }),
      };
      this.#resolved.set(stored, resolved);
    }
    return resolved;
  }
}
