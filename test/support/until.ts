import assert from 'node:assert/strict';

/**
 * Polls `check` every `everyMs` (20 ms by default) until it returns something truthy, and returns that; fails, saying
 * `what`, after `ceilingMs` (30 s by default): a ceiling that catches a hang on a loaded machine, never a measure.
 *
 * @example
 * await until(() => upstream.requests === 3, 'three requests upstream');
 */
export async function until<T>(
  check: () => T | Promise<T>,
  what: string | (() => string),
  options: { ceilingMs?: number; everyMs?: number } = {},
): Promise<T> {
  const { ceilingMs = 30_000, everyMs = 20 } = options;
  // performance.now(), not Date: a test may have stopped the Date clock (t.mock.timers).
  const giveUpAt = performance.now() + ceilingMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (performance.now() >= giveUpAt) assert.fail(`${typeof what === 'string' ? what : what()}: not within ${ceilingMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}
