import type { FastifyBaseLogger } from 'fastify';
import type { CatalogOperation } from '../connectors/catalog.ts';
import type { SchemaView, SharedConnectorContext } from '../connectors/connector.ts';
import type { ConnectorRegistry } from '../connectors/registry.ts';
import { ApiError, type ValidationIssue } from '../core/errors.ts';
import { nowIso } from '../core/ids.ts';
import type { IntegrationCache } from '../integrations/cache.ts';
import { catalogSettings } from '../integrations/catalog-settings.ts';
import type { Deferral, JobQueue, QueueJob } from '../queue/job-queue.ts';
import type { QueueMetrics } from '../queue/metrics.ts';
import type { CircuitBreakers } from '../resilience/breaker.ts';
import type { FairTurns } from '../resilience/fair-turns.ts';
import type { IntegrationConcurrency } from '../resilience/integration-concurrency.ts';
import type { ResilienceMetrics } from '../resilience/metrics.ts';
import { redactReply } from '../secrets/redact.ts';
import type { StorageHealth } from '../storage/availability.ts';
import type { Db } from '../storage/database.ts';
import type { ExecutionLog } from '../storage/execution-log.ts';
import type { Execution } from '../storage/execution-rows.ts';
import { newExecutionId } from '../storage/executions.ts';
import type { StoredIntegration } from '../storage/integrations.ts';
import { traceExecute, tracingOn } from '../telemetry/spans.ts';
import { ExecuteBudget } from '../transport/budget.ts';
import { Admission } from './admission.ts';
import { type AcceptDeps, acceptCall } from './async-accept.ts';
import { AsyncRuns } from './async-runs.ts';
import { type Acceptance, answerOf, type ExecuteAnswer, type ExecuteCall, type ExecutionJob } from './call.ts';
import type { ExecutionEvents } from './events.ts';
import { ExecutionRecorder } from './recorder.ts';
import { replyFor } from './reply.ts';
import { IntegrationResolver } from './resolver.ts';
import { ExecutionRunner } from './runner.ts';

export type { Acceptance, ExecuteAnswer, ExecuteCall, ExecutionJob } from './call.ts';

/** Everything the execution core uses, named: the composition root (app.ts) hands it over, no wider context. */
export interface ExecutionDeps {
  config: {
    tenantConcurrency: number;
    tenantQueuedMax: number;
    executeDeadlineSeconds: number;
    executeMaxBytes: number;
    asyncDeadlineSeconds: number;
    resultRetentionHours: number;
  };
  db: Db;
  masterKey: Buffer;
  registry: ConnectorRegistry;
  /** The plumbing every connection runs with: dispatchers, workers, OAuth2 sources, limits. */
  shared: SharedConnectorContext;
  integrations: IntegrationCache;
  storageHealth: StorageHealth;
  turns: FairTurns;
  breakers: CircuitBreakers;
  integrationSlots: IntegrationConcurrency;
  resilience: ResilienceMetrics;
  executions: ExecutionLog;
  events: ExecutionEvents;
  queue: JobQueue;
  queueMetrics: QueueMetrics;
}

/**
 * The execute path, end to end (docs/execute.md#what-happens-in-order), as one facade over its parts, each with the
 * dependencies it names: admission (the tenant's and the integration's slots, storage able to take the record) →
 * resolver (the stored integration, decrypted and bound for a run) → runner (the run within one budget, the circuit
 * breaker) → `replyFor` (the answer in the one shape, secrets redacted) → recorder (the executions log, the events).
 * Async calls: `acceptCall` checks and queues them, `AsyncRuns` runs, ends and cancels them. It knows nothing of HTTP
 * routes, nor of GraphQL or SOAP.
 */
export class ExecutionService {
  readonly #deps: ExecutionDeps;
  readonly #admission: Admission;
  readonly #resolver: IntegrationResolver;
  readonly #runner: ExecutionRunner;
  readonly #recorder: ExecutionRecorder;
  readonly #async: AsyncRuns;
  readonly #accepting: AcceptDeps;

