import { useEffect, useRef } from 'preact/hooks';

/**
 * Calls `tick()` every `everyMs` while `active` and the caller is mounted, and never again once it unmounts. Each
 * call waits for the previous one to settle, so a slow answer never stacks requests; a hidden page (a background tab)
 * skips its turns. `tick` shows its own failures: a rejection here only waits for the next turn.
 */
export function usePolling(tick, everyMs, active = true) {
  const latest = useRef(tick);
  latest.current = tick;
  useEffect(() => {
    if (!active) return undefined;
    let stopped = false;
    let timer = null;
    const schedule = () => {
      if (!stopped) timer = setTimeout(turn, everyMs);
    };
    const turn = async () => {
      if (!document.hidden) await Promise.resolve(latest.current()).catch(() => {});
      schedule();
    };
    schedule();
    return () => {
      stopped = true;
      clearTimeout(timer);
    };
  }, [everyMs, active]);
}
