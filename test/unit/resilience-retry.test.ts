import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { ApiError } from '../../src/core/errors.ts';
import {
  backoffDelayMs,
  defaultRetrySettings,
  type FailedAttempt,
  type FailureKind,
  failureKind,
  isUpstreamOutage,
  retryAfterMs,
  retryDecision,
  retrySettings,
  statusFailureKind,
} from '../../src/resilience/retry.ts';

/**
 * The retry rules of docs/resilience.md as pure functions: backoff with full jitter, Retry-After in both forms, and which
 * failure of which operation is tried again. No timers: every case is a value in, a value out.
 */

const now = Date.UTC(2025, 5, 15, 12, 0, 0);

describe('retrySettings', () => {
  test('the defaults are the documented ones: 3 attempts, 200 ms base, 10 s ceiling', () => {
    assert.deepEqual(retrySettings(undefined), { maxAttempts: 3, baseDelayMs: 200, maxDelayMs: 10_000 });
    assert.ok(Object.isFrozen(defaultRetrySettings));
  });

  test('a config sets what it names and leaves the rest at the defaults', () => {
    assert.deepEqual(retrySettings({ max_attempts: 5 }), { maxAttempts: 5, baseDelayMs: 200, maxDelayMs: 10_000 });
    assert.deepEqual(retrySettings({ base_delay_ms: 50, max_delay_ms: 400 }), {
      maxAttempts: 3,
      baseDelayMs: 50,
      maxDelayMs: 400,
    });
  });
});

describe('backoffDelayMs', () => {
  test('the ceiling doubles from the base with each attempt and stops at the maximum', () => {
    const top = () => 0.999_999_999;
    const ceilings = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10].map((attempt) => backoffDelayMs(attempt, defaultRetrySettings, top));
    assert.deepEqual(ceilings, [200, 400, 800, 1600, 3200, 6400, 10_000, 10_000, 10_000, 10_000]);
  });

  test('full jitter: 0 at the bottom of the random range, half way in the middle', () => {
    assert.equal(
      backoffDelayMs(3, defaultRetrySettings, () => 0),
      0,
    );
    assert.equal(
      backoffDelayMs(1, defaultRetrySettings, () => 0.5),
      100,
    );
  });

  test('always a whole number of ms in [0, ceiling], for any attempt and settings', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 2000 }),
        fc.integer({ min: 0, max: 100_000 }),
        fc.integer({ min: 0, max: 1_000_000 }),
        fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
        (attempt, baseDelayMs, maxDelayMs, r) => {
          const delay = backoffDelayMs(attempt, { maxAttempts: 10, baseDelayMs, maxDelayMs }, () => r);
          const ceiling = Math.min(maxDelayMs, baseDelayMs * 2 ** Math.min(attempt - 1, 64));
          return Number.isInteger(delay) && delay >= 0 && delay <= ceiling;
        },
      ),
    );
  });

  test('spread over the whole range, not bunched at one end', () => {
    const seen = new Set<number>();
    for (let i = 0; i <= 200; i++) seen.add(backoffDelayMs(1, defaultRetrySettings, () => i / 201));
    assert.ok(seen.has(0) && seen.has(199), `from 0 to the ceiling: ${Math.min(...seen)}…${Math.max(...seen)}`);
  });
});

