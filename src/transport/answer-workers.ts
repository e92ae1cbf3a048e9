import { availableParallelism } from 'node:os';
import type { Piscina } from 'piscina';
import { ApiError } from '../core/errors.ts';
import type { FailureMessage } from './answer-worker-kit.ts';
import { type ReadBody, segmentedMinBytes } from './body.ts';

/**
 * Upstream answers of at least this many bytes are read in a worker thread. Below it, reading on the main thread
 * costs less than a trip to a worker (a 1 MiB JSON answer parses in a few milliseconds); above it, the megabytes
 * would hold the event loop for every other request (docs/limits.md#large-answers-and-the-event-loop). The same as
 * the size from which a body is read into segments of its own (body.ts), which move to the worker unjoined.
 */
export const offThreadMinBytes = segmentedMinBytes;

export interface AnswerWorkersOptions {
  /** Worker threads at most (default: the cores less one for the main thread, at least 1, at most 4). */
  maxThreads?: number;
  /** An idle worker ends after this long, so an instance that reads no large answer holds none (default 30 s). */
  idleTimeoutMs?: number;
}

/**
 * The worker threads that read large upstream answers (piscina), owned by the composition root: started on the first
 * large answer, bounded, ended when idle and when the app closes. A task names the module and the function it runs
 * there; what goes in and out must be cloneable (Buffers travel as transferred memory, not copies).
 *
 * @example
 * const workers = new AnswerWorkers();
 * const page = await workers.run(new URL('./page-worker.ts', import.meta.url), 'readPage', { body }, [body.buffer]);
 */
export class AnswerWorkers {
  readonly #options: Required<AnswerWorkersOptions>;
  #pool: Promise<Piscina> | undefined;
  #closed = false;

  constructor(options: AnswerWorkersOptions = {}) {
    this.#options = {
      maxThreads: options.maxThreads ?? Math.min(4, Math.max(1, availableParallelism() - 1)),
      idleTimeoutMs: options.idleTimeoutMs ?? 30_000,
    };
  }

  /** Runs `name` of `module` in a worker with `task`; the memory of `transfer` moves to the worker. */
  async run<T>(module: URL, name: string, task: unknown, transfer: ArrayBuffer[] = []): Promise<T> {
    if (this.#closed) throw new Error('the answer workers are closed');
    const pool = await this.#start();
    return pool.run(task, { filename: module.href, name, transferList: transfer }) as Promise<T>;
  }

  /** Ends the workers (after the tasks under way). */
  async close(): Promise<void> {
    this.#closed = true;
    const pool = this.#pool;
    this.#pool = undefined;
    if (pool) await (await pool).close();
  }

  /** piscina is loaded on the first large answer: an instance that never reads one never holds it. */
  #start(): Promise<Piscina> {
    this.#pool ??= import('piscina').then(
      ({ Piscina }) =>
        new Piscina({
          minThreads: 0,
          maxThreads: this.#options.maxThreads,
          idleTimeout: this.#options.idleTimeoutMs,
          // Tasks wait for a free worker rather than being refused: the execute's deadline bounds the wait.
          maxQueue: Number.POSITIVE_INFINITY,
        }),
    );
    return this.#pool;
  }
}

/** A failure that a worker thread met, as the ApiError it was there. */
export function failureOf(failure: FailureMessage): ApiError {
  return new ApiError(failure.code, failure.message, failure.details, { upstreamErrors: failure.upstreamErrors });
}

/** A worker's text as a Buffer over the same memory. */
export function bufferOf(text: Uint8Array): Buffer {
  return Buffer.from(text.buffer, text.byteOffset, text.byteLength);
}

/**
 * Runs `name` of a reader `module` on an upstream's answer in a worker thread, the answer's memory moved there when it
 * has a memory of its own, and the integration's secrets given for the redaction of what comes back.
 */
export function readOffThread<T>(
  workers: AnswerWorkers,
  module: URL,
  name: string,
  response: { status: number; headers: Record<string, string>; read: ReadBody },
  secrets: readonly string[],
  task: object = {},
): Promise<T> {
  const { status, headers, read } = response;
  // The segments are joined in the worker, never here; their memory moves there when it is theirs alone.
  const parts = read.parts;
  const transfer = read.owned ? parts.map((part) => part.buffer as ArrayBuffer) : [];
  return workers.run<T>(module, name, { status, headers, parts, secrets, ...task }, transfer);
}
