import type { FastifyBaseLogger } from 'fastify';
import type { Db } from './database.ts';
import { type Execution, ExecutionInserts } from './executions.ts';

/**
 * The executions log, written behind: each execute hands its row over and answers at once; rows are written in
 * batches (one INSERT of up to `maxBatch` rows, at most `intervalMs` after the first of them), which costs a fraction
 * of a write per execute (each write updates the table and its two indexes, a few pages of WAL).
 *
 * - Reads through this instance (GET /executions) flush first, so a caller always sees its own executions; another
 *   instance's appear within `intervalMs`.
 * - `close()` (SIGTERM) writes what is pending. A hard kill loses the rows of the last `intervalMs` at most (README).
 * - A batch that cannot be written is written row by row, so one bad row is the only one lost (and logged).
 */
export class ExecutionLog {
  readonly #inserts: ExecutionInserts;
  readonly #log: FastifyBaseLogger;
  readonly #intervalMs: number;
  readonly #maxBatch: number;
  #pending: Array<{ tenantId: string; execution: Execution }> = [];
  #timer: NodeJS.Timeout | undefined;
  /** The writes in order: each batch starts once the one before has ended. Never rejects. */
  #writing: Promise<void> = Promise.resolve();

  constructor(db: Db, log: FastifyBaseLogger, options: { intervalMs?: number; maxBatch?: number } = {}) {
    this.#log = log;
    this.#intervalMs = options.intervalMs ?? 50;
    this.#maxBatch = options.maxBatch ?? 200;
    // A text per batch size, 1 to maxBatch (a failed batch is written again one row at a time).
    this.#inserts = new ExecutionInserts(db, 2 * this.#maxBatch);
  }

  /** Hands one execution over; it is written within `intervalMs`. */
  record(tenantId: string, execution: Execution): void {
    this.#pending.push({ tenantId, execution });
    if (this.#pending.length >= this.#maxBatch) void this.flush();
    else this.#timer ??= setTimeout(() => void this.flush(), this.#intervalMs).unref();
  }

  /** Writes everything handed over so far; resolves once it is written (or its failure logged). */
  flush(): Promise<void> {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    const batch = this.#pending;
    this.#pending = [];
    if (batch.length > 0) this.#writing = this.#writing.then(() => this.#write(batch));
    return this.#writing;
  }

  close(): Promise<void> {
    return this.flush();
  }

  async #write(batch: Array<{ tenantId: string; execution: Execution }>): Promise<void> {
    try {
      await this.#inserts.insert(batch);
    } catch {
      for (const row of batch) {
        try {
          await this.#inserts.insert([row]);
        } catch (error) {
          this.#log.error({ err: error, execution_id: row.execution.id }, 'an execution could not be recorded');
        }
      }
    }
  }
}
