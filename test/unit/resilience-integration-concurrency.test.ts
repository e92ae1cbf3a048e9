import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { IntegrationConcurrency, type Release } from '../../src/resilience/integration-concurrency.ts';

/**
 * `config.max_concurrency` on one instance (src/resilience/integration-concurrency.ts): slots per integration, FIFO
 * waiters, a bounded wait for synchronous calls and an abortable one for the async worker, and nothing left behind.
 * Time is the test runner's mock clock: a wait of 1 s ends when the test says so, not when the machine gets to it.
 */

/** Whether the promise has settled, after the microtasks queued so far ran. */
async function settled(promise: Promise<unknown>): Promise<boolean> {
  let done = false;
  promise.then(
    () => {
      done = true;
    },
    () => {
      done = true;
    },
  );
  await new Promise<void>((resolve) => setImmediate(resolve));
  return done;
}

describe('IntegrationConcurrency', () => {
  test('up to the limit at once; the next one waits for a release', async () => {
    const slots = new IntegrationConcurrency();
    const held = [slots.tryAcquire('crm', 2), slots.tryAcquire('crm', 2)];
    assert.ok(held.every(Boolean));
    assert.equal(slots.tryAcquire('crm', 2), undefined);
    const waiting = slots.acquireWhenFree('crm', 2);
    assert.equal(await settled(waiting), false);
    assert.equal(slots.waiting('crm'), 1);
    held[0]?.();
    const release = await waiting;
    assert.equal(slots.running('crm'), 2);
    release();
    held[1]?.();
    assert.equal(slots.size, 0, 'an idle key takes no room');
  });

  test('waiters are served first come, first served', async () => {
    const slots = new IntegrationConcurrency();
    const first = slots.tryAcquire('crm', 1) as Release;
    const order: number[] = [];
    const waiters = [1, 2, 3].map((n) =>
      slots.acquireWhenFree('crm', 1).then((release) => {
        order.push(n);
        return release;
      }),
    );
    first();
    for (const waiter of waiters) (await waiter)();
    assert.deepEqual(order, [1, 2, 3]);
    assert.equal(slots.size, 0);
  });

  test('a newcomer does not overtake the waiters, even when a slot is free for it', async () => {
    const slots = new IntegrationConcurrency();
    const held = [slots.tryAcquire('crm', 3), slots.tryAcquire('crm', 3)];
    // The config changed to 1: this call waits until fewer than 1 run.
    const strict = slots.acquireWhenFree('crm', 1);
    assert.equal(slots.tryAcquire('crm', 3), undefined, 'under its own limit of 3, but behind a waiter');
    const behind = slots.acquireWhenFree('crm', 3);
    held[0]?.();
    assert.equal(await settled(strict), false, 'one still runs: the limit of 1 is not met');
    assert.equal(await settled(behind), false, 'and the one behind it waits its turn');
    held[1]?.();
    // Nothing runs now: the first in line (limit 1) goes, and the one behind it fits its own limit of 3 beside it.
    const [strictRelease, behindRelease] = await Promise.all([strict, behind]);
    assert.equal(slots.running('crm'), 2);
    strictRelease();
    behindRelease();
    assert.equal(slots.size, 0);
  });

  test('a higher limit takes effect on the next call', () => {
    const slots = new IntegrationConcurrency();
    const held = [slots.tryAcquire('crm', 1)];
    assert.equal(slots.tryAcquire('crm', 1), undefined);
    held.push(slots.tryAcquire('crm', 3), slots.tryAcquire('crm', 3));
    assert.ok(held.every(Boolean));
    assert.equal(slots.tryAcquire('crm', 3), undefined);
    for (const release of held) release?.();
    assert.equal(slots.size, 0);
  });

  test('acquire gives up after waitMs with undefined, and leaves no waiter behind', async (t) => {
    t.mock.timers.enable({ apis: ['setTimeout'] });
    const slots = new IntegrationConcurrency();
    const held = slots.tryAcquire('crm', 1) as Release;
    const waiting = slots.acquire('crm', 1, { waitMs: 1000 });
    t.mock.timers.tick(999);
    assert.equal(await settled(waiting), false);
    t.mock.timers.tick(1);
    assert.equal(await waiting, undefined);
    assert.equal(slots.waiting('crm'), 0);
    held();
    assert.equal(slots.size, 0);
  });

  test('acquire within waitMs gets the slot, and its timer is cleared', async (t) => {
    t.mock.timers.enable({ apis: ['setTimeout'] });
    const slots = new IntegrationConcurrency();
    const held = slots.tryAcquire('crm', 1) as Release;
    const waiting = slots.acquire('crm', 1, { waitMs: 1000 });
    t.mock.timers.tick(500);
    held();
    const release = await waiting;
    assert.equal(typeof release, 'function');
    t.mock.timers.tick(1000); // the timer, had it been left, would now remove a waiter that is gone
    assert.equal(slots.running('crm'), 1);
    release?.();
    assert.equal(slots.size, 0);
  });

  test('waitMs 0: a slot only if one is free now', async () => {
    const slots = new IntegrationConcurrency();
    const held = slots.tryAcquire('crm', 1) as Release;
    assert.equal(await slots.acquire('crm', 1, { waitMs: 0 }), undefined);
    held();
    const release = await slots.acquire('crm', 1, { waitMs: 0 });
    assert.equal(typeof release, 'function');
    release?.();
  });

  test('acquireWhenFree rejects with the reason when aborted, and the queue moves on', async () => {
    const slots = new IntegrationConcurrency();
    const held = slots.tryAcquire('crm', 1) as Release;
    const shutdown = new AbortController();
    const aborted = slots.acquireWhenFree('crm', 1, shutdown.signal);
    const next = slots.acquireWhenFree('crm', 1);
    shutdown.abort(new Error('shutting down'));
    await assert.rejects(aborted, /shutting down/);
    assert.equal(slots.waiting('crm'), 1);
    held();
    (await next)();
    assert.equal(slots.size, 0);
  });

  test('acquireWhenFree with a signal already aborted takes nothing', async () => {
    const slots = new IntegrationConcurrency();
    await assert.rejects(slots.acquireWhenFree('crm', 1, AbortSignal.abort(new Error('gone'))), /gone/);
    assert.equal(slots.size, 0);
  });

  test('a waiter that gives up first in line lets the ones behind it in', async () => {
    const slots = new IntegrationConcurrency();
    const held = [slots.tryAcquire('crm', 2), slots.tryAcquire('crm', 2)];
    const strict = new AbortController();
    const first = slots.acquireWhenFree('crm', 1, strict.signal);
    held[0]?.();
    const second = slots.acquireWhenFree('crm', 2);
    assert.equal(await settled(second), false, 'behind the first, which needs fewer than 1 running');
    strict.abort(new Error('gave up'));
    await assert.rejects(first);
    (await second)();
    held[1]?.();
    assert.equal(slots.size, 0);
  });

  test('a release counts once', () => {
    const slots = new IntegrationConcurrency();
    const release = slots.tryAcquire('crm', 2) as Release;
    const other = slots.tryAcquire('crm', 2) as Release;
    release();
    release();
    assert.equal(slots.running('crm'), 1);
    other();
    assert.equal(slots.size, 0);
  });

  test('integrations do not share slots', () => {
    const slots = new IntegrationConcurrency();
    const crm = slots.tryAcquire('crm', 1);
    const erp = slots.tryAcquire('erp', 1);
    assert.ok(crm && erp);
    crm();
    erp();
  });

  test('the limit must be a positive integer', async () => {
    const slots = new IntegrationConcurrency();
    for (const limit of [0, -1, 1.5, Number.NaN]) {
      assert.throws(() => slots.tryAcquire('crm', limit), RangeError);
      await assert.rejects(slots.acquire('crm', limit, { waitMs: 10 }), RangeError);
      await assert.rejects(slots.acquireWhenFree('crm', limit), RangeError);
    }
  });

  test('no leaks: a thousand calls that time out, abort or finish leave nothing behind', async (t) => {
    t.mock.timers.enable({ apis: ['setTimeout'] });
    const slots = new IntegrationConcurrency();
    let seed = 7;
    const random = () => {
      seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    const releases: Release[] = [];
    const pending: Promise<unknown>[] = [];
    const controllers: AbortController[] = [];
    for (let i = 0; i < 1000; i++) {
      const key = `k${Math.floor(random() * 5)}`;
      const limit = 1 + Math.floor(random() * 4);
      const pick = random();
      if (pick < 0.4) {
        pending.push(slots.acquire(key, limit, { waitMs: 1 + Math.floor(random() * 100) }).then((r) => r && releases.push(r)));
      } else {
        const controller = new AbortController();
        controllers.push(controller);
        pending.push(
          slots.acquireWhenFree(key, limit, controller.signal).then(
            (r) => releases.push(r),
            () => undefined,
          ),
        );
      }
      if (random() < 0.5) releases.splice(Math.floor(random() * releases.length), 1)[0]?.();
      if (random() < 0.1) t.mock.timers.tick(10);
    }
    t.mock.timers.tick(1000);
    for (const controller of controllers) if (random() < 0.5) controller.abort(new Error('stop'));
    // Release everything, including what the releases hand on to waiters, until all have settled.
    for (let round = 0; round < 1000 && (releases.length > 0 || slots.size > 0); round++) {
      await new Promise<void>((resolve) => setImmediate(resolve));
      for (const release of releases.splice(0)) release();
      for (const controller of controllers) controller.abort(new Error('stop'));
    }
    await Promise.all(pending);
    assert.equal(slots.size, 0);
  });
});
