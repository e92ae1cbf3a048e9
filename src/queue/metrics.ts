import { Counter, Gauge, Histogram, type Registry } from 'prom-client';

/** What the queue's workers report to /metrics (docs/async.md#metrics). */
export interface QueueMetrics {
  /** An async execution's run began, `ageSeconds` after it was accepted. */
  executionStarted(ageSeconds: number): void;
  /** A webhook delivery attempt ended: `delivered`, `failed` (retried later), `gave_up` or `disabled`. */
  delivery(outcome: 'delivered' | 'failed' | 'gave_up' | 'disabled'): void;
}

/** How many jobs wait, by queue, read when /metrics is scraped. */
export type DepthSource = () => Promise<Readonly<Record<string, number>>>;

/**
 * The queue's metrics in the app's registry: `ix_queue_depth{queue}` (executions queued and deliveries due, in the
 * whole deployment: read from storage when scraped), `ix_execution_start_age_seconds` (accepted to started), and
 * `ix_webhook_deliveries_total{outcome}`. Labels are bounded: queue names and outcomes, never ids.
 */
export function registerQueueMetrics(registry: Registry, depth: DepthSource): QueueMetrics {
  const registers = [registry];
  new Gauge({
    name: 'ix_queue_depth',
    help: 'Jobs waiting to run, by queue: async executions queued, webhook deliveries due (all instances)',
    labelNames: ['queue'] as const,
    registers,
    async collect() {
      this.reset();
      for (const [queue, count] of Object.entries(await depth())) this.set({ queue }, count);
    },
  });
  const startAge = new Histogram({
    name: 'ix_execution_start_age_seconds',
    help: 'How long an async execution waited from being accepted to its run starting',
    buckets: [0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 300, 1800, 3600],
    registers,
  });
  const deliveries = new Counter({
    name: 'ix_webhook_deliveries_total',
    help: 'Webhook delivery attempts by outcome: delivered, failed (retried later), gave_up (last attempt failed), disabled (endpoint disabled)',
    labelNames: ['outcome'] as const,
    registers,
  });
  return {
    executionStarted: (ageSeconds) => startAge.observe(Math.max(0, ageSeconds)),
    delivery: (outcome) => deliveries.inc({ outcome }),
  };
}
