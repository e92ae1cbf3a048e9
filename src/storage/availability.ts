import type { FastifyBaseLogger } from 'fastify';
import { sql } from 'kysely';
import { ApiError } from '../core/errors.ts';
import type { Db } from './database.ts';

/**
 * PostgreSQL's SQLSTATEs that say the server cannot serve now, not that the statement is wrong: connection exceptions
 * (class 08), the server shutting down, crashed or starting (57P01–57P03: a restart, a failover), too many connections,
 * a full disk, out of memory, an I/O error, and a read-only transaction (a standby not promoted yet).
 */
const pgUnavailable = /^(08...|57P0[1-3]|53[0-3]00|58030|25006)$/;

/** What the network says when a server is not there. */
const networkCodes = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'EPIPE',
  'ETIMEDOUT',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
]);

/** What pg says, without a code, of a connection that ended or could not be had in time. */
const pgConnectionMessages =
  /^(Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|Client was closed and is not queryable)/;

/**
 * SQLite's primary result codes that say the file cannot be written or read now: busy or locked past busy_timeout, out
 * of memory, read-only, an I/O error, a full disk (or `max_page_count` reached), the file not openable.
 */
const sqliteUnavailable = new Set([5, 6, 7, 8, 10, 13, 14]);

/**
 * Whether `error` says storage cannot be used now (a connection lost or refused, the server restarting or failing
 * over, a full disk) rather than that a statement is wrong: the former is answered `503 service_unavailable` with
 * `Retry-After` and its writes are kept to be written again (docs/errors.md#service_unavailable), the latter is a bug.
 */
export function isStorageUnavailable(error: unknown, depth = 0): boolean {
  if (typeof error !== 'object' || error === null || depth > 4) return false;
  const e = error as { code?: unknown; errcode?: unknown; message?: unknown; errors?: unknown; cause?: unknown };
  if (typeof e.code === 'string') {
    if (pgUnavailable.test(e.code) || networkCodes.has(e.code)) return true;
    if (e.code === 'ERR_SQLITE_ERROR' && typeof e.errcode === 'number') return sqliteUnavailable.has(e.errcode & 0xff);
  }
  if (typeof e.message === 'string' && pgConnectionMessages.test(e.message)) return true;
  // Several addresses tried (localhost: ::1 and 127.0.0.1) fail as one AggregateError.
  if (Array.isArray(e.errors) && e.errors.length > 0) return e.errors.every((inner) => isStorageUnavailable(inner, depth + 1));
  return e.cause !== undefined && isStorageUnavailable(e.cause, depth + 1);
}

/** Seconds a caller is told to wait (`Retry-After`) while storage is unavailable. */
export const storageRetryAfterSeconds = 2;

/** The answer to a request that needs storage while it is unavailable: `503 service_unavailable`, reason `storage`. */
export function storageUnavailable(): ApiError {
  return new ApiError(
    'service_unavailable',
    'Storage is unavailable for a moment (the database restarts, fails over or is full); nothing was changed or sent. Retry after the time in Retry-After.',
    { reason: 'storage' },
    { retryAfterSeconds: storageRetryAfterSeconds },
  );
}

/** Something that keeps writes storage refused, to write them again when it is back (see StorageHealth). */
export interface HeldWrites {
  /** How many writes it holds now. */
  readonly held: number;
  /** Writes what it holds, in order, until storage fails again; never rejects. */
  retry(): Promise<void>;
}

export interface StorageHealthOptions {
  db: Db;
  log: FastifyBaseLogger;
  /** How often storage is tried while it is unavailable (250 ms: work resumes within about that of its return). */
  probeMs?: number;
}

/**
 * Whether this instance's storage takes writes now, as its own writes and reads have found (docs/execute.md#when-storage-fails).
 * A write or read that failed with a storage error (`failed`) makes it unavailable; then storage is tried every
 * `probeMs`, and when it answers, every holder of writes kept meanwhile (the executions log, idempotency answers,
 * webhook events) writes them again. It is available once storage answers and nothing is held: until then new
 * executes are refused before they send anything, since their records could not be written.
 */
export class StorageHealth {
  readonly #options: Required<StorageHealthOptions>;
  readonly #holders: HeldWrites[] = [];
  readonly #returned = new Set<() => void>();
  #down = false;
  #since = 0;
  #timer: NodeJS.Timeout | undefined;
  #probing = false;
  #closed = false;
  /** Writes given up on because a holder was full, by holder (a metric). */
  readonly droppedWrites = new Map<string, number>();

  constructor(options: StorageHealthOptions) {
    this.#options = { probeMs: 250, ...options };
  }

  /** Registers a holder: its writes are retried when storage returns, and while it holds any, executes are refused. */
  holds(holder: HeldWrites): void {
    this.#holders.push(holder);
  }

  /** True when storage answered last and no write is held. */
  get available(): boolean {
    return !this.#down && this.#holders.every((holder) => holder.held === 0);
  }

  /** True once the app closes: nothing waits for storage any more. */
  get closed(): boolean {
    return this.#closed;
  }

  /** Writes held by every holder (a metric). */
  get held(): number {
    return this.#holders.reduce((sum, holder) => sum + holder.held, 0);
  }

  /** A holder was full and gave `count` writes up: logged and counted (`ix_storage_dropped_writes_total`). */
  dropped(kind: string, count: number, error: unknown): void {
    this.droppedWrites.set(kind, (this.droppedWrites.get(kind) ?? 0) + count);
    this.#options.log.error(
      { err: error, kind, count },
      `storage is unavailable and ${kind} held are at their bound: ${count} dropped`,
    );
  }

  /** A storage error was seen: storage is unavailable until a probe answers. Other errors are ignored. */
  failed(error: unknown): void {
    if (!isStorageUnavailable(error) || this.#closed) return;
    if (!this.#down) {
      this.#down = true;
      this.#since = performance.now();
      this.#options.log.error({ err: error }, 'storage is unavailable: executes are refused and writes held until it answers');
    }
    this.#scheduleProbe();
  }

  /** Tries storage again in `probeMs`, unless a try is already due. */
  #scheduleProbe(): void {
    this.#timer ??= setTimeout(() => void this.#probe(), this.#options.probeMs).unref();
  }

  /** Resolves when storage has answered again (at once when it is up), or when the app closes. */
  returned(): Promise<void> {
    if (!this.#down || this.#closed) return Promise.resolve();
    return new Promise((resolve) => this.#returned.add(resolve));
  }

  /** Tries storage once; when it answers, the held writes are written again, and waiters resume. */
  async #probe(): Promise<void> {
    this.#timer = undefined;
    if (this.#probing || this.#closed) return;
    this.#probing = true;
    try {
      await sql`select 1`.execute(this.#options.db);
      if (this.#down) {
        this.#down = false;
        const seconds = ((performance.now() - this.#since) / 1000).toFixed(1);
        this.#options.log.warn({ unavailable_seconds: Number(seconds) }, `storage answers again after ${seconds} s`);
      }
      for (const resolve of this.#returned) resolve();
      this.#returned.clear();
      for (const holder of this.#holders) if (holder.held > 0) await holder.retry();
    } catch (error) {
      this.failed(error);
    } finally {
      this.#probing = false;
    }
    // A holder whose writes failed again has called failed(); one still holding without an error is tried again too.
    if (!this.#closed && (this.#down || this.held > 0)) this.#scheduleProbe();
  }

  /** Stops probing; anything waiting for storage's return resumes (and finds it still away). */
  close(): void {
    this.#closed = true;
    clearTimeout(this.#timer);
    for (const resolve of this.#returned) resolve();
    this.#returned.clear();
  }
}
