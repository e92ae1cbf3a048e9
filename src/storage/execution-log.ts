import type { FastifyBaseLogger } from 'fastify';
import { type HeldWrites, isStorageUnavailable, type StorageHealth } from './availability.ts';
import type { Db } from './database.ts';
import { ExecutionInserts } from './execution-inserts.ts';
import type { Execution } from './execution-rows.ts';

type Row = { tenantId: string; execution: Execution };

/** Records held while storage is unavailable, per instance (docs/limits.md); past it the oldest are dropped. */
export const maxHeldRecords = 20_000;

/**
 * The executions log, written behind: each execute hands its row over and answers at once; rows are written in
 * batches (one INSERT of up to `maxBatch` rows, at most `intervalMs` after the first of them), which costs a fraction
 * of a write per execute (each write updates the table and its two indexes, a few pages of WAL).
 *
 * - Reads through this instance (GET /executions) flush first, so a caller always sees its own executions; another
 *   instance's appear within `intervalMs`.
 * - `close()` (SIGTERM) writes what is pending. A hard kill loses the rows of the last `intervalMs` at most (README).
 * - A batch that storage cannot take now (unavailable: docs/execute.md#when-storage-fails) is held, up to
 *   `maxHeldRecords` rows, and written when storage answers again (StorageHealth retries it); while rows are held,
 *   new executes are refused before they send.
 * - A batch refused for another reason is written row by row, so one bad row is the only one lost (and logged).
 */
export class ExecutionLog implements HeldWrites {
  readonly #inserts: ExecutionInserts;
  readonly #log: FastifyBaseLogger;
  readonly #intervalMs: number;
  readonly #maxBatch: number;
  readonly #health: StorageHealth;
  #pending: Row[] = [];
  /** Rows storage refused while unavailable, oldest first. */
  #held: Row[] = [];
  #timer: NodeJS.Timeout | undefined;
  /** The writes in order: each batch starts once the one before has ended. Never rejects. */
  #writing: Promise<void> = Promise.resolve();

  constructor(db: Db, log: FastifyBaseLogger, options: { intervalMs?: number; maxBatch?: number; health: StorageHealth }) {
    this.#log = log;
    this.#intervalMs = options.intervalMs ?? 50;
    this.#maxBatch = options.maxBatch ?? 200;
    this.#health = options.health;
    this.#health.holds(this);
    // A text per batch size, 1 to maxBatch (a failed batch is written again one row at a time).
    this.#inserts = new ExecutionInserts(db, 2 * this.#maxBatch);
  }

  /** Hands one execution over; it is written within `intervalMs`. */
  record(tenantId: string, execution: Execution): void {
    this.#pending.push({ tenantId, execution });
    if (this.#pending.length >= this.#maxBatch) void this.flush();
    else this.#timer ??= setTimeout(() => void this.flush(), this.#intervalMs).unref();
  }

  /** Rows held until storage answers again. */
  get held(): number {
    return this.#held.length;
  }

  /** Writes everything handed over so far; resolves once it is written (or held, or its failure logged). */
  flush(): Promise<void> {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    const batch = this.#pending;
    this.#pending = [];
    if (batch.length > 0) {
      this.#writing = this.#writing.then(async () => {
        await this.#write(batch);
      });
    }
    return this.#writing;
  }

  /** Writes the held rows, a batch at a time, until storage fails again. */
  retry(): Promise<void> {
    this.#writing = this.#writing.then(async () => {
      while (this.#held.length > 0) {
        const batch = this.#held.splice(0, this.#maxBatch);
        if (!(await this.#write(batch))) return;
      }
    });
    return this.#writing;
  }

  /** Writes what is pending and held; what storage still refuses is lost with the process, and logged. */
  async close(): Promise<void> {
    await this.flush();
    if (this.#held.length > 0) await this.retry();
    if (this.#held.length > 0) {
      this.#log.error({ count: this.#held.length }, 'storage is unavailable at shutdown: execution records lost');
    }
  }

  /** False when storage was unavailable (the batch is held). */
  async #write(batch: Row[]): Promise<boolean> {
    try {
      await this.#inserts.insert(batch);
      return true;
    } catch (error) {
      if (isStorageUnavailable(error)) return this.#hold(batch, error);
      for (const [i, row] of batch.entries()) {
        try {
          await this.#inserts.insert([row]);
        } catch (rowError) {
          if (isStorageUnavailable(rowError)) return this.#hold(batch.slice(i), rowError);
          this.#log.error({ err: rowError, execution_id: row.execution.id }, 'an execution could not be recorded');
        }
      }
      return true;
    }
  }

  /** Keeps rows for later, oldest first, within maxHeldRecords; tells the health. Returns false. */
  #hold(batch: Row[], error: unknown): false {
    this.#held = batch.concat(this.#held);
    if (this.#held.length > maxHeldRecords) {
      const over = this.#held.length - maxHeldRecords;
      this.#held.splice(0, over);
      this.#health.dropped('execution records', over, error);
    }
    this.#health.failed(error);
    return false;
  }
}
