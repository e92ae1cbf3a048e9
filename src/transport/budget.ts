import { ApiError } from '../core/errors.ts';
import type { FailureKind, RetrySettings } from '../resilience/retry.ts';

/** What one execute may spend upstream: fixed when it starts (docs/limits.md#upstreams). */
export interface ExecuteLimits {
  readonly maxBytes: number;
  readonly deadlineMs: number;
}

/**
 * How this execute's upstream requests are governed, given by whoever starts it and never changed after: the
 * integration's retry settings, its circuit breaker and the tenant's fair turns. The transport asks; it decides nothing
 * of its own (docs/architecture.md#a-request-one-way).
 */
export interface UpstreamPolicy {
  /** How a failed request is tried again (the integration's `config.retry`, docs/resilience.md); undefined: never. */
  readonly retry: RetrySettings | undefined;
  /**
   * Asked once, before the execute's first upstream request (the integration's circuit breaker): resolves to go on,
   * rejects to refuse the call. An execute that never gets as far as a request never asks it.
   */
  readonly admit?: () => Promise<void>;
  /**
   * Taken when an upstream has answered, before its answer is read: undefined to go on, or a promise to wait for this
   * tenant's turn of the event loop (FairTurns).
   */
  readonly takeTurn?: () => Promise<void> | undefined;
  /** Told of each retry, by the kind of failure it follows (the retries metric). */
  readonly retried?: (kind: FailureKind) => void;
  /** The jitter of retry waits; fixed in tests. */
  readonly random?: () => number;
  /** The wait before a retry; a settable clock's in tests. */
  readonly sleep?: (ms: number) => Promise<void>;
}

/** No retries, no breaker, no turns: a budget's requests go out once, as they come. */
export const plainUpstream: UpstreamPolicy = { retry: undefined };

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * What the execute has spent and done upstream so far, added to by the transport and the executor and read once it is
 * over (its record's `attempts`, Server-Timing, whether a write reached the upstream). The only mutable part of a
 * budget.
 */
export class ExecuteStats {
  /** Decompressed response bytes read. */
  usedBytes = 0;
  /** POST requests that may have reached the upstream (GraphQL documents, SOAP calls); GETs are not counted. */
  posts = 0;
  /** Upstream requests tried again, all of this execute's requests together. */
  retries = 0;
  /** Milliseconds spent waiting on upstream requests (from sending to the whole body read), for Server-Timing. */
  upstreamMs = 0;
  /**
   * Set by the executor when a `send` (a write) got as far as sending its request: from then on, a failure must be
   * kept for an Idempotency-Key's replay, never given back for a second try that could write twice.
   */
  wroteUpstream = false;
  /** Whether the policy's `admit` has been asked. */
  admitted = false;

  /** The execute's attempts as answers and records give them (`attempts`): the first try and every retry. */
  get attempts(): number {
    return 1 + this.retries;
  }
}

/**
 * One execute's upstream budget, all its requests together (pages, batch entries, sync parts, retries, WSDL
 * documents): immutable limits (decompressed bytes and wall time), the policy its requests follow and the stats they
 * add to. Made by the execution runner per call and spent by `sendUpstream`, so no connector can forget it.
 *
 * @example
 * const budget = new ExecuteBudget({ maxBytes: 32 * 1024 * 1024, deadlineMs: 300_000 }, { retry: undefined });
 * await sendUpstream(dispatcher, { ...request, budget });
 */
export class ExecuteBudget {
  readonly maxBytes: number;
  readonly deadlineMs: number;
  /** `performance.now()` at which the whole execute must be over. */
  readonly endsAt: number;
  readonly policy: UpstreamPolicy;
  readonly stats = new ExecuteStats();

  constructor(limits: ExecuteLimits, policy: UpstreamPolicy = plainUpstream, now = performance.now()) {
    this.maxBytes = limits.maxBytes;
    this.deadlineMs = limits.deadlineMs;
    this.endsAt = now + limits.deadlineMs;
    this.policy = policy;
  }

  /** The policy's admission, the first time; undefined after, or without one. */
  admit(): Promise<void> | undefined {
    const admit = this.policy.admit;
    if (admit === undefined || this.stats.admitted) return undefined;
    this.stats.admitted = true;
    return admit();
  }

  /** The tenant's turn to read an answer: undefined to go on at once. */
  takeTurn(): Promise<void> | undefined {
    return this.policy.takeTurn?.();
  }

  /** Counts a retry about to be waited for, and tells the policy. */
  countRetry(kind: FailureKind): void {
    this.stats.retries += 1;
    this.policy.retried?.(kind);
  }

  /** The wait before a retry, by the policy's clock. */
  sleep(ms: number): Promise<void> {
    return (this.policy.sleep ?? sleep)(ms);
  }

  /** The jitter of retry waits. */
  random(): number {
    return (this.policy.random ?? Math.random)();
  }

  remainingBytes(): number {
    return Math.max(0, this.maxBytes - this.stats.usedBytes);
  }

  remainingMs(now = performance.now()): number {
    return Math.max(0, this.endsAt - now);
  }

  /** Counts a response body read; past the limit, `upstream_response_too_large` for the whole call. */
  spend(bytes: number): void {
    this.stats.usedBytes += bytes;
    if (this.stats.usedBytes > this.maxBytes) throw this.exhaust();
  }

  /** Marks the bytes as spent (an answer was cut at what was left) and returns the error that says so. */
  exhaust(): ApiError {
    this.stats.usedBytes = Math.max(this.stats.usedBytes, this.maxBytes + 1);
    return this.tooLarge();
  }

  /**
   * Throws when the execute may send no further request: its deadline has passed, or its bytes are spent (a batch's
   * later entries, a retry). Nothing is sent that could not be read.
   */
  assertCanSend(): void {
    if (this.remainingMs() <= 0) throw this.timedOut();
    if (this.stats.usedBytes > this.maxBytes) throw this.tooLarge();
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
