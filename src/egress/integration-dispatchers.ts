import type { Dispatcher } from 'undici';
import { createEgressDispatcher, type EgressDispatcherOptions } from './dispatcher.ts';
import type { EgressPolicy } from './policy.ts';
import { connectOptions, type TlsConfig } from './tls.ts';

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

  /**
   * The dispatcher of one integration version. With a TLS client key, a request to an origin outside
   * `credentialOrigins` (a WSDL document imported from another host) goes through a twin without the client
   * certificate and key: the key proves the owner's identity only to the origins the owner named
   * (docs/security.md#secrets-follow-their-origin). Both keep the integration's roots, SNI and minimum version.
   */
  forIntegration(
    integration: IntegrationVersion,
    tls: TlsConfig | undefined,
    credentialOrigins: ReadonlySet<string> = new Set(),
  ): Dispatcher {
    if (tls === undefined) return this.#options.shared;
    const own = this.#forTls(integration, tls, 'own');
    if (typeof tls.client_key !== 'string') return own;
    const { client_certificate: _cert, client_key: _key, client_key_password: _password, ...anonymous } = tls;
    const twin = this.#forTls(integration, anonymous, 'anonymous');
    return own.compose((dispatch) => (options, handler) => {
      const origin = URL.parse(String(options.origin ?? ''))?.origin;
      return origin !== undefined && credentialOrigins.has(origin) ? dispatch(options, handler) : twin.dispatch(options, handler);
    });
  }

  #forTls(integration: IntegrationVersion, tls: TlsConfig, kind: 'own' | 'anonymous'): Dispatcher {
    // JSON of the parts, so no tenant or integration id can be shaped to collide with another's key.
    const key = JSON.stringify([integration.tenantId, integration.integrationId, String(integration.version), kind]);
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
