import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import type { Dispatcher } from 'undici';
import { ApiError } from '../../src/core/errors.ts';
import { createEgressDispatcher } from '../../src/egress/dispatcher.ts';
import { createEgressPolicy } from '../../src/egress/policy.ts';
import { defaultRetrySettings, type FailureKind, failureKind, isUpstreamOutage } from '../../src/resilience/retry.ts';
import { ExecuteBudget } from '../../src/transport/budget.ts';
import { sendUpstream } from '../../src/transport/upstream.ts';
import { failNThenSucceed, ok, reservedPort, type ScriptedUpstream, scriptedUpstream } from '../support/scripted-upstream.ts';

/**
 * The transport's retries (sendUpstream with an execute's budget, docs/resilience.md), against upstreams that fail in
 * scripted ways and count what reached them. The waits the retry decision asks for are recorded, not slept, and the
 * jitter is fixed at its midpoint: the test checks what would be waited, and runs at once.
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
  /** The waits between attempts. */
  waits: number[];
  /** The failure each retry followed. */
  retriedAfter: FailureKind[];
}

/** One request as a connector sends it: a write (`send`) or a read, with the default retry settings. */
async function call(
  url: string,
  changesNothing: boolean,
  options: { dispatcher?: Dispatcher; beforeRetry?: () => Promise<void> } = {},
): Promise<CallResult> {
  const waits: number[] = [];
  const retriedAfter: FailureKind[] = [];
  const budget = new ExecuteBudget(
    { maxBytes: 1 << 20, deadlineMs: 60_000 },
    {
      retry: defaultRetrySettings,
      random: () => 0.5,
      sleep: async (ms) => {
        waits.push(ms);
        await options.beforeRetry?.();
      },
      retried: (kind) => retriedAfter.push(kind),
    },
  );
  try {
    const response = await sendUpstream(options.dispatcher ?? dispatcher, {
      url,
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"query":"mutation { write }"}',
      timeoutMs: 10_000,
      maxBodyBytes: 65_536,
      budget,
      write: !changesNothing,
    });
    return { status: response.status, attempts: budget.stats.attempts, waits, retriedAfter };
  } catch (error) {
    return { error, attempts: budget.stats.attempts, waits, retriedAfter };
  }
}

describe('sendUpstream retries', () => {
  test('a receive against a 503, a 503, then an answer: three attempts, backoff between them', async () => {
    const target = await upstream(failNThenSucceed(2, 'unavailable'));
    const result = await call(target.url, true);
    assert.equal(result.status, 200);
    assert.equal(result.attempts, 3);
    assert.deepEqual(result.waits, [100, 200], 'full jitter at its midpoint: half of 200, half of 400');
    assert.deepEqual(result.retriedAfter, ['unavailable', 'unavailable']);
    assert.equal(target.requests, 3);
  });

  test('a receive told 429 with Retry-After: 1 waits that second, longer than its backoff', async () => {
    const target = await upstream(['throttled', ok]);
    const result = await call(target.url, true);
    assert.equal(result.status, 200);
    assert.deepEqual(result.waits, [1000]);
    assert.equal(target.requests, 2);
  });

  test("a receive that keeps failing: three attempts, then the last answer is the caller's", async () => {
    const target = await upstream(['unavailable']);
    const result = await call(target.url, true);
    assert.equal(result.status, 503);
    assert.equal(result.attempts, 3);
    assert.equal(target.requests, 3);
  });

  test('a send told 429 or 503 is not sent again: the request arrived', async () => {
    for (const behaviour of ['throttled', 'unavailable'] as const) {
      const target = await upstream([behaviour, ok]);
      const result = await call(target.url, false);
      assert.equal(result.status, behaviour === 'throttled' ? 429 : 503);
      assert.equal(result.attempts, 1);
      assert.equal(target.requests, 1);
    }
  });

  test('a send whose upstream read it and reset: not sent again', async () => {
    const target = await upstream(['reset-after-read', ok]);
    const result = await call(target.url, false);
    assert.ok(result.error instanceof ApiError && result.error.code === 'upstream_unreachable', String(result.error));
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
      assert.equal(result.attempts, 1);
      assert.equal(isUpstreamOutage(failureKind(result.error)), false);
      assert.equal(target.connections, 0);
    } finally {
      await denied.close();
    }
  });
});
