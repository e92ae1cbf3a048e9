import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { PasswordCheckQueue, type QueueTurn } from '../../src/auth/password-queue.ts';

/**
 * The queue sign-ins check passwords in (src/auth/password-queue.ts): bounded, and fair across addresses. Checks here
 * are promises the test settles itself, so every property is a count or an order, never a time. Through HTTP, with
 * real password checks: test/system/sign-in-limits.test.ts.
 */

/** A check that runs until the test settles it, and notes when it started. */
function held(started: string[], name: string) {
  let settle: (ok: boolean) => void = () => {};
  const check = () => {
    started.push(name);
    return new Promise<boolean>((resolve) => {
      settle = resolve;
    });
  };
  return { check, settle: (ok = false) => settle(ok) };
}

function admitted(queue: PasswordCheckQueue, address: string): QueueTurn {
  const turn = queue.admit(address);
  assert.notEqual(typeof turn, 'string', `${address} is admitted`);
  return turn as QueueTurn;
}

/** Lets settled checks finish and the next ones start. */
const turnOver = () => new Promise((resolve) => setImmediate(resolve));

describe('PasswordCheckQueue', () => {
  test('runs at most `concurrency` checks at once, and every admitted check in the end', async () => {
    const queue = new PasswordCheckQueue({ concurrency: 2, perAddress: 1, maxWaiting: 100 });
    const started: string[] = [];
    const checks = Array.from({ length: 10 }, (_, i) => held(started, `c${i}`));
    const runs = checks.map((c, i) => admitted(queue, `192.0.2.${i}`).run(c.check));
    await turnOver();
    assert.deepEqual(started, ['c0', 'c1']);
    assert.equal(queue.running, 2);
    assert.equal(queue.waiting, 8);
    for (let i = 0; i < checks.length; i++) {
      checks[i].settle(i % 2 === 0);
      await turnOver();
      assert.ok(queue.running <= 2, `${queue.running} running`);
    }
    assert.deepEqual(await Promise.all(runs), [true, false, true, false, true, false, true, false, true, false]);
    assert.equal(started.length, 10);
    assert.equal(queue.running + queue.waiting, 0);
  });

  test('an address over its share is refused at once, and admitted again when one of its sign-ins is done', async () => {
    const queue = new PasswordCheckQueue({ concurrency: 1, perAddress: 2, maxWaiting: 100 });
    const started: string[] = [];
    const first = held(started, 'a1');
    const run = admitted(queue, '203.0.113.1').run(first.check);
    admitted(queue, '203.0.113.1').run(held(started, 'a2').check);
    assert.equal(queue.admit('203.0.113.1'), 'address');
    admitted(queue, '203.0.113.2').leave(); // another address has its own share
    first.settle(true);
    assert.equal(await run, true);
    assert.notEqual(typeof queue.admit('203.0.113.1'), 'string');
  });

  test('beyond `maxWaiting` waiting sign-ins, every address is refused at once; a place left is free again', async () => {
    const queue = new PasswordCheckQueue({ concurrency: 1, perAddress: 10, maxWaiting: 2 });
    const started: string[] = [];
    admitted(queue, '198.51.100.1').run(held(started, 'running').check);
    await turnOver();
    const waiting = admitted(queue, '198.51.100.2');
    admitted(queue, '198.51.100.3');
    assert.equal(queue.waiting, 2);
    assert.equal(queue.admit('198.51.100.4'), 'queue');
    waiting.leave();
    waiting.leave(); // twice is once
    assert.equal(queue.waiting, 1);
    assert.notEqual(typeof queue.admit('198.51.100.4'), 'string');
  });

  test("the address served least recently goes first: another person's check starts before a flood's next", async () => {
    const queue = new PasswordCheckQueue({ concurrency: 1, perAddress: 3, maxWaiting: 100 });
    const started: string[] = [];
    const flood = ['f1', 'f2', 'f3'].map((name) => held(started, name));
    const other = held(started, 'other');
    const runs = flood.map((c) => admitted(queue, '203.0.113.9').run(c.check));
    await turnOver();
    runs.push(admitted(queue, '198.51.100.20').run(other.check));
    assert.deepEqual(started, ['f1']);
    flood[0].settle();
    await turnOver();
    // The flood's f2 and f3 were waiting first, but its address was served last: the other person is next.
    assert.deepEqual(started, ['f1', 'other']);
    other.settle(true);
    await turnOver();
    flood[1].settle();
    await turnOver();
    flood[2].settle();
    await Promise.all(runs);
    assert.deepEqual(started, ['f1', 'other', 'f2', 'f3']);
  });

  test('no address runs checks on every thread: another person finds one free during a flood', async () => {
    const queue = new PasswordCheckQueue({ concurrency: 2, perAddress: 4, maxWaiting: 100 });
    const started: string[] = [];
    const flood = ['f1', 'f2', 'f3', 'f4'].map((name) => held(started, name));
    const runs = flood.map((c) => admitted(queue, '203.0.113.9').run(c.check));
    await turnOver();
    assert.deepEqual(started, ['f1'], 'one of two threads for the flood');
    const other = held(started, 'other');
    runs.push(admitted(queue, '198.51.100.20').run(other.check));
    assert.deepEqual(started, ['f1', 'other'], 'started at once, with no check of the flood ended');
    other.settle(true);
    for (const c of flood) {
      c.settle();
      await turnOver();
    }
    await Promise.all(runs);
    assert.deepEqual(started, ['f1', 'other', 'f2', 'f3', 'f4']);
    // With one thread, the one address uses it.
    const single = new PasswordCheckQueue({ concurrency: 1, perAddress: 1, maxWaiting: 1 });
    assert.equal(await admitted(single, '203.0.113.9').run(async () => 'ran'), 'ran');
  });

  test('two busy addresses take turns', async () => {
    const queue = new PasswordCheckQueue({ concurrency: 1, perAddress: 3, maxWaiting: 100 });
    const started: string[] = [];
    const checks = new Map(['a1', 'a2', 'a3', 'b1', 'b2', 'b3'].map((name) => [name, held(started, name)]));
    const runs = [...checks].map(([name, c]) => admitted(queue, name[0]).run(c.check));
    for (let i = 0; i < checks.size; i++) {
      await turnOver();
      checks.get(started.at(-1) as string)?.settle(); // the one running
    }
    await Promise.all(runs);
    assert.deepEqual(started, ['a1', 'b1', 'a2', 'b2', 'a3', 'b3']);
  });

  test('a check that throws, at once or later, settles its run and frees its place', async () => {
    const queue = new PasswordCheckQueue({ concurrency: 1, perAddress: 1, maxWaiting: 1 });
    await assert.rejects(
      admitted(queue, '192.0.2.1').run(() => {
        throw new Error('storage is down');
      }),
      /storage is down/,
    );
    await assert.rejects(
      admitted(queue, '192.0.2.1').run(() => Promise.reject(new Error('later'))),
      /later/,
    );
    assert.equal(queue.running + queue.waiting, 0);
    assert.equal(await admitted(queue, '192.0.2.1').run(async () => 'ok'), 'ok');
  });

  test('bounds below 1 are refused when the queue is made', () => {
    assert.throws(() => new PasswordCheckQueue({ concurrency: 0, perAddress: 1, maxWaiting: 1 }), /concurrency/);
    assert.throws(() => new PasswordCheckQueue({ concurrency: 1, perAddress: 1.5, maxWaiting: 1 }), /perAddress/);
  });
});
