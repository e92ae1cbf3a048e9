import { html } from '../lib/html.js';

const dayLabel = new Intl.DateTimeFormat(undefined, { month: 'short', day: 'numeric', timeZone: 'UTC' });
const count = (n, noun) => `${n.toLocaleString()} ${noun}${n === 1 ? '' : 's'}`;

/**
 * Daily requests as bars (errors stacked in a second colour), one per day, in plain SVG. The numbers are also in
 * each bar's tooltip and in the summary read to screen readers.
 */
export function UsageChart({ days }) {
  const width = 600;
  const height = 180;
  const axis = 22;
  const top = 10;
  const max = Math.max(1, ...days.map((d) => d.requests));
  const slot = width / days.length;
  const bar = Math.max(2, slot * 0.7);
  const scale = (n) => ((height - axis - top) * n) / max;
  const total = days.reduce((sum, d) => sum + d.requests, 0);
  const errors = days.reduce((sum, d) => sum + d.errors, 0);
  const label = `${count(total, 'request')} and ${count(errors, 'error')} over ${days.length} days.`;
  const ticks = [
    [0, 'start'],
    [Math.floor(days.length / 2), 'middle'],
    [days.length - 1, 'end'],
  ];
  return html`<figure class="chart">
    <svg viewBox=${`0 0 ${width} ${height}`} role="img" aria-label=${label}>
      <line class="chart__axis" x1="0" x2=${width} y1=${height - axis} y2=${height - axis} />
      ${days.map((d, i) => {
        const x = i * slot + (slot - bar) / 2;
        const h = scale(d.requests);
        const e = scale(d.errors);
        return html`<g class="chart__day">
          <title>${d.date}: ${count(d.requests, 'request')}, ${count(d.errors, 'error')}</title>
          <rect class="chart__bar" x=${x} y=${height - axis - h} width=${bar} height=${h} rx="2" />
          ${d.errors > 0 && html`<rect class="chart__bar chart__bar--error" x=${x} y=${height - axis - e} width=${bar} height=${e} rx="2" />`}
        </g>`;
      })}
      ${ticks.map(
        ([i, anchor]) =>
          html`<text class="chart__tick" x=${anchor === 'start' ? 0 : anchor === 'end' ? width : i * slot + slot / 2} y=${height - 6}
            text-anchor=${anchor}>${dayLabel.format(new Date(days[i].date))}</text>`,
      )}
    </svg>
    <figcaption class="chart__legend">
      <span><span class="swatch swatch--ok" aria-hidden="true"></span>Requests (${total.toLocaleString()})</span>
      <span><span class="swatch swatch--error" aria-hidden="true"></span>Errors (${errors.toLocaleString()})</span>
      <span class="muted">Peak ${max.toLocaleString()} / day</span>
    </figcaption>
  </figure>`;
}

/** The API lists days that had traffic; the chart shows every day of the window, oldest first. */
export function fillDays(rows, count, today = new Date()) {
  const byDate = new Map(rows.map((r) => [r.date, r]));
  const days = [];
  for (let i = count - 1; i >= 0; i--) {
    const date = new Date(Date.UTC(today.getUTCFullYear(), today.getUTCMonth(), today.getUTCDate() - i))
      .toISOString()
      .slice(0, 10);
    const row = byDate.get(date);
    days.push({ date, requests: row?.requests ?? 0, errors: row?.errors ?? 0 });
  }
  return days;
}
