import type { KeyCache } from './auth/key-cache.ts';
import type { People } from './auth/people.ts';
import type { AuthFailureGuard, KeyRateLimiter } from './auth/rate-limit.ts';
import type { UsageRecorder } from './auth/usage-recorder.ts';
import type { Config } from './config/config.ts';
import type { SharedConnectorContext } from './connectors/connector.ts';
import type { ConnectorRegistry } from './connectors/registry.ts';
import type { ExecutionEvents } from './execution/events.ts';
import type { IntegrationCache } from './integrations/cache.ts';
import type { JobQueue } from './queue/job-queue.ts';
import type { QueueMetrics } from './queue/metrics.ts';
import type { CircuitBreakers } from './resilience/breaker.ts';
import type { FairTurns } from './resilience/fair-turns.ts';
import type { IntegrationConcurrency } from './resilience/integration-concurrency.ts';
import type { ResilienceMetrics } from './resilience/metrics.ts';
import type { StorageHealth } from './storage/availability.ts';
import type { Storage } from './storage/database.ts';
import type { ExecutionLog } from './storage/execution-log.ts';

/** What routes share: built once in `build()` and passed to each route module explicitly. */
export interface AppContext {
  config: Config;
  storage: Storage;
  keyCache: KeyCache;
  limiter: KeyRateLimiter;
  guard: AuthFailureGuard;
  usage: UsageRecorder;
  /** Tells every instance that a key changed (revoked, rotated); a no-op without Redis. */
  announceKeyChange(hash: string): void;
  /** Encrypts integration secrets at rest. */
  masterKey: Buffer;
  /** The egress-checked dispatcher and limits every connector uses. */
  connectors: SharedConnectorContext;
  /** The connectors this app offers. */
  registry: ConnectorRegistry;
  /** The executions log, written behind in batches. */
  executions: ExecutionLog;
  /** Whether storage takes writes now (executes are refused before they send while it does not). */
  storageHealth: StorageHealth;
  /** People: signing keys, access tokens, sessions and the account lockout. */
  people: People;
  /** Shares the event loop's time among tenants: each tenant request's work takes a turn when it starts or resumes. */
  turns: FairTurns;
  /** Integrations as the execute path reads them (kept 1 s; forgotten when this instance changes one). */
  integrations: IntegrationCache;
  /** The durable job queue: pg-boss on PostgreSQL, embedded on SQLite (docs/async.md#the-queue). */
  queue: JobQueue;
  /** Where an execution's end goes: the webhooks. */
  events: ExecutionEvents;
  /** The queue's metrics: execution age at start, deliveries by outcome. */
  queueMetrics: QueueMetrics;
  /** Each integration's circuit breaker: in Redis when REDIS_URL is set, else this instance's (docs/resilience.md). */
  breakers: CircuitBreakers;
  /** The calls of each integration running on this instance, against its `max_concurrency`. */
  integrationSlots: IntegrationConcurrency;
  /** Retries, breaker openings and refusals, concurrency refusals: by connector. */
  resilience: ResilienceMetrics;
}
