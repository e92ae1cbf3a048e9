import type { FastifyBaseLogger } from 'fastify';
import type { Db } from '../storage/database.ts';
import { type PendingUsage, writeUsage } from '../storage/usage.ts';

/**
 * Gathers per-key usage in memory and writes it in batches off the request path. A failed write puts
 * the batch back so that nothing is lost; `close()` writes what is left (graceful shutdown).
 */
export class UsageRecorder {
  #pending = new Map<string, PendingUsage>();
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

  record(keyId: string, ip: string, status: number, at = new Date()): void {
    const iso = at.toISOString();
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

  /** What this process has counted for the key but not written yet. */
  pending(keyId: string): PendingUsage | undefined {
    return this.#pending.get(keyId);
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
    try {
      await writeUsage(this.#db, batch);
    } catch (error) {
      this.#log.error({ err: error }, 'usage flush failed; keeping the counts for the next flush');
      for (const [keyId, usage] of batch) this.#merge(keyId, usage);
    }
  }

  #merge(keyId: string, usage: PendingUsage): void {
    const current = this.#pending.get(keyId);
    if (!current) {
      this.#pending.set(keyId, usage);
      return;
    }
    current.requests += usage.requests;
    if (usage.lastUsedAt > current.lastUsedAt) {
      current.lastUsedAt = usage.lastUsedAt;
      current.lastUsedIp = usage.lastUsedIp;
    }
    for (const [date, counts] of usage.days) {
      const day = current.days.get(date) ?? { requests: 0, errors: 0 };
      day.requests += counts.requests;
      day.errors += counts.errors;
      current.days.set(date, day);
    }
  }

  async close(): Promise<void> {
    clearInterval(this.#timer);
    await this.flush();
    if (this.#pending.size > 0) await this.flush();
  }
}
