import { monitorEventLoopDelay } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';

/**
 * Runs `work` and reports the longest time the event loop of this process was blocked meanwhile (what a parse of an
 * upstream answer would make every other request wait), in milliseconds. It measures blocking, not wall time: a slow
 * but yielding `work` keeps it near the sampling resolution.
 */
export async function withEventLoopDelay<T>(work: () => Promise<T>): Promise<{ result: T; maxDelayMs: number }> {
  const resolutionMs = 10;
  const histogram = monitorEventLoopDelay({ resolution: resolutionMs });
  histogram.enable();
  try {
    const result = await work();
    // A block that ended just before `work` settled is recorded by the sampling timer's next turn.
    await sleep(resolutionMs * 3);
    return { result, maxDelayMs: histogram.max / 1e6 };
  } finally {
    histogram.disable();
  }
}
