import type { FastifyInstance } from 'fastify';
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import type { ConnectorStats } from '../connectors/connector.ts';
import type { StorageHealth } from '../storage/availability.ts';

declare module 'fastify' {
  interface FastifyInstance {
    metrics: Registry;
  }
}

/** Where the gauges read what the app holds, once it exists (the usage recorder, the connectors). */
export interface MetricSources {
  /** Each connector's stats, by connector id (connectors without state are left out). */
  connectorStats(): ReadonlyMap<string, ConnectorStats>;
  /** Seconds the oldest usage count not yet written has waited (0 when none waits). */
  usageFlushLagSeconds(): number;
  /** Requests waiting for their tenant's turn of the event loop (FairTurns). */
  turnsWaiting(): number;
  /** Whether storage takes writes, and what is held until it does (docs/execute.md#when-storage-fails). */
  storage: Pick<StorageHealth, 'available' | 'held' | 'droppedWrites'>;
}

const upstreamBuckets = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

/**
 * A registry per app (tests build many apps in one process): requests by route, executes by connector, operation
 * and outcome, the upstream time of each execute, refusals (rate limits, the IP guard, tenant concurrency), the
 * connectors' caches and the usage writer's lag. Call `watch` once the sources exist; until then the gauges read 0.
 */
export function registerMetrics(app: FastifyInstance): { registry: Registry; watch(sources: MetricSources): void } {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'ix_' });
  const registers = [registry];
  const labelNames = ['method', 'route', 'status'] as const;
  const requests = new Counter({ name: 'ix_http_requests_total', help: 'HTTP requests answered', labelNames, registers });
  const duration = new Histogram({
    name: 'ix_http_request_duration_seconds',
    help: 'Time from request to response',
    labelNames,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers,
  });
  const executes = new Counter({
    name: 'ix_executes_total',
    help: 'Executes recorded, by connector, operation, outcome (succeeded, failed) and error code ("" for a success)',
    labelNames: ['connector', 'operation', 'outcome', 'error_code'] as const,
    registers,
  });
  const upstream = new Histogram({
    name: 'ix_execute_upstream_duration_seconds',
    help: 'Time one execute spent on upstream requests (all its pages, entries, retries and WSDL documents)',
    labelNames: ['connector'] as const,
    buckets: upstreamBuckets,
    registers,
  });
  const refusals = new Counter({
    name: 'ix_refusals_total',
    help: 'Requests refused with 429: rate_limit (a key over its limit), auth_failures (the IP guard), concurrency (a tenant’s executes at once), account_lockout (a sign-in’s account), sign_in_busy (the sign-in password queue)',
    labelNames: ['reason'] as const,
    registers,
  });

  let sources: MetricSources | undefined;
  const perConnector = (name: string, help: string, read: (stats: ConnectorStats) => number) =>
    new Gauge({
      name,
      help,
      labelNames: ['connector'] as const,
      registers,
      collect() {
        this.reset();
        for (const [connector, stats] of sources?.connectorStats() ?? []) this.set({ connector }, read(stats));
      },
    });
  perConnector(
    'ix_connector_cache_hits_total',
    'Calls served from a connector’s cache (SOAP: parsed WSDLs; GraphQL: upstream schemas)',
    (s) => s.cacheHits,
  );
  perConnector(
    'ix_connector_cache_misses_total',
    'Loads into a connector’s cache (SOAP: WSDLs fetched and parsed; GraphQL: introspections)',
    (s) => s.cacheMisses,
  );
  perConnector(
    'ix_connector_cache_entries',
    'Entries in a connector’s cache now (SOAP: parsed WSDLs; GraphQL: upstream schemas)',
    (s) => s.cacheEntries,
  );
  perConnector(
    'ix_connector_cache_bytes',
    'Bytes a connector’s cache holds now (GraphQL: upstream schemas, bounded by IX_GRAPHQL_SCHEMA_CACHE_MB)',
    (s) => s.cacheBytes ?? 0,
  );
  new Gauge({
    name: 'ix_usage_flush_lag_seconds',
    help: 'How long the oldest key-usage count not yet written has waited (0 when none waits)',
    registers,
    collect() {
      this.set(sources?.usageFlushLagSeconds() ?? 0);
    },
  });

  new Gauge({
    name: 'ix_turns_waiting',
    help: 'Requests waiting for their tenant’s turn of the event loop (a burst worked through in slices)',
    registers,
    collect() {
      this.set(sources?.turnsWaiting() ?? 0);
    },
  });

  new Gauge({
    name: 'ix_storage_available',
    help: 'Whether storage takes writes now (1), or is unavailable or still has writes held for it (0): executes are refused with 503 meanwhile',
    registers,
    collect() {
      this.set(sources?.storage.available === false ? 0 : 1);
    },
  });
  new Gauge({
    name: 'ix_storage_held_writes',
    help: 'Writes storage refused while unavailable, held in memory to be written when it answers (execution records, idempotency answers, webhook events)',
    registers,
    collect() {
      this.set(sources?.storage.held ?? 0);
    },
  });
  new Counter({
    name: 'ix_storage_dropped_writes_total',
    help: 'Writes given up on because storage stayed unavailable until their holder was full, by kind',
    labelNames: ['kind'] as const,
    registers,
    collect() {
      this.reset();
      for (const [kind, count] of sources?.storage.droppedWrites ?? []) this.inc({ kind }, count);
    },
  });

  app.addHook('onResponse', (request, reply, done) => {
    // The route pattern, not the URL, keeps label values bounded.
    const labels = { method: request.method, route: request.routeOptions.url ?? 'unmatched', status: String(reply.statusCode) };
    requests.inc(labels);
    duration.observe(labels, reply.elapsedTime / 1000);
    const execution = request.execution;
    if (execution?.connector !== undefined) {
      const failed = reply.statusCode >= 300;
      executes.inc({
        connector: execution.connector,
        operation: execution.operation,
        outcome: failed ? 'failed' : 'succeeded',
        error_code: request.errorCode ?? '',
      });
      upstream.observe({ connector: execution.connector }, (execution.upstream_ms ?? 0) / 1000);
    }
    if (request.refusal !== null) refusals.inc({ reason: request.refusal });
    done();
  });
  app.decorate('metrics', registry);
  return {
    registry,
    watch(given) {
      sources = given;
    },
  };
}
