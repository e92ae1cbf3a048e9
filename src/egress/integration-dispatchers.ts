import type { Dispatcher } from 'undici';
import { connectOptions, type TlsConfig } from '../credentials/tls.ts';
import { createEgressDispatcher, type EgressDispatcherOptions } from './dispatcher.ts';
import type { EgressPolicy } from './policy.ts';

/** Which stored version of which integration a dispatcher serves: a new version gets a new one. */
export interface IntegrationVersion {
  readonly tenantId: string;
  readonly integrationId: string;
  readonly version: number | string;
}

export interface IntegrationDispatchersOptions {
  readonly policy: EgressPolicy;
  /** What integrations without `config.tls` send through; its owner closes it. */
  readonly shared: Dispatcher;
  /** Timeouts, resolver and proxies, as for the shared dispatcher. */
  readonly egress?: Omit<EgressDispatcherOptions, 'tls'>;
  /** Most dispatchers kept; the least recently used beyond it is closed. Default 100. */
  readonly max?: number;
}

/**
 * The dispatchers of integrations with `config.tls`: one egress-checking Agent per integration version, built on
 * first use and reused (its keep-alive pools and TLS sessions with it), at most `max` of them; the least recently
 * used is closed when a new one would exceed the bound (close lets its requests in flight finish). Integrations
 * without `tls` get the shared dispatcher.
 *
 * @example
 * const dispatchers = new IntegrationDispatchers({ policy, shared: dispatcher, egress: { proxies } });
 * const d = dispatchers.forIntegration({ tenantId, integrationId, version }, config.tls);
 */
export class IntegrationDispatchers {
  readonly name = 'integration-dispatchers';
  readonly #options: IntegrationDispatchersOptions;
  readonly #max: number;
  /** Insertion order is recency: a hit is moved to the end, the first entry is the least recently used. */
  readonly #entries = new Map<string, Dispatcher>();

  constructor(options: IntegrationDispatchersOptions) {
    this.#options = options;
    this.#max = options.max ?? 100;
    if (!Number.isInteger(this.#max) || this.#max < 1)
      throw new RangeError('IntegrationDispatchers: max must be a positive integer');
  }

  /** How many per-integration dispatchers are open. */
  get size(): number {
    return this.#entries.size;
  }

  forIntegration(integration: IntegrationVersion, tls: TlsConfig | undefined): Dispatcher {
    if (tls === undefined) return this.#options.shared;
    // JSON of the parts, so no tenant or integration id can be shaped to collide with another's key.
    const key = JSON.stringify([integration.tenantId, integration.integrationId, String(integration.version)]);
    const cached = this.#entries.get(key);
    if (cached) {
      this.#entries.delete(key);
      this.#entries.set(key, cached);
      return cached;
    }
    // A changed integration (a newer version) drops its older versions' connections at once: their settings are gone.
    const prefix = JSON.stringify([integration.tenantId, integration.integrationId]).slice(0, -1);
    for (const [other, older] of this.#entries) {
      const version = Number(JSON.parse(other)[2]);
      if (other.startsWith(`${prefix},`) && version < Number(integration.version)) {
        this.#entries.delete(other);
        void older.close();
      }
    }
    const dispatcher = createEgressDispatcher(this.#options.policy, { ...this.#options.egress, tls: connectOptions(tls) });
    this.#entries.set(key, dispatcher);
    if (this.#entries.size > this.#max) {
      const [oldestKey, oldest] = this.#entries.entries().next().value as [string, Dispatcher];
      this.#entries.delete(oldestKey);
      void oldest.close();
    }
    return dispatcher;
  }

  /** Closes every per-integration dispatcher (not the shared one: its owner closes it). */
  async close(): Promise<void> {
    const open = [...this.#entries.values()];
    this.#entries.clear();
    await Promise.all(open.map((dispatcher) => dispatcher.close()));
  }
}
