import type { FastifyBaseLogger } from 'fastify';
import type { ConnectorDefinition, ConnectorResult, Operation, ResolvedIntegration } from '../connectors/connector.ts';
import type { AppContext } from '../context.ts';
import { authHeaders } from '../credentials/schemes.ts';
import { type TlsConfig, tlsWarnings } from '../credentials/tls.ts';
import { type UpstreamCredentials, upstreamCredentials } from '../credentials/upstream-credentials.ts';
import { ApiError, errorBody } from '../errors.ts';
import { toApiError } from '../http/error-handler.ts';
import { nowIso } from '../ids.ts';
import { resolveIntegration } from '../integrations/config.ts';
import { SecretMatcherCache } from '../secrets/matcher-cache.ts';
import { redactReply } from '../secrets/redact.ts';
import { SecretMatcher } from '../secrets/secret-matcher.ts';
import { newExecutionId } from '../storage/executions.ts';
import { findIntegration, type StoredIntegration } from '../storage/integrations.ts';
import { traceExecute, tracingOn } from '../telemetry/spans.ts';
import { ExecuteBudget } from '../transport/budget.ts';
import { type ReplyChunks, serializeReply } from '../transport/raw-json.ts';
import { TenantConcurrency } from './concurrency.ts';
import { checkExecuteRequest, runExecute } from './executor.ts';

/** One execute request, as the route hands it over. */
export interface ExecuteCall {
  tenantId: string;
  /** The calling key, or null when a person (`userId`) calls. */
  keyId: string | null;
  userId: string | null;
  integrationId: string;
  operation: Operation;
  /** The body's fields beside `operation`. */
  fields: Record<string, unknown>;
  requestId: string;
  log: FastifyBaseLogger;
}

/** What the caller gets, and what the idempotency layer needs to know of it. */
export interface ExecuteAnswer {
  status: number;
  /** The reply body as sent, secrets redacted: text, or chunks when a large answer was read off the main thread. */
  body: string | ReplyChunks;
  /** Whether a write may have reached the upstream: such a failure is kept for replay, never given back. */
  reachedUpstream: boolean;
  /** Milliseconds spent on upstream requests, and in all (for Server-Timing). */
  upstreamMs: number;
  totalMs: number;
  /** For the request's log line and metrics: the execution's id, its connector and the error code answered. */
  executionId: string;
  connector: string;
  errorCode: string | null;
}

interface Outcome {
  status: number;
  body: string | ReplyChunks;
  messageCount: number;
  errorCode: string | null;
  errorMessage: string | null;
  errorDetails: Record<string, unknown> | null;
}

/** An integration as the execute path runs it: decrypted, with the matcher of the secrets no reply may show. */
interface Resolved {
  integration: ResolvedIntegration;
  secrets: SecretMatcher;
}

