import { randomUUID } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import type { Dispatcher } from 'undici';
import type {
  Connection,
  ConnectorContext,
  ConnectorDefinition,
  ConnectorResult,
  Operation,
  SchemaView,
  SharedConnectorContext,
} from '../connectors/connector.ts';
import { resolveIntegration } from '../connectors/integration-config.ts';
import type { AppContext } from '../context.ts';
import { ApiError } from '../core/errors.ts';
import { nowIso } from '../core/ids.ts';
import type { ReplyChunks } from '../core/raw-json.ts';
import type { OAuth2Sources } from '../credentials/oauth2-sources.ts';
import { authHeaders } from '../credentials/schemes.ts';
import {
  type CredentialsForExecute,
  type UpstreamCredentials,
  upstreamCredentials,
} from '../credentials/upstream-credentials.ts';
import type { IntegrationDispatchers } from '../egress/integration-dispatchers.ts';
import { type TlsConfig, tlsWarnings } from '../egress/tls.ts';
import { levelOf } from '../http/request-log.ts';
import type { ResolvedIntegration } from '../integrations/resolved-integration.ts';
import { maxConcurrencyIn } from '../integrations/settings.ts';
import type { Deferral, JobQueue, QueueJob } from '../queue/job-queue.ts';
import type { Admission, CircuitState } from '../resilience/breaker.ts';
import { integrationKey } from '../resilience/config.ts';
import { failureKind, isUpstreamOutage, type RetrySettings } from '../resilience/retry.ts';
import { decryptSecret, encryptSecret } from '../secrets/cipher.ts';
import { SecretMatcherCache } from '../secrets/matcher-cache.ts';
import { redactReply } from '../secrets/redact.ts';
import { SecretMatcher } from '../secrets/secret-matcher.ts';
import { isStorageUnavailable, storageUnavailable } from '../storage/availability.ts';
import type { Db } from '../storage/database.ts';
import {
  cancelExecution,
  claimExecution,
  type Execution,
  finishExecution,
  insertQueuedExecution,
  newExecutionId,
  queuedOf,
  reclaimExecution,
} from '../storage/executions.ts';
import { findIntegration, type StoredIntegration } from '../storage/integrations.ts';
import { traceExecute, tracingOn } from '../telemetry/spans.ts';
import type { AnswerWorkers } from '../transport/answer-workers.ts';
import { ExecuteBudget } from '../transport/budget.ts';
import { TenantConcurrency } from './concurrency.ts';
import { eventTypeOf } from './events.ts';
import { checkExecuteRequest, checkWithConnection, mayRunTwice, runExecute } from './executor.ts';
import { bodyText, type Outcome, type Reply, replyFor } from './reply.ts';

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
  /** Seconds for `Retry-After`, when the failure says when to come back (docs/resilience.md#circuit-breaker). */
  retryAfterSeconds?: number;
}

/** What an accepted async call answers: the queued execution, or the failure the synchronous call would have had. */
export type Acceptance = { accepted: true; executionId: string } | { accepted: false; answer: ExecuteAnswer };

/** The job of an async execution: whom it is for, and its request sealed with the master key. */
export interface ExecutionJob {
  tenant_id: string;
  execution_id: string;
  /** `SealedRequest` as JSON, AES-GCM with the master key: request fields are never stored in the clear. */
  sealed: string;
}

interface SealedRequest {
  integration_id: string;
  operation: Operation;
  fields: Record<string, unknown>;
  key_id: string | null;
  user_id: string | null;
  request_id: string;
}

/**
 * An integration as the execute path runs it, all of it the same for every execute of one stored version: decrypted,
 * with the matcher of the secrets no reply may show, and how its credentials are had per execute.
 */
