import { Counter, type Registry } from 'prom-client';
import type { FailureKind } from './retry.ts';

/** What upstream failures cost, for /metrics (docs/resilience.md#metrics). */
export interface ResilienceMetrics {
  /** A request was tried again after a failure of this kind. */
  retried(connector: string, failure: FailureKind): void;
  /** An integration's circuit breaker opened. */
  opened(connector: string): void;
  /** A call was refused at once: its integration's breaker is open. */
  refusedOpen(connector: string): void;
  /** A call found its integration's `max_concurrency` used up: refused (`429`, synchronous) or deferred (async). */
  concurrencyFull(connector: string, outcome: 'refused' | 'deferred'): void;
}

/**
 * The metrics of retries, breakers and per-integration concurrency in the app's registry. Labels are bounded: the
 * connector, the failure kind and the outcome, never an integration id (ids are per tenant and unbounded; an
 * integration's own state is in the API: `test` reports its breaker).
 */
export function registerResilienceMetrics(registry: Registry): ResilienceMetrics {
  const registers = [registry];
  const retries = new Counter({
    name: 'ix_upstream_retries_total',
    help: 'Upstream requests tried again, by connector and the failure they followed (dns, refused, throttled, unavailable, timeout, reset, bad_gateway, gateway_timeout)',
    labelNames: ['connector', 'failure'] as const,
    registers,
  });
  const openings = new Counter({
    name: 'ix_circuit_breaker_openings_total',
    help: 'Circuit breakers opened (failed calls one after another, or a failed trial), by connector',
    labelNames: ['connector'] as const,
    registers,
  });
  const refusals = new Counter({
    name: 'ix_circuit_breaker_refusals_total',
    help: 'Calls refused at once with upstream_circuit_open, by connector',
    labelNames: ['connector'] as const,
    registers,
  });
  const concurrency = new Counter({
    name: 'ix_integration_concurrency_full_total',
    help: "Calls that found their integration's max_concurrency used up, by connector and outcome: refused (429, synchronous) or deferred (async, waits in the queue)",
    labelNames: ['connector', 'outcome'] as const,
    registers,
  });
  return {
    retried: (connector, failure) => retries.inc({ connector, failure }),
    opened: (connector) => openings.inc({ connector }),
    refusedOpen: (connector) => refusals.inc({ connector }),
    concurrencyFull: (connector, outcome) => concurrency.inc({ connector, outcome }),
  };
}
