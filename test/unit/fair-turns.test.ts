import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { FairTurns } from '../../src/resilience/fair-turns.ts';

/** Holds this thread for `ms`, as a request's synchronous work would. */
function work(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until) {
    // spinning on purpose
  }
}

/** Starts a request of `key` that takes its turn and then works `ms`; resolves with its key once it has worked. */
async function request(turns: FairTurns, key: string, ms: number, done: string[]): Promise<void> {
  const wait = turns.take(key);
  if (wait) await wait;
  work(ms);
  done.push(key);
}

describe('FairTurns: one tenant’s burst is worked through in slices, fairly', () => {
  test('under a light load a turn is given at once, without a promise', async () => {
    // A clock that stays within the slice: on a loaded machine 50 real takes once spanned more than 10 ms.
    const turns = new FairTurns(10, () => 0);
    for (let i = 0; i < 50; i++) assert.equal(turns.take('acme'), undefined);
    assert.equal(turns.waiting, 0);
  });

  test('past the slice, requests wait, and every one of them gets its turn', async () => {
    const turns = new FairTurns(10);
    const done: string[] = [];
    const all = Array.from({ length: 100 }, () => request(turns, 'bulk', 1, done));
    assert.ok(turns.waiting > 0, 'some waited');
    await Promise.all(all);
    assert.equal(done.length, 100);
    assert.equal(turns.waiting, 0);
  });

  test('timers run between slices: the loop is not held for the whole burst', async () => {
    const turns = new FairTurns(10);
    const done: string[] = [];
    let doneWhenTimerFired = -1;
    const timer = new Promise<void>((resolve) =>
      setTimeout(() => {
        doneWhenTimerFired = done.length;
        resolve();
      }, 0),
    );
    // 200 requests of 2 ms each: 400 ms of work, arriving in one turn of the loop.
    const all = Array.from({ length: 200 }, () => request(turns, 'bulk', 2, done));
    await Promise.all([...all, timer]);
    assert.ok(doneWhenTimerFired >= 0 && doneWhenTimerFired < 200, `the timer fired after ${doneWhenTimerFired} of 200`);
  });

  test('a tenant arriving after a burst of another is served among the first, not after the burst', async () => {
    const turns = new FairTurns(10);
    const done: string[] = [];
    // A request starts this turn's slice and spends it: everything from here waits.
    assert.equal(turns.take('first'), undefined);
    work(11);
    const burst = Array.from({ length: 100 }, () => request(turns, 'bulk', 1, done));
    const other = request(turns, 'acme', 1, done);
    const third = request(turns, 'globex', 1, done);
    await Promise.all([...burst, other, third]);
    assert.equal(done.length, 102);
    assert.ok(done.indexOf('acme') <= 2, `acme was served ${done.indexOf('acme') + 1}th`);
    assert.ok(done.indexOf('globex') <= 2, `globex was served ${done.indexOf('globex') + 1}th`);
  });

  test('waiters of one tenant keep their order', async () => {
    const turns = new FairTurns(10);
    const order: number[] = [];
    assert.equal(turns.take('first'), undefined);
    work(11);
    await Promise.all(
      Array.from({ length: 20 }, async (_, i) => {
        const wait = turns.take('acme');
        if (wait) await wait;
        order.push(i);
      }),
    );
    assert.deepEqual(
      order,
      Array.from({ length: 20 }, (_, i) => i),
    );
  });
});