interface Resolved {
  definition: ConnectorDefinition;
  integration: ResolvedIntegration;
  secrets: SecretMatcher;
  /** Matchers by secret set, for the secrets with the access tokens issued in an execute. */
  matchers: SecretMatcherCache;
  credentials: CredentialsForExecute;
  tls: TlsConfig | undefined;
  /** How its failed upstream requests are tried again (`config.retry`, defaults filled). */
  retry: RetrySettings;
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

/**
 * An integration bound for one run: its connection, and the context that connection runs with (the shared plumbing,
 * the integration's dispatcher, the run's budget and credentials, the secrets' matcher as it is when read). Only the
 * run's own part is held per run; the rest is read through the integration's `Resolved`, so a call in flight holds one
 * small object here, not a context, a bound record and a redaction closure with its scope.
 */
class BoundRun implements ConnectorContext {
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
      resolved.tls,
      integration.credentialOrigins,
    );
    this.connection = resolved.definition.connect(integration, this);
  }

  get definition(): ConnectorDefinition {
    return this.#resolved.definition;
  }

  get tls(): TlsConfig | undefined {
    return this.#resolved.tls;
  }

  get retry(): RetrySettings {
    return this.#resolved.retry;
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

const sealContext = (tenantId: string, executionId: string) => `async-request:${tenantId}:${executionId}`;

/** An integration's `config.max_concurrency`, or undefined when it has none (read before the integration is resolved). */
function maxConcurrencyOf(stored: StoredIntegration): number | undefined {
  return maxConcurrencyIn(stored.config);
}

/** The refusal of a synchronous call that waited 1 s for a slot of its integration (docs/resilience.md#concurrency). */
function concurrencyRefusal(integrationId: string, limit: number): ApiError {
  const refused = new ApiError(
    'rate_limited',
    `Integration ${integrationId} already has ${limit} calls running on this instance (its max_concurrency), and none ended within 1 s; retry later.`,
    { reason: 'integration_concurrency', limit },
  );
  refused.retryAfterSeconds = 1;
  return refused;
}

/** A call refused because its integration's breaker is open (docs/resilience.md#circuit-breaker). */
function circuitOpen(integrationId: string, admission: Extract<Admission, { ok: false }>): ApiError {
  const refused = new ApiError(
    'upstream_circuit_open',
    `Calls to integration ${integrationId} failed one after another, so its circuit breaker is open: calls fail at once for ${admission.retryAfterSeconds} s more, then one trial call goes through.`,
    { circuit: 'open', attempts: 0 },
  );
  refused.retryAfterSeconds = admission.retryAfterSeconds;
  return refused;
}

/** The breaker's state in what `test` reports: `details.circuit` of its result, or of its failure. */
function withCircuit(result: ConnectorResult, circuit: CircuitState): ConnectorResult {
  const details = (result.data as { details?: Record<string, unknown> }).details;
  if (typeof details !== 'object' || details === null) return result;
  return { ...result, data: { ...result.data, details: { ...details, circuit } } };
}

function failureWithCircuit(thrown: unknown, circuit: CircuitState): unknown {
  if (!(thrown instanceof ApiError)) return thrown;
  return thrown.withDetails({ circuit });
}

/**
 * The execute path, end to end (docs/execute.md#what-happens-in-order): the integration looked up, its connector bound, the request
 * checked, run through the executor within one budget (bytes and deadline), and an `Outcome`, which `replyFor` makes
 * the answer in the one shape with secrets redacted. It knows nothing of HTTP routes, nor of GraphQL or SOAP.
 *
 * - `execute`: a synchronous call, answered and recorded (written behind);
 * - `accept`: an async call (docs/async.md), checked as a synchronous one would be, then stored as `queued` with its
 *   job in one transaction; `runJob` runs it on whichever instance's worker takes the job, and keeps its answer;
 * - `cancel`: a queued execution is canceled.
 *
 * Refusals before an execution exists (no such integration, the tenant's concurrent executes used up) are thrown as
 * ApiErrors; everything after is answered and recorded.
 */
export class ExecutionService {
  readonly #ctx: AppContext;
  readonly #queue: JobQueue;
  readonly #slots: TenantConcurrency;
  /**
   * Decrypted integrations and the matchers of their secrets, per stored object (which the integration cache keeps
   * while it is current, so this holds no more than that cache does).
   */
  readonly #resolvedIntegrations = new WeakMap<StoredIntegration, Resolved>();
  /** Matchers by secret set: a stored object is read anew every second, its secrets' matcher is not compiled anew. */
  readonly #matchers = new SecretMatcherCache();

  constructor(ctx: AppContext, queue: JobQueue) {
    this.#ctx = ctx;
    this.#queue = queue;
    this.#slots = new TenantConcurrency(ctx.config.tenantConcurrency);
  }

  /**
   * A synchronous call: run within IX_EXECUTE_DEADLINE_SECONDS, answered, recorded. The slot is given back by a chained
   * callback, not an async function's `finally`: a suspended async function keeps its frame for the whole call.
   */
  execute(call: ExecuteCall): Promise<ExecuteAnswer> {
    // Storage that cannot take this call's record now: refused before anything is sent (docs/execute.md#when-storage-fails).
    if (!this.#ctx.storageHealth.available) return Promise.reject(storageUnavailable());
    const release = this.#slots.tryAcquire(call.tenantId);
    if (!release) {
      const refused = new ApiError(
        'rate_limited',
        `This tenant already has ${this.#slots.limit} executes running on this instance; retry when one has finished.`,
        { reason: 'concurrency', limit: this.#slots.limit },
      );
      refused.retryAfterSeconds = 1;
      return Promise.reject(refused);
    }
    // Whatever the run throws, even before its first await, ends as a rejection after the release.
    return new Promise<ExecuteAnswer>((resolve) =>
      resolve(tracingOn() ? traceExecute(call, () => this.#executeNow(call)) : this.#executeNow(call)),
    ).finally(release);
  }

  /**
   * Chained callbacks, not an async function: its frame would be held, suspended, for the whole upstream wait; the
   * callback that waits for the outcome holds only what it reads.
   */
  #executeNow(call: ExecuteCall): Promise<ExecuteAnswer> {
    return this.#integration(call).then((stored) => {
      const limit = maxConcurrencyOf(stored);
      if (limit === undefined) return this.#executeStored(call, stored);
      // One of the integration's slots on this instance, waited for up to 1 s (docs/resilience.md#concurrency).
      const key = integrationKey(call.tenantId, stored.id);
      return this.#ctx.integrationSlots.acquire(key, limit, { waitMs: 1000 }).then((release) => {
        if (!release) {
          this.#ctx.resilience.concurrencyFull(stored.connector, 'refused');
          throw concurrencyRefusal(stored.id, limit);
        }
        return this.#executeStored(call, stored).finally(release);
      });
    });
  }

  /** A synchronous call of a found integration, with its slot (if it has a max_concurrency): run, answered, recorded. */
  #executeStored(call: ExecuteCall, stored: StoredIntegration): Promise<ExecuteAnswer> {
    // Taken at the start, so that the log's newest-first order is the order the calls began in.
    const executionId = newExecutionId();
    const startedAt = nowIso();
    return this.#run(call, stored, executionId, this.#ctx.config.executeDeadlineSeconds).then((outcome) => {
      const reply = replyFor(outcome, call.requestId, call.log);
      this.#record(call, outcome, reply, startedAt, 'sync');
      return answerOf(outcome, reply);
    });
  }

  /**
   * An async call: checked as the synchronous call would be (its failure is answered now, and recorded), then stored
   * as `queued` with its job in one transaction: both or neither.
   */
  async accept(call: ExecuteCall): Promise<Acceptance> {
    if (!this.#ctx.storageHealth.available) throw storageUnavailable();
    const stored = await this.#integration(call);
    // One tenant's backlog is bounded, so that it cannot fill the queue every tenant's calls wait in (docs/limits.md).
    const cap = this.#ctx.config.tenantQueuedMax;
    if ((await queuedOf(this.#ctx.storage.db, call.tenantId, cap)) >= cap) {
      const refused = new ApiError(
        'rate_limited',
        `This tenant already has ${cap} async executions queued (IX_TENANT_QUEUED_MAX); retry when some have run.`,
        { reason: 'queue', limit: cap },
      );
      refused.retryAfterSeconds = 5;
      throw refused;
    }
    const executionId = newExecutionId();
    const startedAt = nowIso();
    const started = performance.now();
    const budget = this.#budget(call, this.#ctx.config.executeDeadlineSeconds, started);
    let bound: BoundRun | undefined;
    try {
      bound = this.#bind(call, stored, budget);
      bound.accepting = true;
      await checkWithConnection(bound.definition, bound.connection, call.operation, call.fields);
    } catch (thrown) {
      const outcome = failedBeforeRun(executionId, stored.connector, thrown, {
        upstreamMs: budget.upstreamMs,
        totalMs: performance.now() - started,
        secrets: bound?.redaction() ?? SecretMatcher.none,
      });
      const reply = replyFor(outcome, call.requestId, call.log);
      this.#record(call, outcome, reply, startedAt, 'async');
      return { accepted: false, answer: answerOf(outcome, reply) };
    }
    const request: SealedRequest = {
      integration_id: call.integrationId,
      operation: call.operation,
      fields: call.fields,
      key_id: call.keyId,
      user_id: call.userId,
      request_id: call.requestId,
    };
    const { masterKey, storage } = this.#ctx;
    const job: ExecutionJob = {
      tenant_id: call.tenantId,
      execution_id: executionId,
      sealed: encryptSecret(masterKey, JSON.stringify(request), sealContext(call.tenantId, executionId)),
    };
    await storage.db.transaction().execute(async (trx) => {
      await insertQueuedExecution(trx, call.tenantId, {
        id: executionId,
        integration_id: stored.id,
        connector: stored.connector,
        operation: call.operation,
        mode: 'async',
        status: 'queued',
        http_status: null,
        error_code: null,
        error_message: null,
        error_details: null,
        message_count: 0,
        duration_ms: 0,
        attempts: 0,
        api_key_id: call.keyId,
        user_id: call.userId,
        request_id: call.requestId,
        started_at: startedAt,
        finished_at: null,
      });
      await this.#queue.send('executions', job, { db: trx, fairKey: call.tenantId });
    });
    this.#queue.committed('executions');
    return { accepted: true, executionId };
  }

  /**
   * Runs the job of an async execution (a worker of the queue calls it), exactly once in effect:
   * - it claims the execution (`queued` → `running`) in one conditional update: a canceled or finished one is left;
   * - one found `running` was cut short by its process dying: it runs again if it can have changed nothing upstream
   *   (`receive`, `test`, a batch of receives, a sync without outbound part); otherwise it ends
   *   `upstream_outcome_unknown`, and a `send` is never sent twice;
   * - its answer is kept as `result` for IX_RESULT_RETENTION_HOURS, and its event goes to the webhooks.
   * A run logs one line when it starts and one when it ends, each with the execution's ids and the accepting request's
   * `request_id` (so do the lines written within it); a run deferred or not made, one line at `debug`.
   * It throws only when storage fails, and the queue runs it again.
   */
  async runJob(job: QueueJob<ExecutionJob>, appLog: FastifyBaseLogger): Promise<Deferral | undefined> {
    const { tenant_id: tenantId, execution_id: executionId } = job.data;
    const { storage, masterKey } = this.#ctx;
    const request = JSON.parse(decryptSecret(masterKey, job.data.sealed, sealContext(tenantId, executionId))) as SealedRequest;
    const call: ExecuteCall = {
      tenantId,
      keyId: request.key_id,
      userId: request.user_id,
      integrationId: request.integration_id,
      operation: request.operation,
      fields: request.fields,
      requestId: request.request_id,
      log: appLog.child({
        execution_id: executionId,
        tenant_id: tenantId,
        integration_id: request.integration_id,
        operation: request.operation,
        request_id: request.request_id,
      }),
    };
    const stored = await findIntegration(storage.db, tenantId, call.integrationId);
    // The integration's max_concurrency: a run that finds its slots taken waits in the queue (deferred, not claimed), so
    // it holds no worker that another integration's executions could use (docs/resilience.md#concurrency).
    const limit = stored && maxConcurrencyOf(stored);
    const release = limit
      ? this.#ctx.integrationSlots.tryAcquire(integrationKey(tenantId, call.integrationId), limit)
      : undefined;
    if (stored && limit && !release) {
      this.#ctx.resilience.concurrencyFull(stored.connector, 'deferred');
      const deferMs = 250 + Math.floor(Math.random() * 750);
      call.log.debug(
        { max_concurrency: limit, defer_ms: deferMs },
        'async execution deferred: its integration is at max_concurrency',
      );
      return { deferMs };
    }
    try {
      await this.#runClaimed(call, executionId, stored);
    } finally {
      release?.();
    }
    return undefined;
  }

  /** runJob's part after a slot of the integration was had: the claim, the run, its end. */
  async #runClaimed(call: ExecuteCall, executionId: string, stored: StoredIntegration | undefined): Promise<void> {
    const { tenantId } = call;
    const { storage, config } = this.#ctx;
    // The run's own token: a claim whose answer storage lost is asked again with it, and found to be this run's.
    const token = randomUUID();
    const claim = await this.#whenStored(() => claimExecution(storage.db, tenantId, executionId, token));
    const execution = claim.execution;
    if (!execution) return;
    // The run's number: 1, or more when runs before it were cut short.
    let run = claim.runs;
    if (claim.claimed) {
      this.#ctx.queueMetrics.executionStarted((Date.now() - Date.parse(execution.started_at)) / 1000);
    } else {
      if (execution.status !== 'running') {
        call.log.debug({ status: execution.status }, `async execution not run: it is ${execution.status} already`);
        return;
      }
      if (!mayRunTwice(call.operation, call.fields)) {
        // `attempts`: the runs begun, the last of them cut short while its request may have been on its way.
        const unknown = new ApiError('upstream_outcome_unknown', undefined, { attempts: claim.runs });
        // Its earlier run may have written: the record says so (reachedUpstream), as that run would have.
        const outcome = {
          ...failedBeforeRun(executionId, execution.connector, unknown),
          reachedUpstream: true,
          attempts: claim.runs,
        };
        // Only the end's line: this ends the run that was cut short, whose start was logged by the process that died.
        await this.#finish(call, execution, outcome, replyFor(outcome, call.requestId, call.log), run);
        return;
      }
      if (!(await this.#whenStored(() => reclaimExecution(storage.db, tenantId, executionId, claim.runs, token)))) {
        call.log.debug('async execution not run: another worker runs it again');
        return;
      }
      run = claim.runs + 1;
    }
    call.log.info({ connector: execution.connector, run }, 'async execution started');
    const deleted = `No integration ${call.integrationId}: it was deleted after the call was accepted.`;
    const outcome = stored
      ? await this.#run(call, stored, executionId, config.asyncDeadlineSeconds)
      : failedBeforeRun(executionId, execution.connector, new ApiError('not_found', deleted));
    await this.#finish(call, execution, outcome, replyFor(outcome, call.requestId, call.log), run);
  }

  /**
   * The upstream's schema as the integration's connector knows it (`GET /integrations/{id}/schema`): read on first use
   * within IX_EXECUTE_DEADLINE_SECONDS, then cached; secrets redacted. A connector without schemas (SOAP) is
   * `400 unsupported_operation`.
   */
  async schema(tenantId: string, integrationId: string): Promise<SchemaView> {
    const stored = await findIntegration(this.#ctx.storage.db, tenantId, integrationId);
    if (!stored) throw new ApiError('not_found', `No integration ${integrationId}.`);
    const budget = new ExecuteBudget({
      maxBytes: this.#ctx.config.executeMaxBytes,
      deadlineMs: this.#ctx.config.executeDeadlineSeconds * 1000,
    });
    const run = new BoundRun(this.#ctx.connectors, this.#resolved(this.#definition(stored), stored), budget);
    budget.retry = run.retry;
    const { connection, definition } = run;
    if (!connection.schema) {
      throw new ApiError('unsupported_operation', `The ${definition.id} connector has no schema to show.`, {
        connector: definition.id,
      });
    }
    const view = await connection.schema();
    return redactReply(view, run.redaction()).value as SchemaView;
  }

  /** Cancels a queued execution (docs/async.md#cancel); a running or finished one is `409 conflict`. */
  async cancel(tenantId: string, executionId: string): Promise<Execution> {
    let delivering = false;
    const { canceled, execution } = await this.#ctx.storage.db.transaction().execute(async (trx) => {
      const ended = await cancelExecution(trx, tenantId, executionId, nowIso());
      if (ended.canceled && ended.execution) delivering = await this.#storeEvent(trx, tenantId, ended.execution, () => null);
      return ended;
    });
    if (delivering) this.#queue.committed('webhook-deliveries');
    if (!execution) throw new ApiError('not_found', `No execution ${executionId}.`);
    if (!canceled) {
      const message = `Execution ${executionId} is ${execution.status}; only a queued execution can be canceled.`;
      throw new ApiError('conflict', message, { status: execution.status });
    }
    return execution;
  }

  /**
   * The event of an async end, within the transaction that stores that end (docs/async.md#webhooks). The answer is read
   * back into a value (`result()`) only for a tenant with endpoints.
   */
  #storeEvent(trx: Db, tenantId: string, execution: Execution, result: () => unknown): Promise<boolean> {
    const events = this.#ctx.events;
    if (!eventTypeOf(execution) || !events.wanted(tenantId)) return Promise.resolve(false);
    return events.storeWithin(trx, tenantId, execution, result());
  }

  /** Ends an async execution (run `run`): its end and its event stored, and the end's log line. */
  async #finish(call: ExecuteCall, execution: Execution, outcome: Outcome, reply: Reply, run: number): Promise<void> {
    const { storage, config } = this.#ctx;
    const text = bodyText(reply.body);
    const finishedAt = new Date();
    const finished: Execution = { ...execution, ...endOf(outcome, reply), finished_at: finishedAt.toISOString() };
    const expiresAt = new Date(finishedAt.getTime() + config.resultRetentionHours * 3_600_000).toISOString();
    // The end and its event in one transaction: a crash between them cannot lose the event. Storage that cannot take
    // them now is waited for, the answer held by this run: the execution ends with the answer the upstream gave, not
    // as unknown (docs/async.md#when-storage-fails).
    let delivering = false;
    let ended = false;
    await this.#whenStored(() =>
      storage.db.transaction().execute(async (trx) => {
        ended = await finishExecution(trx, call.tenantId, finished, { result: text, result_expires_at: expiresAt });
        delivering = ended && (await this.#storeEvent(trx, call.tenantId, finished, () => JSON.parse(text)));
      }),
    );
    if (delivering) this.#queue.committed('webhook-deliveries');
    logRunEnd(call.log, finished, run, ended);
  }

  /**
   * Runs `write` until storage takes it: a storage error waits for storage's return (StorageHealth) and tries again;
   * any other error, or the app closing, is thrown (the job then runs again). For an async run's own writes, which
   * are safe to repeat: its claim (with its token) and its end (conditional on `running`).
   */
  async #whenStored<T>(write: () => Promise<T>): Promise<T> {
    const health = this.#ctx.storageHealth;
    for (;;) {
      try {
        return await write();
      } catch (error) {
        if (!isStorageUnavailable(error) || health.closed) throw error;
        health.failed(error);
        await health.returned();
      }
    }
  }

  #record(call: ExecuteCall, outcome: Outcome, reply: Reply, startedAt: string, mode: 'sync' | 'async'): void {
    const execution: Execution = {
      id: outcome.executionId,
      integration_id: call.integrationId,
      connector: outcome.connector,
      operation: call.operation,
      mode,
      ...endOf(outcome, reply),
      api_key_id: call.keyId,
      user_id: call.userId,
      request_id: call.requestId,
      started_at: startedAt,
      finished_at: nowIso(),
    };
    this.#ctx.executions.record(call.tenantId, execution);
    // Events only for a tenant with endpoints; a synchronous call's event carries its record, never its answer.
    const events = this.#ctx.events;
    if (events.wanted(call.tenantId)) events.finished(call.tenantId, execution);
  }

  async #integration(call: ExecuteCall): Promise<StoredIntegration> {
    const { storage } = this.#ctx;
    const stored = await this.#ctx.integrations.get(call.tenantId, call.integrationId, () =>
      findIntegration(storage.db, call.tenantId, call.integrationId),
    );
    if (!stored) throw new ApiError('not_found', `No integration ${call.integrationId}.`);
    return stored;
  }

  #budget(call: ExecuteCall, deadlineSeconds: number, started: number): ExecuteBudget {
    const budget = new ExecuteBudget({ maxBytes: this.#ctx.config.executeMaxBytes, deadlineMs: deadlineSeconds * 1000 }, started);
    budget.takeTurn = () => this.#ctx.turns.take(call.tenantId);
    return budget;
  }

  #resolved(definition: ConnectorDefinition, stored: StoredIntegration): Resolved {
    let resolved = this.#resolvedIntegrations.get(stored);
    if (!resolved || resolved.definition !== definition) {
      const integration = resolveIntegration(definition, stored, this.#ctx.masterKey);
      const shared = this.#ctx.connectors;
      resolved = {
        definition,
        integration,
        secrets: this.#matchers.get(secretValues(definition, integration)),
        matchers: this.#matchers,
        credentials: upstreamCredentials(integration, {
          shorthand: definition.shorthandAuth?.(integration.config),
          oauth2: shared.oauth2,
          tokenRequest: {
            timeoutMs: integration.settings.timeoutMs,
            maxBodyBytes: shared.upstreamMaxBytes,
          },
        }),
        tls: integration.settings.tls,
        retry: integration.settings.retry,
      };
      this.#resolvedIntegrations.set(stored, resolved);
    }
    return resolved;
  }

  /** The stored integration's connector, or integration_misconfigured when this service no longer offers it. */
  #definition(stored: StoredIntegration): ConnectorDefinition {
    const definition = this.#ctx.registry.get(stored.connector);
    if (!definition) throw new ApiError('integration_misconfigured', `Connector ${stored.connector} is no longer offered.`);
    return definition;
  }

  /** The integration's connector bound for one run, with its credentials and dispatcher; throws when it cannot run. */
  #bind(call: ExecuteCall, stored: StoredIntegration, budget: ExecuteBudget): BoundRun {
    const definition = this.#definition(stored);
    // The operation and the fields' schemas are checked before the integration is decrypted. What the connector finds
    // wrong comes after, from the connection (`prepare`): connect does no I/O, so such a request costs no upstream call.
    checkExecuteRequest(definition, call.operation, call.fields);
    return new BoundRun(this.#ctx.connectors, this.#resolved(definition, stored), budget);
  }

  /**
   * Runs one execution within `deadlineSeconds`; never rejects: a failure is the outcome's. Chained callbacks, not an
   * async function, for the frame the upstream wait would hold.
   */
  #run(call: ExecuteCall, stored: StoredIntegration, executionId: string, deadlineSeconds: number): Promise<Outcome> {
    const started = performance.now();
    const budget = this.#budget(call, deadlineSeconds, started);
    const { breakers, resilience } = this.#ctx;
    const key = integrationKey(call.tenantId, stored.id);
    const connector = stored.connector;
    budget.onRetry = (kind) => resilience.retried(connector, kind);
    // The integration's circuit breaker is asked before the call's first upstream request (the transport's gate): a
    // call its own checks refuse never asks it. `test` always goes through and changes nothing in it.
    let admission: Extract<Admission, { ok: true }> | undefined;
    // A call the open breaker refused tried the upstream 0 times (its record's `attempts`).
    let refusedOpen = false;
    if (call.operation !== 'test') {
      budget.gate = () =>
        breakers.admit(key).then((admitted) => {
          if (!admitted.ok) {
            refusedOpen = true;
            resilience.refusedOpen(connector);
            throw circuitOpen(stored.id, admitted);
          }
          admission = admitted;
        });
    }
    let bound: BoundRun | undefined;
    let running: Promise<ConnectorResult>;
    try {
      const run = this.#bind(call, stored, budget);
      bound = run;
      budget.retry = run.retry;
      running = runExecute(run.definition, run.connection, call.operation, call.fields, budget);
      if (call.operation === 'test') running = running.then((ran) => withCertificateWarnings(ran, run.tls));
    } catch (error) {
      running = Promise.reject(error);
    }
    if (call.operation === 'test') {
      running = running.then(
        (ran) => breakers.state(key).then((circuit) => withCircuit(ran, circuit)),
        (thrown: unknown) =>
          breakers.state(key).then((circuit) => {
            throw failureWithCircuit(thrown, circuit);
          }),
      );
    }
    const outcome = (result: ConnectorResult | undefined, thrown: unknown): Outcome => ({
      executionId,
      connector,
      result,
      thrown,
      reachedUpstream: budget.wroteUpstream,
      attempts: refusedOpen ? 0 : budget.attempts,
      upstreamMs: budget.upstreamMs,
      totalMs: performance.now() - started,
      secrets: bound?.redaction() ?? SecretMatcher.none,
    });
    // The call counts once in its breaker, after its retries: an outage (no connection, 429, 503, a timeout, a reset,
    // 502, 504) as a failure, any other end as the upstream answering. A success of a quiet breaker changes nothing.
    const settled = (result: ConnectorResult | undefined, thrown: unknown): Outcome | Promise<Outcome> => {
      const admitted = admission;
      if (admitted === undefined) return outcome(result, thrown);
      const success = result !== undefined || !isUpstreamOutage(failureKind(thrown));
      if (success && admitted.quiet) return outcome(result, thrown);
      return breakers.record(key, { success, trial: admitted.trial }).then((opened) => {
        if (opened) resilience.opened(connector);
        return outcome(result, thrown);
      });
    };
    return running.then(
      (result) => settled(result, undefined),
      (thrown: unknown) => settled(undefined, thrown),
    );
  }
}

