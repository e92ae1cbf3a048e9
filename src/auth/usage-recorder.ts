import type { FastifyBaseLogger } from 'fastify';
import { nowIso } from '../core/ids.ts';
import type { Db } from '../storage/database.ts';
import { type PendingUsage, writeUsage } from '../storage/usage.ts';

/**
 * Gathers per-key usage in memory and writes it in batches off the request path. A failed write puts
 * the batch back so that nothing is lost; `close()` writes what is left (graceful shutdown).
 */
export class UsageRecorder {
  #pending = new Map<string, PendingUsage>();
  // The batch being written: still counted by pending() until its transaction commits.
  #inflight = new Map<string, PendingUsage>();
  /** When the oldest count in #pending, and in #inflight, was made (performance.now()); undefined when empty. */
  #pendingSince: number | undefined;
  #inflightSince: number | undefined;
  #timer: NodeJS.Timeout | undefined;
  #flushing: Promise<void> = Promise.resolve();
  readonly #db: Db;
  readonly #log: FastifyBaseLogger;

  constructor(db: Db, log: FastifyBaseLogger, flushMs: number) {
    this.#db = db;
    this.#log = log;
    this.#timer = setInterval(() => void this.flush(), flushMs);
    this.#timer.unref();
  }

  record(keyId: string, ip: string, status: number, at?: Date): void {
    const iso = at === undefined ? nowIso() : at.toISOString();
    this.#pendingSince ??= performance.now();
    let usage = this.#pending.get(keyId);
    if (!usage) {
      usage = { requests: 0, lastUsedAt: iso, lastUsedIp: ip, days: new Map() };
      this.#pending.set(keyId, usage);
    }
    usage.requests += 1;
    if (iso >= usage.lastUsedAt) {
      usage.lastUsedAt = iso;
      usage.lastUsedIp = ip;
    }
    const date = iso.slice(0, 10);
    const day = usage.days.get(date) ?? { requests: 0, errors: 0 };
    day.requests += 1;
    if (status < 200 || status >= 300) day.errors += 1;
    usage.days.set(date, day);
  }

  /** What this process has counted for the key but not committed yet. */
  pending(keyId: string): PendingUsage | undefined {
    const queued = this.#pending.get(keyId);
    const writing = this.#inflight.get(keyId);
    if (!writing) return queued;
    const view = copyUsage(writing);
    if (queued) mergeUsage(view, queued);
    return view;
  }

  /** Writes the current batch; flushes never overlap. */
  flush(): Promise<void> {
    this.#flushing = this.#flushing.then(() => this.#writeBatch());
    return this.#flushing;
  }

  async #writeBatch(): Promise<void> {
    if (this.#pending.size === 0) return;
    const batch = this.#pending;
    this.#pending = new Map();
    this.#inflight = batch;
    this.#inflightSince = this.#pendingSince;
    this.#pendingSince = undefined;
    try {
      await writeUsage(this.#db, batch);
    } catch (error) {
      this.#pendingSince = Math.min(
        this.#inflightSince ?? Number.POSITIVE_INFINITY,
        this.#pendingSince ?? Number.POSITIVE_INFINITY,
      );
      this.#log.error({ err: error }, 'usage flush failed; keeping the counts for the next flush');
      for (const [keyId, usage] of batch) {
        const current = this.#pending.get(keyId);
        if (current) mergeUsage(usage, current);
        this.#pending.set(keyId, usage);
      }
    } finally {
      this.#inflight = new Map();
      this.#inflightSince = undefined;
    }
  }

  /** Seconds the oldest count not yet committed has waited; 0 when every count is written (a metric: flush lag). */
  lagSeconds(now = performance.now()): number {
    const since = Math.min(this.#inflightSince ?? Number.POSITIVE_INFINITY, this.#pendingSince ?? Number.POSITIVE_INFINITY);
    return Number.isFinite(since) ? (now - since) / 1000 : 0;
  }

  async close(): Promise<void> {
    clearInterval(this.#timer);
    await this.flush();
    if (this.#pending.size > 0) await this.flush();
  }
}

function copyUsage(usage: PendingUsage): PendingUsage {
  return { ...usage, days: new Map([...usage.days].map(([date, counts]) => [date, { ...counts }])) };
}

/** Adds `from` into `into`: counts summed, the later use kept. */
function mergeUsage(into: PendingUsage, from: PendingUsage): void {
  into.requests += from.requests;
  if (from.lastUsedAt > into.lastUsedAt) {
    into.lastUsedAt = from.lastUsedAt;
    into.lastUsedIp = from.lastUsedIp;
  }
  for (const [date, counts] of from.days) {
    const day = into.days.get(date) ?? { requests: 0, errors: 0 };
    day.requests += counts.requests;
    day.errors += counts.errors;
    into.days.set(date, day);
  }
}
