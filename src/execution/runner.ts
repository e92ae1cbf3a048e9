import type { ConnectorResult } from '../connectors/connector.ts';
import { ApiError } from '../core/errors.ts';
import { type TlsConfig, tlsWarnings } from '../egress/tls.ts';
import type { Admission, CircuitBreakers, CircuitState } from '../resilience/breaker.ts';
import { integrationKey } from '../resilience/config.ts';
import type { FairTurns } from '../resilience/fair-turns.ts';
import type { ResilienceMetrics } from '../resilience/metrics.ts';
import { type FailureKind, failureKind, isUpstreamOutage } from '../resilience/retry.ts';
import { SecretMatcher } from '../secrets/secret-matcher.ts';
import type { StoredIntegration } from '../storage/integrations.ts';
import { ExecuteBudget, plainUpstream, type UpstreamPolicy } from '../transport/budget.ts';
import type { BoundRun } from './bound-run.ts';
import type { ExecuteCall } from './call.ts';
import { runExecute } from './executor.ts';
import type { Outcome } from './reply.ts';
import type { IntegrationResolver } from './resolver.ts';

/** What running one execution needs, named. */
export interface RunnerDeps {
  /** IX_EXECUTE_MAX_BYTES: upstream bytes of one execute, all its requests together. */
  executeMaxBytes: number;
  turns: FairTurns;
  breakers: CircuitBreakers;
  resilience: ResilienceMetrics;
  resolver: IntegrationResolver;
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

/** A call refused because its integration's breaker is open (docs/resilience.md#circuit-breaker). */
function circuitOpen(integrationId: string, admission: Extract<Admission, { ok: false }>): ApiError {
  return new ApiError(
    'upstream_circuit_open',
    `Calls to integration ${integrationId} failed one after another, so its circuit breaker is open: calls fail at once for ${admission.retryAfterSeconds} s more, then one trial call goes through.`,
    { circuit: 'open', attempts: 0 },
    { retryAfterSeconds: admission.retryAfterSeconds },
  );
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
 * The outcome of an execution that failed before its run sent anything: refused when accepted, its integration gone,
 * or cut short by its process (the caller then says the write may have reached the upstream).
 */
export function failedBeforeRun(
  executionId: string,
  connector: string,
  thrown: unknown,
  spent: Pick<Outcome, 'upstreamMs' | 'totalMs' | 'secrets'> = { upstreamMs: 0, totalMs: 0, secrets: SecretMatcher.none },
): Outcome {
  return { executionId, connector, result: undefined, thrown, reachedUpstream: false, attempts: 1, ...spent };
}

/**
 * Runs one execution of a stored integration, within a deadline, to its `Outcome` (docs/execute.md#what-happens-in-order):
 * the connection bound, the request checked, run by the executor within one budget (bytes and deadline, the tenant's
 * fair turns), the integration's circuit breaker asked before the first upstream request and told the end, and for
 * `test` the breaker's state and the certificates' warnings added. It never rejects: a failure is the outcome's.
 */
export class ExecutionRunner {
  readonly #deps: RunnerDeps;

  constructor(deps: RunnerDeps) {
    this.#deps = deps;
  }

  /**
   * A budget of IX_EXECUTE_MAX_BYTES and `deadlineSeconds` from `started`, whose upstream work takes the tenant's turns
   * and follows `policy` (retries, the breaker); without one, each request goes out once.
   */
  budget(
    tenantId: string,
    deadlineSeconds: number,
    started = performance.now(),
    policy: Omit<UpstreamPolicy, 'takeTurn'> = plainUpstream,
  ): ExecuteBudget {
    const { turns, executeMaxBytes: maxBytes } = this.#deps;
    const takeTurn = () => turns.take(tenantId);
    return new ExecuteBudget({ maxBytes, deadlineMs: deadlineSeconds * 1000 }, { ...policy, takeTurn }, started);
  }

  /** Chained callbacks, not an async function, for the frame the upstream wait would hold. */
  run(call: ExecuteCall, stored: StoredIntegration, executionId: string, deadlineSeconds: number): Promise<Outcome> {
    const started = performance.now();
    const { breakers, resilience, resolver } = this.#deps;
    const key = integrationKey(call.tenantId, stored.id);
    const connector = stored.connector;
    // The integration's circuit breaker is asked before the call's first upstream request (the policy's admit): a
    // call its own checks refuse never asks it. `test` always goes through and changes nothing in it.
    let admission: Extract<Admission, { ok: true }> | undefined;
    // A call the open breaker refused tried the upstream 0 times (its record's `attempts`).
    let refusedOpen = false;
    const admit =
      call.operation === 'test'
        ? undefined
        : () =>
            breakers.admit(key).then((admitted) => {
              if (!admitted.ok) {
                refusedOpen = true;
                resilience.refusedOpen(connector);
                throw circuitOpen(stored.id, admitted);
              }
              admission = admitted;
            });
    const retried = (kind: FailureKind) => resilience.retried(connector, kind);
    // Made once the integration is resolved (its retry settings); a call refused before has spent nothing.
    let budget: ExecuteBudget | undefined;
    let bound: BoundRun | undefined;
    let running: Promise<ConnectorResult>;
    try {
      const resolved = resolver.resolve(stored, call);
      budget = this.budget(call.tenantId, deadlineSeconds, started, {
        retry: resolved.integration.settings.retry,
        admit,
        retried,
      });
      const run = resolver.bind(resolved, budget);
      bound = run;
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
      reachedUpstream: budget?.stats.wroteUpstream ?? false,
      attempts: refusedOpen ? 0 : (budget?.stats.attempts ?? 1),
      upstreamMs: budget?.stats.upstreamMs ?? 0,
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