  constructor(deps: ExecutionDeps) {
    const { config } = deps;
    this.#deps = deps;
    this.#admission = new Admission({ ...deps, tenantConcurrency: config.tenantConcurrency });
    this.#resolver = new IntegrationResolver(deps);
    this.#runner = new ExecutionRunner({ ...deps, executeMaxBytes: config.executeMaxBytes, resolver: this.#resolver });
    this.#recorder = new ExecutionRecorder(deps);
    // Each part gets the settings it names, not the whole config: Config has fields of the same names (masterKey).
    const parts = { resolver: this.#resolver, runner: this.#runner, recorder: this.#recorder };
    this.#async = new AsyncRuns({
      ...deps,
      ...parts,
      asyncDeadlineSeconds: config.asyncDeadlineSeconds,
      resultRetentionHours: config.resultRetentionHours,
    });
    this.#accepting = {
      ...deps,
      ...parts,
      tenantQueuedMax: config.tenantQueuedMax,
      executeDeadlineSeconds: config.executeDeadlineSeconds,
    };
  }

  /**
   * A synchronous call: run within IX_EXECUTE_DEADLINE_SECONDS, answered, recorded. The slot is given back by a chained
   * callback, not an async function's `finally`: a suspended async function keeps its frame for the whole call.
   */
  execute(call: ExecuteCall): Promise<ExecuteAnswer> {
    let release: () => void;
    try {
      release = this.#admission.tenant(call.tenantId);
    } catch (refused) {
      return Promise.reject(refused);
    }
    // Whatever the run throws, even before its first await, ends as a rejection after the release.
    return new Promise<ExecuteAnswer>((resolve) =>
      resolve(tracingOn() ? traceExecute(call, () => this.#executeNow(call)) : this.#executeNow(call)),
    ).finally(release);
  }

  /** An async call: checked, then queued (docs/async.md#accepting-a-call). */
  accept(call: ExecuteCall): Promise<Acceptance> {
    return acceptCall(this.#accepting, call);
  }

  /** Runs an async execution's job (a worker of the queue calls it). */
  runJob(job: QueueJob<ExecutionJob>, log: FastifyBaseLogger): Promise<Deferral | undefined> {
    return this.#async.runJob(job, log);
  }

  /** Cancels a queued execution; a running or finished one is `409 conflict`. */
  cancel(tenantId: string, executionId: string): Promise<Execution> {
    return this.#async.cancel(tenantId, executionId);
  }

  /**
   * The upstream's schema as the integration's connector knows it (`GET /integrations/{id}/schema`): read on first use
   * within IX_EXECUTE_DEADLINE_SECONDS, then cached; secrets redacted. A connector without schemas (SOAP) is
   * `400 unsupported_operation`.
   */
  async schema(tenantId: string, integrationId: string): Promise<SchemaView> {
    const run = this.#bind(await this.integration(tenantId, integrationId));
    const { connection, definition } = run;
    if (!connection.schema) {
      throw new ApiError('unsupported_operation', `The ${definition.id} connector has no schema to show.`, {
        connector: definition.id,
      });
    }
    const view = await connection.schema();
    return redactReply(view, run.redaction()).value as SchemaView;
  }

  /** A stored integration of the tenant, or `not_found`. */
  async integration(tenantId: string, integrationId: string): Promise<StoredIntegration> {
    const stored = await this.#resolver.find(tenantId, integrationId);
    if (!stored) throw new ApiError('not_found', `No integration ${integrationId}.`);
    return stored;
  }

  /**
   * A stored integration's operation catalogue (docs/catalog.md) as its connector reads it, with its `catalog` settings: the
   * WSDL or the GraphQL schema read as a call reads them (within IX_EXECUTE_DEADLINE_SECONDS, then cached). A
   * connector without a catalogue has no entries.
   */
  async catalog(stored: StoredIntegration): Promise<CatalogOperation[]> {
    const run = this.#bind(stored);
    return (await run.connection.catalog?.(catalogSettings(stored.catalog))) ?? [];
  }

  /**
   * The problems of `documents` (a GraphQL integration's saved operations) against the upstream's schema as `stored`'s
   * connection has it kept now: a PATCH of the catalogue is checked by the schema its calls are checked by.
   */
  catalogDocumentIssues(stored: StoredIntegration, documents: unknown): ValidationIssue[] {
    return this.#bind(stored).connection.catalogDocumentIssues?.(documents) ?? [];
  }

  /** An integration resolved and bound to a budget of its own: for what reads the upstream outside a call. */
  #bind(stored: StoredIntegration) {
    const { executeMaxBytes: maxBytes, executeDeadlineSeconds } = this.#deps.config;
    const resolved = this.#resolver.resolve(stored);
    const limits = { maxBytes, deadlineMs: executeDeadlineSeconds * 1000 };
    return this.#resolver.bind(resolved, new ExecuteBudget(limits, { retry: resolved.integration.settings.retry }));
  }

  /**
   * Chained callbacks, not an async function: its frame would be held, suspended, for the whole upstream wait; the
   * callback that waits for the outcome holds only what it reads.
   */
  #executeNow(call: ExecuteCall): Promise<ExecuteAnswer> {
    return this.#resolver.lookUp(call.tenantId, call.integrationId).then((stored) => {
      const slot = this.#admission.integration(call.tenantId, stored);
      if (slot === undefined) return this.#executeStored(call, stored);
      return slot.then((release) => this.#executeStored(call, stored).finally(release));
    });
  }

  /** A synchronous call of a found integration, with its slot (if it has a max_concurrency): run, answered, recorded. */
  #executeStored(call: ExecuteCall, stored: StoredIntegration): Promise<ExecuteAnswer> {
    // Taken at the start, so that the log's newest-first order is the order the calls began in.
    const executionId = newExecutionId();
    const startedAt = nowIso();
    return this.#runner.run(call, stored, executionId, this.#deps.config.executeDeadlineSeconds).then((outcome) => {
      const reply = replyFor(outcome, call.requestId, call.log);
      this.#recorder.record(call, outcome, reply, startedAt, 'sync');
      return answerOf(outcome, reply);
    });
  }
}
