import type { ConnectorDefinition } from '../connectors/connector.ts';
import type { BreakerOptions } from '../resilience/breaker.ts';
import type { Storage } from '../storage/database.ts';
import type { DeliverySettings } from '../webhooks/delivery.ts';

/** What a caller of `build` (src/app.ts) may set beside the config: tests share storage, step clocks, shorten pacing. */
export interface BuildOptions {
  /** Storage opened by the caller (tests share one); otherwise opened from config.databaseUrl and closed with the app. */
  storage?: Storage;
  /** The connectors offered; the built-in ones (GraphQL, SOAP) by default. */
  connectors?: readonly ConnectorDefinition[];
  /** Where the logs go; standard output by default. */
  logStream?: NodeJS.WritableStream;
  /** Webhook delivery pacing (retry schedule, timeout, clock) other than production's: tests set short ones. */
  webhooks?: Partial<DeliverySettings> & { refreshMs?: number };
  /** Circuit breaker timings and clock other than the documented (tests step a clock through them). */
  breakers?: BreakerOptions;
  /** The clock people's memberships and sessions are cached by (tests step one through the 1 s bound). */
  people?: { now?: () => number };
}
