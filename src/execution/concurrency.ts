/**
 * How many executes each tenant has running on this instance, capped (docs/limits.md#callers,
 * IX_TENANT_CONCURRENCY): one tenant's flood against a stalled upstream holds at most `limit`
 * requests and sockets, and every other tenant keeps its own share.
 *
 * @example
 * const release = slots.tryAcquire('acme');
 * if (!release) throw tooMany();
 * try { await run(); } finally { release(); }
 */
export class TenantConcurrency {
  readonly limit: number;
  readonly #running = new Map<string, number>();

  constructor(limit: number) {
    this.limit = limit;
  }

  /** A release function when the tenant has a free slot, else undefined. Release exactly once. */
  tryAcquire(tenantId: string): (() => void) | undefined {
    const running = this.#running.get(tenantId) ?? 0;
    if (running >= this.limit) return undefined;
    this.#running.set(tenantId, running + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = (this.#running.get(tenantId) ?? 1) - 1;
      if (left === 0) this.#running.delete(tenantId);
      else this.#running.set(tenantId, left);
    };
  }

  running(tenantId: string): number {
    return this.#running.get(tenantId) ?? 0;
  }
}
