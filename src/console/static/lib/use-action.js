import { useState } from 'preact/hooks';

/**
 * The busy/error state of a form submit or button action: `{busy, error, run}`. `run(...args)` calls
 * `preventDefault()` when its first argument is an Event, clears `error`, sets `busy`, awaits `fn(...args)`, keeps what
 * it throws as `error`, and clears `busy`. With `keepBusyOnSuccess`, `busy` is only cleared after a failure, for
 * actions whose success hands off to another screen or dialog.
 */
export function useAction(fn, { keepBusyOnSuccess = false } = {}) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState(null);
  const run = async (...args) => {
    if (args[0] instanceof Event) args[0].preventDefault();
    setBusy(true);
    setError(null);
    try {
      await fn(...args);
      if (!keepBusyOnSuccess) setBusy(false);
    } catch (failure) {
      setError(failure);
      setBusy(false);
    }
  };
  return { busy, error, run };
}
