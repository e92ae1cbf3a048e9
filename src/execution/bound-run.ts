import type { FastifyBaseLogger } from 'fastify';
import type { Dispatcher } from 'undici';
import type { Connection, ConnectorContext, ConnectorDefinition, SharedConnectorContext } from '../connectors/connector.ts';
import type { OAuth2Sources } from '../credentials/oauth2-sources.ts';
import type { CredentialsForExecute, UpstreamCredentials } from '../credentials/upstream-credentials.ts';
import type { IntegrationDispatchers } from '../egress/integration-dispatchers.ts';
import type { TlsConfig } from '../egress/tls.ts';
import type { ResolvedIntegration } from '../integrations/resolved-integration.ts';
import type { SecretMatcherCache } from '../secrets/matcher-cache.ts';
import type { SecretMatcher } from '../secrets/secret-matcher.ts';
import type { AnswerWorkers } from '../transport/answer-workers.ts';
import type { ExecuteBudget } from '../transport/budget.ts';

/**
 * An integration as the execute path runs it, all of it the same for every execute of one stored version: decrypted,
 * with the matcher of the secrets no reply may show, and how its credentials are had per execute.
 */
export interface Resolved {
  definition: ConnectorDefinition;
  integration: ResolvedIntegration;
  secrets: SecretMatcher;
  /** Matchers by secret set, for the secrets with the access tokens issued in an execute. */
  matchers: SecretMatcherCache;
  credentials: CredentialsForExecute;
}

/**
 * An integration bound for one run: its connection, and the context that connection runs with (the shared plumbing,
 * the integration's dispatcher, the run's budget and credentials, the secrets' matcher as it is when read). Only the
 * run's own part is held per run; the rest is read through the integration's `Resolved`, so a call in flight holds one
 * small object here, not a context, a bound record and a redaction closure with its scope.
 */
export class BoundRun implements ConnectorContext {
  readonly budget: ExecuteBudget;
  readonly credentials: UpstreamCredentials;
  readonly dispatcher: Dispatcher;
  readonly connection: Connection;
  /** See ConnectorContext.accepting: set by `accept` before it prepares the call. */
  accepting = false;
  readonly #shared: SharedConnectorContext;
  readonly #resolved: Resolved;

  /** Throws what `connect` throws (integration_misconfigured) when the integration cannot run. */
  constructor(shared: SharedConnectorContext, resolved: Resolved, budget: ExecuteBudget) {
    const { integration } = resolved;
    this.#shared = shared;
    this.#resolved = resolved;
    this.budget = budget;
    this.credentials = resolved.credentials(budget);
    this.dispatcher = shared.dispatchers.forIntegration(
      { tenantId: integration.tenantId, integrationId: integration.id, version: integration.version },
      integration.settings.tls,
      integration.credentialOrigins,
    );
    this.connection = resolved.definition.connect(integration, this);
  }

  get definition(): ConnectorDefinition {
    return this.#resolved.definition;
  }

  get tls(): TlsConfig | undefined {
    return this.#resolved.integration.settings.tls;
  }

  get upstreamMaxBytes(): number {
    return this.#shared.upstreamMaxBytes;
  }

  get log(): FastifyBaseLogger {
    return this.#shared.log;
  }

  get workers(): AnswerWorkers {
    return this.#shared.workers;
  }

  get oauth2(): OAuth2Sources {
    return this.#shared.oauth2;
  }

  get dispatchers(): IntegrationDispatchers {
    return this.#shared.dispatchers;
  }

  get secrets(): SecretMatcher {
    return this.redaction();
  }

  /** The secrets' matcher, with the access tokens issued so far in this run. */
  redaction(): SecretMatcher {
    const { secrets, matchers } = this.#resolved;
    const issued = this.credentials.issued;
    return issued.length > 0 ? matchers.get([...secrets.secrets, ...issued]) : secrets;
  }
}