describe('retryAfterMs', () => {
  test('delta-seconds', () => {
    assert.equal(retryAfterMs('120', now), 120_000);
    assert.equal(retryAfterMs('0', now), 0);
    assert.equal(retryAfterMs(' 3 ', now), 3000, 'surrounding whitespace is not part of the value');
  });

  test('a delta larger than 2^31 seconds is taken as 2^31 (RFC 9111 §1.2.2)', () => {
    assert.equal(retryAfterMs('9'.repeat(400), now), 2 ** 31 * 1000);
  });

  test('an IMF-fixdate in the future: the ms until then', () => {
    assert.equal(retryAfterMs('Sun, 15 Jun 2025 12:00:30 GMT', now), 30_000);
  });

  test('the obsolete forms are accepted too (RFC 9110 §5.6.7)', () => {
    assert.equal(retryAfterMs('Sunday, 15-Jun-25 12:01:00 GMT', now), 60_000, 'rfc850-date');
    assert.equal(retryAfterMs('Sun Jun 15 12:00:05 2025', now), 5000, 'asctime-date');
    const early = Date.UTC(2025, 5, 5, 12, 0, 0);
    assert.equal(retryAfterMs('Thu Jun  5 12:00:07 2025', early), 7000, 'asctime with a space-padded day');
  });

  test('a two-digit year more than 50 years ahead is in the past century', () => {
    assert.equal(retryAfterMs('Sunday, 15-Jun-80 12:00:00 GMT', now), 0, '2080 would be 55 years ahead: 1980, past');
    assert.equal(retryAfterMs('Monday, 15-Jun-70 12:00:00 GMT', now), Date.UTC(2070, 5, 15, 12) - now, '2070 is 45 years ahead');
  });

  test('a date in the past is 0, never negative', () => {
    assert.equal(retryAfterMs('Sun, 06 Nov 1994 08:49:37 GMT', now), 0);
  });

  test('absent or not a valid value: undefined', () => {
    for (const value of [
      undefined,
      '',
      '-1',
      '1.5',
      '+3',
      'soon',
      '0x10',
      '2025-06-15T12:00:30Z',
      'Sun, 15 Jun 2025 12:00:30 UTC',
      'Sun, 31 Feb 2025 12:00:30 GMT',
      'Sun, 15 Jun 2025 25:00:30 GMT',
      'Sun, 15 Foo 2025 12:00:30 GMT',
      'Sun, 5 Jun 2025 12:00:30 GMT',
    ]) {
      assert.equal(retryAfterMs(value, now), undefined, JSON.stringify(value));
    }
  });
});

describe('failureKind', () => {
  const unreachable = (cause: string) => new ApiError('upstream_unreachable', 'x', { cause });
  const http = (status: number) => new ApiError('upstream_http_error', 'x', { upstream_status: status });

  test('unreachable upstreams by their cause: dns, refused and reset by name, the others final', () => {
    assert.equal(failureKind(unreachable('dns')), 'dns');
    assert.equal(failureKind(unreachable('refused')), 'refused');
    assert.equal(failureKind(unreachable('reset')), 'reset');
    for (const cause of ['tls', 'proxy', 'network']) assert.equal(failureKind(unreachable(cause)), 'final', cause);
  });

  test("timeouts, the request's and the execute's", () => {
    assert.equal(failureKind(new ApiError('upstream_timeout')), 'timeout');
    assert.equal(failureKind(new ApiError('upstream_timeout', 'x', { scope: 'execute' })), 'timeout');
  });

  test('HTTP answers by their status, whatever the error code', () => {
    assert.equal(failureKind(http(429)), 'throttled');
    assert.equal(failureKind(http(503)), 'unavailable');
    assert.equal(failureKind(http(502)), 'bad_gateway');
    assert.equal(failureKind(http(504)), 'gateway_timeout');
    assert.equal(failureKind(new ApiError('graphql_errors', 'x', { upstream_status: 503 })), 'unavailable');
    for (const status of [400, 401, 404, 409, 500, 501]) assert.equal(failureKind(http(status)), 'final', String(status));
  });

  test('anything else is final, and only final is no outage', () => {
    assert.equal(failureKind(new ApiError('egress_denied')), 'final');
    assert.equal(failureKind(new ApiError('soap_fault')), 'final');
    assert.equal(failureKind(new Error('a bug')), 'final');
    assert.equal(failureKind('not an error'), 'final');
    assert.equal(statusFailureKind(200), 'final');
    assert.equal(isUpstreamOutage('final'), false);
    for (const kind of [
      'dns',
      'refused',
      'throttled',
      'unavailable',
      'timeout',
      'reset',
      'bad_gateway',
      'gateway_timeout',
    ] as const) {
      assert.equal(isUpstreamOutage(kind), true, kind);
    }
  });
});

