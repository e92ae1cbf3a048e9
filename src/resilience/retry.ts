/**
 * When a failed upstream call is tried again, and after how long (docs/resilience.md): pure functions, no timers, no I/O,
 * so the executor can ask them between attempts and the tests can pin every rule.
 *
 * Promises:
 * - `backoffDelayMs` is exponential backoff with full jitter: uniform in [0, min(max, base·2^(attempt-1))], whole ms.
 * - `retryAfterMs` reads a `Retry-After` value (delta-seconds or HTTP-date, RFC 9110 §10.2.3) as ms from now:
 *   undefined when absent or not valid, never negative.
 * - `retryDecision` encodes docs/resilience.md's rules and nothing else: which failures are retried for which operations, at most
 *   `maxAttempts` attempts, a delay of max(backoff, Retry-After), and no retry whose delay does not fit the deadline.
 * - `failureKind` names a failure (an ApiError from the transport or a connector, or an HTTP status) in the terms of
 *   docs/resilience.md; one function, so the retry and the circuit breaker decide "which failure is this" the same way.
 *
 * Own code rather than cockatiel's retry policy: the rules turn on things cockatiel does not know (whether a request
 * surely never reached the upstream, a server's Retry-After against our deadline), and a pure decision is easier to
 * test than a policy object that also sleeps.
 */
import { ApiError } from '../core/errors.ts';

export interface RetrySettings {
  /** Attempts in all, the first one included: 1–10. */
  readonly maxAttempts: number;
  /** The ceiling of the first backoff; it doubles with every attempt. */
  readonly baseDelayMs: number;
  /** The backoff's ceiling never grows past this (a server's Retry-After may: it is bounded by the deadline only). */
  readonly maxDelayMs: number;
}

/** the documented defaults: `{max_attempts: 3, base_delay_ms: 200, max_delay_ms: 10000}`. */
export const defaultRetrySettings: RetrySettings = Object.freeze({ maxAttempts: 3, baseDelayMs: 200, maxDelayMs: 10_000 });

/** An integration's `config.retry` as stored (already validated by the integration schema). */
export interface RetryConfig {
  readonly max_attempts?: number;
  readonly base_delay_ms?: number;
  readonly max_delay_ms?: number;
}

/**
 * The settings of an integration's `config.retry`, each missing field at its default.
 *
 * @example
 * retrySettings({ max_attempts: 5 }); // { maxAttempts: 5, baseDelayMs: 200, maxDelayMs: 10000 }
 */
export function retrySettings(config: RetryConfig | undefined): RetrySettings {
  if (config === undefined) return defaultRetrySettings;
  return Object.freeze({
    maxAttempts: config.max_attempts ?? defaultRetrySettings.maxAttempts,
    baseDelayMs: config.base_delay_ms ?? defaultRetrySettings.baseDelayMs,
    maxDelayMs: config.max_delay_ms ?? defaultRetrySettings.maxDelayMs,
  });
}

/**
 * The wait before the attempt after `attempt` (1 for the wait after the first attempt): full jitter, a whole number
 * of ms uniform in [0, min(maxDelayMs, baseDelayMs·2^(attempt-1))].
 *
 * @example
 * backoffDelayMs(1, defaultRetrySettings, () => 0.5); // 100: half of the first ceiling, 200 ms
 */
export function backoffDelayMs(attempt: number, settings: RetrySettings, random: () => number = Math.random): number {
  // 2^1024 is Infinity: the exponent is bounded long before that matters (max_attempts is at most 10).
  const ceiling = Math.min(settings.maxDelayMs, settings.baseDelayMs * 2 ** Math.min(Math.max(0, attempt - 1), 64));
  // random() is in [0, 1): floor(r·(c+1)) spreads it over the c+1 whole values 0…c, both ends included.
  return Math.min(ceiling, Math.floor(random() * (Math.floor(ceiling) + 1)));
}

/** RFC 9111 §1.2.2: a delta-seconds larger than this is taken as this (about 68 years). */
const largestDeltaSeconds = 2 ** 31;

const months = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const time = '(\\d{2}):(\\d{2}):(\\d{2})';
const month = `(${months.join('|')})`;
/** `Sun, 06 Nov 1994 08:49:37 GMT`, the form senders must use. */
const imfFixdate = new RegExp(`^(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun), (\\d{2}) ${month} (\\d{4}) ${time} GMT$`);
/** `Sunday, 06-Nov-94 08:49:37 GMT`, obsolete but to be accepted (RFC 9110 §5.6.7). */
const rfc850Date = new RegExp(
  `^(?:Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday), (\\d{2})-${month}-(\\d{2}) ${time} GMT$`,
);
/** `Sun Nov  6 08:49:37 1994` (C's asctime), obsolete but to be accepted. */
const asctimeDate = new RegExp(`^(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) ${month} ([ \\d]\\d) ${time} (\\d{4})$`);

