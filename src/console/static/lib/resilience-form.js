/**
 * `config.retry` and `config.max_concurrency` in the integration form (docs/resilience.md). Answers show `retry` with
 * its defaults filled in, so the fields start at what is in force. A save sends them only when touched: `retry` whole
 * (the three numbers), `max_concurrency` as a number, or null on PATCH when emptied (no cap).
 */

export const retryDefaults = { max_attempts: 3, base_delay_ms: 200, max_delay_ms: 10000 };

/** The numeric fields, with the ranges the API checks (docs/resilience.md#retries). */
export const retryFields = [
  { name: 'max_attempts', label: 'Attempts', min: 1, max: 10, hint: 'Tries in all, the first included; 1 never retries.' },
  {
    name: 'base_delay_ms',
    label: 'First wait (ms)',
    min: 1,
    max: 60000,
    hint: 'The ceiling of the first wait; it doubles each retry.',
  },
  { name: 'max_delay_ms', label: 'Longest wait (ms)', min: 1, max: 600000, hint: 'The ceiling never grows past this.' },
];

export function resilienceFormFrom(config) {
  const retry = { ...retryDefaults, ...config?.retry };
  return {
    max_attempts: String(retry.max_attempts),
    base_delay_ms: String(retry.base_delay_ms),
    max_delay_ms: String(retry.max_delay_ms),
    max_concurrency: config?.max_concurrency == null ? '' : String(config.max_concurrency),
    touched: false,
  };
}

/** `{config, issues}` for a save: nothing when untouched; otherwise `retry` whole and `max_concurrency`. */
export function resilienceWrite(state, stored, isNew) {
  const config = {};
  const issues = [];
  if (!state.touched) return { config, issues };
  const retry = {};
  for (const field of retryFields) {
    const raw = state[field.name].trim();
    const value = Number(raw);
    if (raw === '' || !Number.isInteger(value) || value < field.min || value > field.max) {
      issues.push({ path: `retry.${field.name}`, message: `must be a whole number from ${field.min} to ${field.max}` });
    } else retry[field.name] = value;
  }
  if (issues.length === 0 && retry.max_delay_ms < retry.base_delay_ms) {
    issues.push({ path: 'retry.max_delay_ms', message: 'must be at least the first wait' });
  }
  config.retry = retry;
  const raw = state.max_concurrency.trim();
  if (raw === '') {
    if (!isNew && stored?.max_concurrency != null) config.max_concurrency = null;
  } else {
    const value = Number(raw);
    if (!Number.isInteger(value) || value < 1 || value > 1000) {
      issues.push({ path: 'max_concurrency', message: 'must be a whole number from 1 to 1000, or empty for no cap' });
    } else config.max_concurrency = value;
  }
  return { config, issues };
}
