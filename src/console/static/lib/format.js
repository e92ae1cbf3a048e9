/** Display helpers: dates, numbers, durations. */

const dateTime = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });
const dateTimeSeconds = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'medium' });
const relative = new Intl.RelativeTimeFormat(undefined, { numeric: 'auto' });

/** A date and time; `{seconds: true}` for what is told apart by the second (executions). */
export function formatDateTime(iso, { seconds = false } = {}) {
  if (!iso) return '—';
  return (seconds ? dateTimeSeconds : dateTime).format(new Date(iso));
}

const timeThisYear = new Intl.DateTimeFormat(undefined, {
  month: 'short',
  day: 'numeric',
  hour: 'numeric',
  minute: '2-digit',
  second: '2-digit',
});

/** A time to the second, with its day ("Nov 29, 8:17:01 AM"), and its year when that is not this one: for lists. */
export function formatTime(iso, now = new Date()) {
  if (!iso) return '—';
  const date = new Date(iso);
  return date.getFullYear() === now.getFullYear() ? timeThisYear.format(date) : dateTimeSeconds.format(date);
}

/** `count` and the noun, singular for 1: "1 message", "3 messages" (`plural` for an irregular one). */
export function formatCount(count, noun, plural = `${noun}s`) {
  return `${formatNumber(count)} ${count === 1 ? noun : plural}`;
}

/** "3 minutes ago", "in 2 days". */
export function formatRelative(iso, now = Date.now()) {
  if (!iso) return 'never';
  const seconds = Math.round((Date.parse(iso) - now) / 1000);
  const steps = [
    [60, 'second'],
    [60, 'minute'],
    [24, 'hour'],
    [30, 'day'],
    [12, 'month'],
    [Number.POSITIVE_INFINITY, 'year'],
  ];
  let value = seconds;
  for (const [size, unit] of steps) {
    if (Math.abs(value) < size) return relative.format(Math.round(value), unit);
    value /= size;
  }
  return iso;
}

export function formatNumber(n) {
  return typeof n === 'number' ? n.toLocaleString() : '—';
}

export function formatDuration(ms) {
  if (typeof ms !== 'number') return '—';
  return ms < 1000 ? `${ms} ms` : `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`;
}

/** Seconds as words: 3600 → "1 hour". */
export function formatSeconds(seconds) {
  if (seconds === 0) return 'no overlap';
  const units = [
    [86400, 'day'],
    [3600, 'hour'],
    [60, 'minute'],
  ];
  for (const [size, unit] of units) {
    if (seconds % size === 0) {
      const n = seconds / size;
      return `${n} ${unit}${n === 1 ? '' : 's'}`;
    }
  }
  return `${seconds} seconds`;
}
