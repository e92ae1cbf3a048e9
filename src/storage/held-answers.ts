import { appendFileSync, closeSync, fsyncSync, mkdirSync, openSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { FastifyBaseLogger } from 'fastify';
import { type HeldWrites, isStorageUnavailable, type StorageHealth } from './availability.ts';
import type { Db } from './database.ts';
import { completeIdempotencyKey, releaseIdempotencyKey } from './idempotency.ts';

/** How a claimed Idempotency-Key ends: its answer kept for replay, or the key given back. */
export type Settlement =
  | { tenantId: string; key: string; kind: 'complete'; status: number; response: string }
  | { tenantId: string; key: string; kind: 'release'; token: string };

/** Settlements held while storage is unavailable, per instance (docs/limits.md). */
export const maxHeldAnswers = 10_000;

function write(db: Db, settlement: Settlement): Promise<void> {
  return settlement.kind === 'complete'
    ? completeIdempotencyKey(db, settlement.tenantId, settlement.key, settlement.status, settlement.response)
    : releaseIdempotencyKey(db, settlement.tenantId, settlement.key, settlement.token);
}

/** `<pid>-<start time>.jsonl`: whose spool a file is. */
const spoolFile = /^(\d+)-\d+\.jsonl$/;

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * How the claimed Idempotency-Keys of this instance end (docs/execute.md#when-storage-fails). A keyed call's answer is
 * written at once; when storage is unavailable it is held here, in memory and in a spool file of this process (when a
 * spool folder is set), and written when storage answers again. Meanwhile the key stays claimed (`pending`), so a retry
 * gets `409` and never a second send: the claim is never given back while the send's fate is unknown. A process that
 * died holding answers leaves its spool file; the next start writes them (`reconcile`).
 */
export class HeldAnswers implements HeldWrites {
  readonly #db: Db;
  readonly #health: StorageHealth;
  readonly #log: FastifyBaseLogger;
  readonly #spoolDir: string | undefined;
  readonly #spoolPath: string | undefined;
  /** By tenant and key: the latest settlement of each. */
  #held = new Map<string, Settlement>();
  #retrying: Promise<void> = Promise.resolve();

  constructor(options: { db: Db; health: StorageHealth; log: FastifyBaseLogger; spoolDir?: string }) {
    this.#db = options.db;
    this.#health = options.health;
    this.#log = options.log;
    this.#spoolDir = options.spoolDir;
    this.#spoolPath = options.spoolDir && join(options.spoolDir, `${process.pid}-${Date.now()}.jsonl`);
    this.#health.holds(this);
  }

  get held(): number {
    return this.#held.size;
  }

  /** Writes a settlement; held (never rejected) when storage is unavailable. Other failures reject. */
  async settle(settlement: Settlement): Promise<void> {
    try {
      await write(this.#db, settlement);
    } catch (error) {
      if (!isStorageUnavailable(error)) throw error;
      this.#hold(settlement, error);
    }
  }

  #hold(settlement: Settlement, error: unknown): void {
    const id = `${settlement.tenantId}\u0000${settlement.key}`;
    if (!this.#held.has(id) && this.#held.size >= maxHeldAnswers) {
      this.#health.dropped('idempotency answers', 1, error);
      return;
    }
    this.#held.set(id, settlement);
    this.#spool(settlement);
    this.#health.failed(error);
  }

  /** Appends the settlement to this process's spool file, synced: it outlives a crash before storage returns. */
  #spool(settlement: Settlement): void {
    if (!this.#spoolDir || !this.#spoolPath) return;
    try {
      mkdirSync(this.#spoolDir, { recursive: true, mode: 0o700 });
      const fd = openSync(this.#spoolPath, 'a', 0o600);
      try {
        appendFileSync(fd, `${JSON.stringify(settlement)}\n`);
        fsyncSync(fd);
      } finally {
        closeSync(fd);
      }
    } catch (error) {
      this.#log.error(
        { err: error, spool: this.#spoolPath },
        'an idempotency answer could not be spooled; it is held in memory only',
      );
    }
  }

  /** Writes the held settlements until storage fails again; the spool file goes once nothing is held. */
  retry(): Promise<void> {
    this.#retrying = this.#retrying.then(async () => {
      for (const [id, settlement] of this.#held) {
        try {
          await write(this.#db, settlement);
          this.#held.delete(id);
        } catch (error) {
          if (isStorageUnavailable(error)) return this.#health.failed(error);
          this.#held.delete(id);
          this.#log.error({ err: error, tenant_id: settlement.tenantId }, 'a held idempotency answer could not be written');
        }
      }
      if (this.#spoolPath) rmSync(this.#spoolPath, { force: true });
    });
    return this.#retrying;
  }

  /** One last try at shutdown; what is still held stays in the spool file for the next start. */
  async close(): Promise<void> {
    if (this.#held.size > 0) await this.retry();
    if (this.#held.size > 0) {
      this.#log.error(
        { count: this.#held.size, spool: this.#spoolPath ?? null },
        this.#spoolPath
          ? 'storage is unavailable at shutdown: idempotency answers are left in the spool for the next start'
          : 'storage is unavailable at shutdown: idempotency answers lost (no spool folder)',
      );
    }
  }

  /**
   * At start-up: writes the settlements that processes which are gone left in the spool folder, then removes their
   * files. A file of a live process (another instance sharing the folder) is left to it. Returns how many were written.
   */
  static async reconcile(db: Db, spoolDir: string, log: FastifyBaseLogger): Promise<number> {
    let files: string[];
    try {
      files = readdirSync(spoolDir);
    } catch {
      return 0;
    }
    let written = 0;
    for (const name of files) {
      const owner = spoolFile.exec(name);
      if (!owner || (Number(owner[1]) !== process.pid && processAlive(Number(owner[1])))) continue;
      const path = join(spoolDir, name);
      const lines = readFileSync(path, 'utf8').split('\n').filter(Boolean);
      for (const line of lines) {
        let settlement: Settlement;
        try {
          settlement = JSON.parse(line) as Settlement;
        } catch {
          continue; // a line cut short by the crash: its settlement never left memory either
        }
        await write(db, settlement);
        written += 1;
      }
      rmSync(path, { force: true });
    }
    if (written > 0) log.warn({ count: written, spool: spoolDir }, 'idempotency answers left by a stopped process were written');
    return written;
  }
}
