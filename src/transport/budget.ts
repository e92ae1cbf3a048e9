import { ApiError } from '../core/errors.ts';
import type { FailureKind, RetrySettings } from '../resilience/retry.ts';

/**
 * What one execute may spend upstream, all its requests together (pages, batch entries, sync parts,
 * retries, WSDL documents): decompressed bytes and wall time (docs/limits.md#upstreams). Made by the
 * executor per call and spent by `sendUpstream`, so no connector can forget it.
 *
 * @example
 * const budget = new ExecuteBudget({ maxBytes: 32 * 1024 * 1024, deadlineMs: 300_000 });
 * await sendUpstream(dispatcher, { ...request, budget });
 */
export class ExecuteBudget {
  readonly maxBytes: number;
  readonly deadlineMs: number;
  /** `performance.now()` at which the whole execute must be over. */
  readonly endsAt: number;
  #usedBytes = 0;
  #posts = 0;

  constructor(limits: { maxBytes: number; deadlineMs: number }, now = performance.now()) {
    this.maxBytes = limits.maxBytes;
    this.deadlineMs = limits.deadlineMs;
    this.endsAt = now + limits.deadlineMs;
  }

  get usedBytes(): number {
    return this.#usedBytes;
  }

  /** POST requests sent so far (GraphQL documents, SOAP calls); GETs (WSDL documents, raw mode's test) are not counted. */
  get postsSent(): number {
    return this.#posts;
  }

  /** Counts a POST about to be sent. */
  countPost(): void {
    this.#posts += 1;
  }

  /**
   * Set by the executor when a `send` (a write) got as far as sending its request: from then on, a failure must be
   * kept for an Idempotency-Key's replay, never given back for a second try that could write twice.
   */
  wroteUpstream = false;

  /** Milliseconds spent waiting on upstream requests (from sending to the whole body read), for Server-Timing. */
  upstreamMs = 0;

  /**
   * Taken when an upstream has answered, before its answer is read: undefined to go on, or a promise to wait for
   * this tenant's turn of the event loop (FairTurns). Without one, never waits.
   */
  takeTurn: () => Promise<void> | undefined = () => undefined;

  /**
   * How a failed upstream request of this execute is tried again (the integration's `config.retry`, docs/resilience.md);
   * undefined: never. Set by the execution service.
   */
  retry: RetrySettings | undefined = undefined;

  /** Upstream requests tried again so far, all of this execute's requests together. */
  retries = 0;

  /** Told of each retry, by the kind of failure it follows (the retries metric). */
  onRetry: (kind: FailureKind) => void = () => {};

  /** The execute's attempts as answers and records give them (`attempts`): the first try and every retry. */
  get attempts(): number {
    return 1 + this.retries;
  }

  /**
   * Asked once, before this execute's first upstream request (the integration's circuit breaker): undefined to go on,
   * or a promise that rejects to refuse the call. An execute that never gets as far as a request never asks it.
   */
  gate: (() => Promise<void> | undefined) | undefined = undefined;

  /** The jitter of retry waits; fixed in tests. */
  random: () => number = Math.random;

  /** The wait before a retry; a settable clock's in tests. */
  sleep: (ms: number) => Promise<void> = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

  /** The gate, the first time; undefined after. */
  passGate(): Promise<void> | undefined {
    const gate = this.gate;
    if (gate === undefined) return undefined;
    this.gate = undefined;
    return gate();
  }

  remainingBytes(): number {
    return Math.max(0, this.maxBytes - this.#usedBytes);
  }

  remainingMs(now = performance.now()): number {
    return Math.max(0, this.endsAt - now);
  }

  /** Counts a response body read; past the limit, `upstream_response_too_large` for the whole call. */
  spend(bytes: number): void {
    this.#usedBytes += bytes;
    if (this.#usedBytes > this.maxBytes) throw this.exhaust();
  }

  /** Marks the bytes as spent (an answer was cut at what was left) and returns the error that says so. */
  exhaust(): ApiError {
    this.#usedBytes = Math.max(this.#usedBytes, this.maxBytes + 1);
    return this.tooLarge();
  }

  /**
   * Throws when the execute may send no further request: its deadline has passed, or its bytes are spent (a batch's
   * later entries, a retry). Nothing is sent that could not be read.
   */
  assertCanSend(): void {
    if (this.remainingMs() <= 0) throw this.timedOut();
    if (this.#usedBytes > this.maxBytes) throw this.tooLarge();
  }

  tooLarge(): ApiError {
    return new ApiError(
      'upstream_response_too_large',
      `The upstream answers of this execute together are larger than the limit of ${this.maxBytes} bytes.`,
      { limit_bytes: this.maxBytes, scope: 'execute' },
    );
  }

  timedOut(): ApiError {
    const seconds = this.deadlineMs / 1000;
    return new ApiError('upstream_timeout', `The execute did not finish within its deadline of ${seconds} s.`, {
      timeout_seconds: seconds,
      scope: 'execute',
    });
  }
}
