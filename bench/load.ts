/**
 * The load generator of bench/execute-path.ts, in a process of its own so that it takes no CPU time from the
 * server it measures:
 *   node bench/load.ts URL [--method M] [--header name:value]… [--body TEXT] [--connections 32] [--seconds 8] [--warmup 2]
 * Keeps one request in flight on each of `connections` keep-alive connections (no pipelining) for warm-up plus
 * `seconds`, counts only the requests started after the warm-up, and prints one JSON line:
 * {"rps", "p50", "p99" (ms), "failures" (answers other than 200, and errors), "requests"}.
 */
import { parseArgs } from 'node:util';
import { Pool } from 'undici';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    method: { type: 'string', default: 'GET' },
    header: { type: 'string', multiple: true, default: [] },
    body: { type: 'string' },
    connections: { type: 'string', default: '32' },
    seconds: { type: 'string', default: '8' },
    warmup: { type: 'string', default: '2' },
  },
});
const url = new URL(positionals[0] ?? '');
const headers = Object.fromEntries(values.header.map((h) => [h.slice(0, h.indexOf(':')), h.slice(h.indexOf(':') + 1).trim()]));
const connections = Number(values.connections);
const pool = new Pool(url.origin, { connections, pipelining: 1 });
const options = { path: url.pathname + url.search, method: values.method, headers, body: values.body };

const latencies: number[] = [];
let failures = 0;
const measureFrom = performance.now() + Number(values.warmup) * 1000;
const end = measureFrom + Number(values.seconds) * 1000;

/** True when the request got a 200; its body is read to the end either way, as a real client would. */
async function send(): Promise<boolean> {
  try {
    const res = await pool.request(options);
    await res.body.arrayBuffer();
    return res.statusCode === 200;
  } catch {
    return false;
  }
}

async function connection(): Promise<void> {
  while (performance.now() < end) {
    const started = performance.now();
    const ok = await send();
    if (started < measureFrom) continue;
    latencies.push(performance.now() - started);
    if (!ok) failures += 1;
  }
}

await Promise.all(Array.from({ length: connections }, connection));
const seconds = (performance.now() - measureFrom) / 1000;
await pool.close();
latencies.sort((a, b) => a - b);
const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? 0;
console.log(
  JSON.stringify({ rps: latencies.length / seconds, p50: at(0.5), p99: at(0.99), failures, requests: latencies.length }),
);