function successBody(result: ConnectorResult) {
  return { success: true as const, data: result.data, ...(result.errors && { errors: result.errors }) };
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
 * A `test` result with `details.warnings` naming each certificate of `config.tls` that has expired or expires within
 * 30 days (docs/security.md#tls), beside whatever the connector reported.
 */
function withCertificateWarnings(result: ConnectorResult, tls: TlsConfig | undefined): ConnectorResult {
  const warnings = tls ? tlsWarnings(tls, { now: new Date(), withinDays: 30 }) : [];
  const details = (result.data as { details?: Record<string, unknown> }).details;
  if (warnings.length === 0 || typeof details !== 'object' || details === null) return result;
  const earlier = Array.isArray(details.warnings) ? details.warnings : [];
  return { ...result, data: { ...result.data, details: { ...details, warnings: [...earlier, ...warnings] } } };
}

/** The failure reply; a bug becomes internal_error (logged), never its own message. */
function failure(call: ExecuteCall, thrown: unknown, secrets: SecretMatcher): Outcome {
  let error = toApiError(thrown);
  if (!error) {
    call.log.error({ err: thrown }, 'execute failed with an unexpected error');
    error = new ApiError('internal_error');
  }
  const body = errorBody(error.code, error.message, call.requestId, error.details, error.upstreamErrors);
  const { value, text } = redactReply(body, secrets);
  return {
    status: error.status,
    body: text,
    messageCount: 0,
    errorCode: error.code,
    errorMessage: value.error.message,
    errorDetails: value.error.details ?? null,
  };
}

/**
 * The execute path, end to end (docs/execute.md#what-happens-in-order): the integration looked up, its connector bound, the request
 * checked, run through the executor within one budget (bytes and deadline), the execution recorded, and the answer
 * in the one shape with secrets redacted. It knows nothing of HTTP routes, nor of GraphQL or SOAP.
 *
 * Refusals before an execution exists (no such integration, the tenant's concurrent executes used up) are thrown as
 * ApiErrors; everything after is answered and recorded.
 */
export class ExecutionService {
  readonly #ctx: AppContext;
  readonly #slots: TenantConcurrency;
  /**
   * Decrypted integrations and the matchers of their secrets, per stored object (which the integration cache keeps
   * while it is current, so this holds no more than that cache does).
   */
  readonly #resolvedIntegrations = new WeakMap<StoredIntegration, Resolved>();
  /** Matchers by secret set: a stored object is read anew every second, its secrets' matcher is not compiled anew. */
  readonly #matchers = new SecretMatcherCache();

  constructor(ctx: AppContext) {
    this.#ctx = ctx;
    this.#slots = new TenantConcurrency(ctx.config.tenantConcurrency);
  }

  async execute(call: ExecuteCall): Promise<ExecuteAnswer> {
    const release = this.#slots.tryAcquire(call.tenantId);
    if (!release) {
      const refused = new ApiError(
        'rate_limited',
        `This tenant already has ${this.#slots.limit} executes running on this instance; retry when one has finished.`,
        { reason: 'concurrency', limit: this.#slots.limit },
      );
      refused.retryAfterSeconds = 1;
      throw refused;
    }
    try {
      return await (tracingOn() ? traceExecute(call, () => this.#run(call)) : this.#run(call));
    } finally {
      release();
    }
  }

  #resolved(definition: ConnectorDefinition, stored: StoredIntegration, masterKey: Buffer): Resolved {
    let resolved = this.#resolvedIntegrations.get(stored);
    if (!resolved) {
      const integration = resolveIntegration(definition, stored, masterKey);
      resolved = { integration, secrets: this.#matchers.get(secretValues(definition, integration)) };
      this.#resolvedIntegrations.set(stored, resolved);
    }
    return resolved;
  }

  async #run(call: ExecuteCall): Promise<ExecuteAnswer> {
    const { config, storage, registry, masterKey } = this.#ctx;
    const stored = await this.#ctx.integrations.get(call.tenantId, call.integrationId, () =>
      findIntegration(storage.db, call.tenantId, call.integrationId),
    );
    if (!stored) throw new ApiError('not_found', `No integration ${call.integrationId}.`);
    // Taken at the start, so that the log's newest-first order is the order the calls began in.
    const executionId = newExecutionId();
    const startedAt = nowIso();
    const started = performance.now();
    const budget = new ExecuteBudget(
      { maxBytes: config.executeMaxBytes, deadlineMs: config.executeDeadlineSeconds * 1000 },
      started,
    );
    budget.takeTurn = () => this.#ctx.turns.take(call.tenantId);

    let secrets = SecretMatcher.none;
    let credentials: UpstreamCredentials | undefined;
    /** The secrets' matcher, with the access tokens issued so far in this execute (each set's matcher is cached). */
    const redaction = () =>
      credentials && credentials.issued.length > 0 ? this.#matchers.get([...secrets.secrets, ...credentials.issued]) : secrets;
    let outcome: Outcome;
    try {
      const definition = registry.get(stored.connector);
      if (!definition) {
        throw new ApiError('integration_misconfigured', `Connector ${stored.connector} is no longer offered.`);
      }
      checkExecuteRequest(definition, call.operation, call.fields);
      const { integration, secrets: matcher } = this.#resolved(definition, stored, masterKey);
      secrets = matcher;
      const issuing = upstreamCredentials(integration, {
        shorthand: definition.shorthandAuth?.(integration.config),
        oauth2: this.#ctx.connectors.oauth2,
        tokenRequest: {
          timeoutMs: Number(integration.config.timeout_seconds ?? 30) * 1000,
          maxBodyBytes: this.#ctx.connectors.upstreamMaxBytes,
          budget,
        },
      });
      credentials = issuing;
      const shared = this.#ctx.connectors;
      const tls = integration.config.tls as TlsConfig | undefined;
      const connection = definition.connect(integration, {
        ...shared,
        dispatcher: shared.dispatchers.forIntegration(
          { tenantId: integration.tenantId, integrationId: integration.id, version: integration.version },
          tls,
        ),
        budget,
        credentials: issuing,
        get secrets() {
          return redaction();
        },
      });
      const ran = await runExecute(definition, connection, call.operation, call.fields, budget);
      const result = call.operation === 'test' ? withCertificateWarnings(ran, tls) : ran;
      // Serialized here, inside the guard: an answer that cannot be written is this call's failure, recorded as such.
      const { value, text } = redactReply(successBody(result), redaction());
      const body = serializeReply(value, text) ?? text;
      outcome = { status: 200, body, messageCount: result.messageCount, errorCode: null, errorMessage: null, errorDetails: null };
    } catch (thrown) {
      outcome = failure(call, thrown, redaction());
    }

    const totalMs = performance.now() - started;
    this.#ctx.executions.record(call.tenantId, {
      id: executionId,
      integration_id: stored.id,
      connector: stored.connector,
      operation: call.operation,
      status: outcome.status < 300 ? 'succeeded' : 'failed',
      http_status: outcome.status,
      error_code: outcome.errorCode,
      error_message: outcome.errorMessage,
      error_details: outcome.errorDetails,
      message_count: outcome.messageCount,
      duration_ms: Math.round(totalMs),
      api_key_id: call.keyId,
      user_id: call.userId,
      request_id: call.requestId,
      started_at: startedAt,
    });
    return {
      status: outcome.status,
      body: outcome.body,
      reachedUpstream: budget.wroteUpstream,
      upstreamMs: budget.upstreamMs,
      totalMs: performance.now() - started,
      executionId,
      connector: stored.connector,
      errorCode: outcome.errorCode,
    };
  }
}