/** ms since the epoch of a date and time in UTC, or undefined when a field is out of range (Feb 30, 24:00:00). */
function utc(year: number, monthName: string, day: number, hour: number, minute: number, second: number): number | undefined {
  const monthIndex = months.indexOf(monthName);
  // 60 is a leap second; Date has none, so it is read as the next minute's first.
  if (hour > 23 || minute > 59 || second > 60 || day < 1) return undefined;
  const ms = Date.UTC(year, monthIndex, day, hour, minute, second);
  // Date.UTC rolls Feb 30 over into March: a date that does not come back as itself is not a date.
  return new Date(Date.UTC(year, monthIndex, day)).getUTCDate() === day ? ms : undefined;
}

/** An HTTP-date (RFC 9110 §5.6.7) as ms since the epoch, or undefined. */
function parseHttpDate(value: string, nowMs: number): number | undefined {
  let match = imfFixdate.exec(value);
  if (match) {
    const [, day, monthName, year, hour, minute, second] = match;
    return utc(Number(year), monthName, Number(day), Number(hour), Number(minute), Number(second));
  }
  match = rfc850Date.exec(value);
  if (match) {
    const [, day, monthName, shortYear, hour, minute, second] = match;
    // A two-digit year more than 50 years in the future is the most recent past year with those digits (§5.6.7).
    const thisYear = new Date(nowMs).getUTCFullYear();
    let year = Math.floor(thisYear / 100) * 100 + Number(shortYear);
    if (year > thisYear + 50) year -= 100;
    return utc(year, monthName, Number(day), Number(hour), Number(minute), Number(second));
  }
  match = asctimeDate.exec(value);
  if (match) {
    const [, monthName, day, hour, minute, second, year] = match;
    return utc(Number(year), monthName, Number(day.trim()), Number(hour), Number(minute), Number(second));
  }
  return undefined;
}

/**
 * A `Retry-After` value as ms to wait from `nowMs`: delta-seconds (`120`) or an HTTP-date (`Wed, 21 Oct 2015
 * 07:28:00 GMT`, and the two obsolete forms). Undefined when absent or not one of those; a date in the past is 0.
 *
 * @example
 * retryAfterMs('2', Date.now()); // 2000
 * retryAfterMs('soon', Date.now()); // undefined
 */
export function retryAfterMs(value: string | undefined, nowMs: number): number | undefined {
  if (value === undefined) return undefined;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Math.min(Number(text), largestDeltaSeconds) * 1000;
  const at = parseHttpDate(text, nowMs);
  return at === undefined ? undefined : Math.max(0, at - nowMs);
}

/**
 * A failure in the terms of docs/resilience.md:
 * - `dns`, `refused`: no connection could be made;
 * - `throttled` (429), `unavailable` (503): the upstream answered that it would not take the request now;
 * - `timeout`, `reset`, `bad_gateway` (502), `gateway_timeout` (504): the request may have been taken and lost;
 * - `final`: anything else (a 4xx, a 500, TLS, the egress policy, a GraphQL error in a 200, a SOAP fault…): never
 *   retried, and not an upstream outage for the circuit breaker.
 */
export type FailureKind =
  | 'dns'
  | 'refused'
  | 'throttled'
  | 'unavailable'
  | 'timeout'
  | 'reset'
  | 'bad_gateway'
  | 'gateway_timeout'
  | 'final';

/** The kind of an HTTP answer's status: docs/resilience.md names 429, 502, 503 and 504; every other status is `final`. */
export function statusFailureKind(status: number): FailureKind {
  if (status === 429) return 'throttled';
  if (status === 503) return 'unavailable';
  if (status === 502) return 'bad_gateway';
  if (status === 504) return 'gateway_timeout';
  return 'final';
}

/**
 * The kind of a failed attempt, from the ApiError the transport (transport/failures.ts) or a connector threw: an
 * unreachable upstream by its `details.cause`, a timeout by its code, an HTTP answer by `details.upstream_status`
 * (whatever the code: a GraphQL 503 with `errors` is still a 503). Anything else is `final`.
 */
export function failureKind(failure: unknown): FailureKind {
  if (!(failure instanceof ApiError)) return 'final';
  if (failure.code === 'upstream_timeout') return 'timeout';
  const cause = failure.details?.cause;
  if (failure.code === 'upstream_unreachable') {
    // `tls`, `proxy` and `network` (EHOSTUNREACH, a connect timeout) are not in the documented list (`dns`, `refused`).
    return cause === 'dns' || cause === 'refused' || cause === 'reset' ? cause : 'final';
  }
  const status = failure.details?.upstream_status;
  return typeof status === 'number' ? statusFailureKind(status) : 'final';
}

