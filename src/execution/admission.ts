import { ApiError } from '../core/errors.ts';
import { maxConcurrencyIn } from '../integrations/settings.ts';
import { integrationKey } from '../resilience/config.ts';
import type { IntegrationConcurrency } from '../resilience/integration-concurrency.ts';
import type { ResilienceMetrics } from '../resilience/metrics.ts';
import { type StorageHealth, storageUnavailable } from '../storage/availability.ts';
import type { StoredIntegration } from '../storage/integrations.ts';
import { TenantConcurrency } from './concurrency.ts';

/** What admitting a synchronous call needs, named. */
export interface AdmissionDeps {
  /** IX_TENANT_CONCURRENCY: executes of one tenant running at once on this instance. */
  tenantConcurrency: number;
  storageHealth: StorageHealth;
  integrationSlots: IntegrationConcurrency;
  resilience: ResilienceMetrics;
}

/** A slot's release; call it once. */
export type Release = () => void;

/**
 * Whether a synchronous call may run now, and the slots it holds while it does (docs/limits.md#callers,
 * docs/resilience.md#concurrency): storage must take its record, the tenant must have a free slot of its
 * IX_TENANT_CONCURRENCY on this instance, and an integration with `max_concurrency` a free slot within 1 s.
 */
export class Admission {
  readonly #deps: AdmissionDeps;
  readonly #tenants: TenantConcurrency;

  constructor(deps: AdmissionDeps) {
    this.#deps = deps;
    this.#tenants = new TenantConcurrency(deps.tenantConcurrency);
  }

  /** The tenant's slot; throws 503 (storage unavailable, before anything is sent) or 429 (`concurrency`). */
  tenant(tenantId: string): Release {
    // Storage that cannot take this call's record now: refused before anything is sent (docs/execute.md#when-storage-fails).
    if (!this.#deps.storageHealth.available) throw storageUnavailable();
    const release = this.#tenants.tryAcquire(tenantId);
    if (release) return release;
    throw new ApiError(
      'rate_limited',
      `This tenant already has ${this.#tenants.limit} executes running on this instance; retry when one has finished.`,
      { reason: 'concurrency', limit: this.#tenants.limit },
      { retryAfterSeconds: 1 },
    );
  }

  /**
   * One of the integration's slots on this instance, waited for up to 1 s; undefined when it has no
   * `max_concurrency`. Rejects with 429 `integration_concurrency` when none came free.
   */
  integration(tenantId: string, stored: StoredIntegration): Promise<Release> | undefined {
    const limit = maxConcurrencyIn(stored.config);
    if (limit === undefined) return undefined;
    return this.#deps.integrationSlots.acquire(integrationKey(tenantId, stored.id), limit, { waitMs: 1000 }).then((release) => {
      if (release) return release;
      this.#deps.resilience.concurrencyFull(stored.connector, 'refused');
      throw new ApiError(
        'rate_limited',
        `Integration ${stored.id} already has ${limit} calls running on this instance (its max_concurrency), and none ended within 1 s; retry later.`,
        { reason: 'integration_concurrency', limit },
        { retryAfterSeconds: 1 },
      );
    });
  }
}