/**
 * The outcome of an execution that failed before its run sent anything: refused when accepted, its integration gone,
 * or cut short by its process (the caller then says the write may have reached the upstream).
 */
function failedBeforeRun(
  executionId: string,
  connector: string,
  thrown: unknown,
  spent: Pick<Outcome, 'upstreamMs' | 'totalMs' | 'secrets'> = { upstreamMs: 0, totalMs: 0, secrets: SecretMatcher.none },
): Outcome {
  return { executionId, connector, result: undefined, thrown, reachedUpstream: false, attempts: 1, ...spent };
}

/**
 * The line of an async run's end, at the level a synchronous call's request line would have (levelOf): `info`, `warn`
 * for an upstream's failure, `error` for ours. The error's message and details stay in the record (GET
 * /executions/{id}): they can hold an upstream's text. A run whose execution another run had ended meanwhile changed
 * nothing: `warn`, it says so.
 */
function logRunEnd(log: FastifyBaseLogger, finished: Execution, run: number, ended: boolean): void {
  const line = {
    connector: finished.connector,
    status: finished.status,
    http_status: finished.http_status,
    error_code: finished.error_code,
    duration_ms: finished.duration_ms,
    attempts: finished.attempts,
    run,
  };
  if (!ended) {
    log.warn(line, 'async execution run ended after another run had ended it: this outcome is not kept');
    return;
  }
  const level = levelOf(finished.http_status ?? 0, finished.error_code);
  log[level](line, `async execution ${finished.status}${finished.error_code ? ` ${finished.error_code}` : ''}`);
}

/** What an execution's record says of how it ended: the reply's status, code, message and details, and its time. */
function endOf(outcome: Outcome, reply: Reply) {
  return {
    status: reply.status < 300 ? ('succeeded' as const) : ('failed' as const),
    http_status: reply.status,
    error_code: reply.errorCode,
    error_message: reply.errorMessage,
    error_details: reply.errorDetails,
    message_count: reply.messageCount,
    duration_ms: Math.round(outcome.totalMs),
    attempts: outcome.attempts,
  };
}

function answerOf(outcome: Outcome, reply: Reply): ExecuteAnswer {
  return {
    status: reply.status,
    body: reply.body,
    reachedUpstream: outcome.reachedUpstream,
    upstreamMs: outcome.upstreamMs,
    totalMs: outcome.totalMs,
    executionId: outcome.executionId,
    connector: outcome.connector,
    errorCode: reply.errorCode,
    retryAfterSeconds: reply.retryAfterSeconds,
  };
}
