import { useCallback, useEffect, useRef, useState } from 'preact/hooks';

/**
 * Runs `load()` when `deps` change and on `reload()`: `{data, error, loading, reload}`. An answer that arrives after a
 * newer load started is dropped.
 */
export function useLoad(load, deps) {
  const [state, setState] = useState({ data: undefined, error: null, loading: true });
  const generation = useRef(0);
  const reload = useCallback(() => {
    const mine = ++generation.current;
    setState((s) => ({ ...s, loading: true, error: null }));
    load().then(
      (data) => mine === generation.current && setState({ data, error: null, loading: false }),
      (error) => mine === generation.current && setState((s) => ({ data: s.data, error, loading: false })),
    );
  }, deps);
  useEffect(reload, [reload]);
  return { ...state, reload };
}