describe('retryDecision', () => {
  /** A first attempt with plenty of time left; the jitter fixed at its midpoint. */
  const attempt = (overrides: Partial<FailedAttempt> & { kind: FailureKind }): FailedAttempt => ({
    operationChangesNothing: true,
    surelyNotSent: false,
    attempt: 1,
    settings: defaultRetrySettings,
    remainingMs: 60_000,
    random: () => 0.5,
    ...overrides,
  });
  const retried = (failed: FailedAttempt) => retryDecision(failed).retry;

  const all: FailureKind[] = ['dns', 'refused', 'throttled', 'unavailable', 'timeout', 'reset', 'bad_gateway', 'gateway_timeout'];

  test('an operation that changes nothing: every kind docs/resilience.md names is retried, final is not', () => {
    for (const kind of all) assert.equal(retried(attempt({ kind })), true, kind);
    assert.deepEqual(retryDecision(attempt({ kind: 'final' })), { retry: false, why: 'not_retryable' });
    assert.deepEqual(retryDecision(attempt({ kind: 'final', surelyNotSent: true })), { retry: false, why: 'not_retryable' });
  });

  test('a send: dns and refused when surely not sent; 429 and 503 never (the request arrived)', () => {
    const send = (kind: FailureKind, surelyNotSent: boolean) => attempt({ kind, operationChangesNothing: false, surelyNotSent });
    assert.equal(retried(send('dns', true)), true);
    assert.equal(retried(send('refused', true)), true);
    assert.deepEqual(
      retryDecision(send('refused', false)),
      { retry: false, why: 'send_not_retried' },
      'the transport has the last word',
    );
    for (const kind of ['throttled', 'unavailable'] as const) {
      assert.deepEqual(retryDecision(send(kind, false)), { retry: false, why: 'send_not_retried' }, kind);
    }
  });

  test('a send: timeouts, resets, 502 and 504 never, even when the request surely never left', () => {
    for (const kind of ['timeout', 'reset', 'bad_gateway', 'gateway_timeout'] as const) {
      for (const surelyNotSent of [false, true]) {
        const decision = retryDecision(attempt({ kind, operationChangesNothing: false, surelyNotSent }));
        assert.deepEqual(decision, { retry: false, why: 'send_not_retried' }, `${kind}, surelyNotSent ${surelyNotSent}`);
      }
    }
  });

  test('at most maxAttempts attempts in all', () => {
    assert.equal(retried(attempt({ kind: 'timeout', attempt: 2 })), true, 'the third of three may follow');
    assert.deepEqual(retryDecision(attempt({ kind: 'timeout', attempt: 3 })), { retry: false, why: 'attempts_exhausted' });
    const once = { ...defaultRetrySettings, maxAttempts: 1 };
    assert.deepEqual(retryDecision(attempt({ kind: 'refused', settings: once })), { retry: false, why: 'attempts_exhausted' });
  });

  test('the delay is the backoff when there is no Retry-After', () => {
    assert.deepEqual(retryDecision(attempt({ kind: 'reset', attempt: 2 })), { retry: true, delayMs: 200 });
  });

  test('Retry-After wins when it is longer, even beyond maxDelayMs, as long as it fits the deadline', () => {
    assert.deepEqual(retryDecision(attempt({ kind: 'throttled', retryAfterMs: 1000 })), { retry: true, delayMs: 1000 });
    assert.deepEqual(retryDecision(attempt({ kind: 'throttled', retryAfterMs: 20_000 })), { retry: true, delayMs: 20_000 });
    assert.deepEqual(retryDecision(attempt({ kind: 'throttled', retryAfterMs: 0 })), { retry: true, delayMs: 100 });
  });

  test('no retry when the wait would reach the deadline', () => {
    assert.deepEqual(retryDecision(attempt({ kind: 'throttled', retryAfterMs: 60_000 })), { retry: false, why: 'deadline' });
    assert.deepEqual(retryDecision(attempt({ kind: 'throttled', retryAfterMs: 5000, remainingMs: 4999 })), {
      retry: false,
      why: 'deadline',
    });
    assert.deepEqual(retryDecision(attempt({ kind: 'refused', remainingMs: 100 })), { retry: false, why: 'deadline' });
    assert.deepEqual(retryDecision(attempt({ kind: 'refused', remainingMs: 0, random: () => 0 })), {
      retry: false,
      why: 'deadline',
    });
    assert.deepEqual(retryDecision(attempt({ kind: 'refused', remainingMs: 101 })), { retry: true, delayMs: 100 });
  });
});
