import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import type { Dispatcher } from 'undici';
import { createEgressDispatcher } from '../src/egress/dispatcher.ts';
import { createEgressPolicy } from '../src/egress/policy.ts';
import { ApiError } from '../src/errors.ts';
import { MemoryBreakers } from '../src/resilience/breaker.ts';
import {
  defaultRetrySettings,
  type FailureKind,
  failureKind,
  isUpstreamOutage,
  retryAfterMs,
  retryDecision,
  statusFailureKind,
} from '../src/resilience/retry.ts';
import { watchSending } from '../src/resilience/sent-tracking.ts';
import { sendUpstream } from '../src/transport/upstream.ts';
import { failNThenSucceed, ok, reservedPort, type ScriptedUpstream, scriptedUpstream } from './helpers/scripted-upstream.ts';

/**
 * The resilience blocks used together the way the executor will: the transport as it is (sendUpstream, through the
 * egress dispatcher and a send watch), the retry decision between attempts, the breaker around the call. The waits
 * the decision asks for are recorded, not slept: the test checks what would be waited, and runs at once.
 */

const dispatcher = createEgressDispatcher(createEgressPolicy({ allowPrivate: true }));
const upstreams: ScriptedUpstream[] = [];
after(async () => {
  await Promise.all(upstreams.map((upstream) => upstream.close()));
  await dispatcher.close();
});

async function upstream(...args: Parameters<typeof scriptedUpstream>): Promise<ScriptedUpstream> {
  const started = await scriptedUpstream(...args);
  upstreams.push(started);
  return started;
}

interface CallResult {
  status?: number;
  error?: unknown;
  attempts: number;
  /** The waits retryDecision asked for between attempts. */
  waits: number[];
  /** Why the last failure was not retried. */
  why?: string;
}

/** A sketch of the executor's loop: one call, its attempts, and the decision after each failed one. */
async function call(
  url: string,
  operationChangesNothing: boolean,
  options: { dispatcher?: Dispatcher; beforeRetry?: () => Promise<void> } = {},
): Promise<CallResult> {
  const waits: number[] = [];
  for (let attempt = 1; ; attempt++) {
    const watch = watchSending(options.dispatcher ?? dispatcher);
    let kind: FailureKind;
    let retryAfter: number | undefined;
    let error: unknown;
    let status: number | undefined;
    try {
      const response = await sendUpstream(watch.dispatcher, {
        url,
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{"query":"mutation { write }"}',
        timeoutMs: 10_000,
        maxBodyBytes: 65_536,
      });
      status = response.status;
      if (status < 400) return { status, attempts: attempt, waits };
      kind = statusFailureKind(status);
      retryAfter = retryAfterMs(response.headers['retry-after'], Date.now());
    } catch (thrown) {
      error = thrown;
      kind = failureKind(thrown);
    }
    const decision = retryDecision({
      kind,
      operationChangesNothing,
      surelyNotSent: watch.surelyNotSent,
      attempt,
      settings: defaultRetrySettings,
      remainingMs: 60_000,
      retryAfterMs: retryAfter,
      random: () => 0.5,
    });
    if (!decision.retry) return { status, error, attempts: attempt, waits, why: decision.why };
    waits.push(decision.delayMs);
    await options.beforeRetry?.();
  }
}

describe('the blocks together', () => {
  test('a receive against a 503, a 503, then an answer: three attempts, backoff between them', async () => {
    const target = await upstream(failNThenSucceed(2, 'unavailable'));
    const result = await call(target.url, true);
    assert.equal(result.status, 200);
    assert.equal(result.attempts, 3);
    assert.deepEqual(result.waits, [100, 200], 'full jitter at its midpoint: half of 200, half of 400');
    assert.equal(target.requests, 3);
  });

  test('a send told 429 with Retry-After: 1 waits that second and is sent again', async () => {
    const target = await upstream(['throttled', ok]);
    const result = await call(target.url, false);
    assert.equal(result.status, 200);
    assert.deepEqual(result.waits, [1000]);
    assert.equal(target.requests, 2);
  });

  test('a send whose upstream read it and reset: not sent again', async () => {
    const target = await upstream(['reset-after-read', ok]);
    const result = await call(target.url, false);
    assert.ok(result.error instanceof ApiError && result.error.code === 'upstream_unreachable', String(result.error));
    assert.equal(result.why, 'send_not_retried');
    assert.equal(result.attempts, 1);
    assert.equal(target.requests, 1, 'the write reached the upstream once, never twice');
  });

  test('a receive whose upstream read it and reset: tried again', async () => {
    const target = await upstream(['reset-after-read', ok]);
    const result = await call(target.url, true);
    assert.equal(result.status, 200);
    assert.equal(result.attempts, 2);
  });

  test('a send to a port that is refused, then opens: sent again, and it arrives once', async () => {
    const later = await reservedPort();
    let opened: ScriptedUpstream | undefined;
    const result = await call(later.url, false, {
      beforeRetry: async () => {
        if (opened) return;
        opened = await later.open([ok]);
        upstreams.push(opened);
      },
    });
    assert.equal(result.status, 200);
    assert.equal(result.attempts, 2);
    assert.equal(opened?.requests, 1);
  });

  test('a send the egress policy refuses: surely not sent, but never retried (it is no outage)', async () => {
    const denied = createEgressDispatcher(createEgressPolicy({ allowPrivate: false }));
    try {
      const target = await upstream([ok]);
      const result = await call(target.url, false, { dispatcher: denied });
      assert.ok(result.error instanceof ApiError && result.error.code === 'egress_denied');
      assert.equal(result.why, 'not_retryable');
      assert.equal(isUpstreamOutage(failureKind(result.error)), false);
      assert.equal(target.connections, 0);
    } finally {
      await denied.close();
    }
  });

  test('five calls that fail after their retries open the breaker; the sixth does not reach the upstream', async () => {
    const target = await upstream(['unavailable']);
    const breakers = new MemoryBreakers();
    const key = 'acme/crm';
    for (let i = 0; i < 5; i++) {
      const admission = await breakers.admit(key);
      assert.ok(admission.ok);
      const result = await call(target.url, true);
      assert.equal(result.why, 'attempts_exhausted');
      await breakers.record(key, { success: false, trial: admission.trial });
    }
    assert.equal(target.requests, 15, 'five calls of three attempts: a call counts once, after its retries');
    assert.deepEqual(await breakers.admit(key), { ok: false, retryAfterSeconds: 30 });
    assert.equal(await breakers.state(key), 'open');
  });
});