/** Whether a call that ended in this kind of failure counts towards opening the circuit breaker (docs/resilience.md). */
export function isUpstreamOutage(kind: FailureKind): boolean {
  return kind !== 'final';
}

/** A failed attempt, and what the executor knows about it and about the time left. */
export interface FailedAttempt {
  readonly kind: FailureKind;
  /** `receive`, `test`, a GraphQL query in `batch`/`sync`: running it twice changes nothing upstream. */
  readonly operationChangesNothing: boolean;
  /** The transport handed no byte of the request to a socket (sent-tracking.ts). */
  readonly surelyNotSent: boolean;
  /** The attempt that failed, 1 for the first. */
  readonly attempt: number;
  readonly settings: RetrySettings;
  /** Time left before the call's deadline. */
  readonly remainingMs: number;
  /** The answer's Retry-After (retryAfterMs), when it had one. */
  readonly retryAfterMs?: number;
  /** For tests; Math.random by default. */
  readonly random?: () => number;
}

export type RetryDecision =
  | { readonly retry: true; readonly delayMs: number }
  | {
      readonly retry: false;
      /**
       * `not_retryable`: never retried this kind; `send_not_retried`: an operation that changes something, whose
       * failure is retried only for reads (or whose request may have left); `attempts_exhausted`: `maxAttempts` were
       * made; `deadline`: the wait would not end before the deadline.
       */
      readonly why: 'not_retryable' | 'send_not_retried' | 'attempts_exhausted' | 'deadline';
    };

/** Kinds retried for every operation that changes nothing upstream, and the first two for a `send` (see retryDecision). */
const retriedForAll = new Set<FailureKind>(['dns', 'refused', 'throttled', 'unavailable']);
/** Kinds retried only for an operation that changes nothing upstream. */
const retriedForReads = new Set<FailureKind>(['timeout', 'reset', 'bad_gateway', 'gateway_timeout']);

/**
 * Whether to try a failed attempt again, and after how long (docs/resilience.md).
 *
 * Which failures, as docs/resilience.md lists them: for an operation that changes nothing upstream, `dns`/`refused`,
 * `429`/`503`, timeouts, resets and `502`/`504`. A `send` is retried only when the request surely never reached the
 * upstream; this is how that is read:
 * - `dns`/`refused` (no connection was made): retried when the transport confirms no byte left (`surelyNotSent`,
 *   sent-tracking.ts). They always have it; asking anyway means a misnamed failure can never send a write twice.
 * - `429`/`503`: not retried for a `send`. The request arrived: an answer came back. Both statuses say the server
 *   refused it without acting on it (RFC 6585 §4, RFC 9110 §15.6.4), but that is the upstream's word, and a 503 may
 *   come from a gateway that gave up on an origin already working on it. "Surely never reached" is decided from the
 *   transport, not from codes: a write that may be applied twice is the worse failure.
 * - timeouts, resets, `502`/`504`: never retried for a `send`, even when `surelyNotSent` (a deadline that fired
 *   while connecting): they are listed for operations that change nothing only.
 *
 * How long: max(backoff, Retry-After); Retry-After is honoured beyond `maxDelayMs`, up to the deadline. No retry when
 * that wait would reach the deadline (the next attempt would have no time left).
 *
 * @example
 * retryDecision({ kind: 'refused', operationChangesNothing: false, surelyNotSent: true, attempt: 1,
 *   settings: defaultRetrySettings, remainingMs: 30_000 }); // { retry: true, delayMs: 0…200 }
 */
export function retryDecision(failed: FailedAttempt): RetryDecision {
  const { kind } = failed;
  const forAll = retriedForAll.has(kind);
  if (!forAll && !retriedForReads.has(kind)) return { retry: false, why: 'not_retryable' };
  // A send: only a connection that could not be made, and only when the transport confirms no byte left.
  if (!failed.operationChangesNothing && !((kind === 'dns' || kind === 'refused') && failed.surelyNotSent)) {
    return { retry: false, why: 'send_not_retried' };
  }
  if (failed.attempt >= failed.settings.maxAttempts) return { retry: false, why: 'attempts_exhausted' };
  const delayMs = Math.max(backoffDelayMs(failed.attempt, failed.settings, failed.random), failed.retryAfterMs ?? 0);
  if (delayMs >= failed.remainingMs) return { retry: false, why: 'deadline' };
  return { retry: true, delayMs };
}
