/**
 * `node bench/event-loop.ts`: whether one tenant's load holds the instance for every other caller (issue 17, finding
 * 5). Interchange and its upstreams each run in a process of their own. Two scenarios, each against a fresh
 * Interchange, in which tenant `bulk` loads the instance while a prober sends GET /healthz and a small receive of
 * tenant `bench` every 25 ms, one at a time each:
 *   - large pages: BULK_CALLS (8) paginated receives of MAX_PAGES (3) pages of ~9.8 MB (~29 MB each) in flight, ROUNDS
 *     (3) times; records of PAD_CHARS (1,000) characters of padding (90: ~86,000 records a page);
 *   - many in flight: IN_FLIGHT (2,000) receives in flight at once against an upstream that answers after 1 s
 *     (IX_TENANT_CONCURRENCY raised to let them in), ROUNDS times.
 * Printed per scenario: the probes' latencies (p50, p99, max) on the idle instance and under the load, and
 * Interchange's own event-loop delay (monitorEventLoopDelay in its process). PROFILE=dir writes a CPU profile of
 * Interchange's process there; SCENARIO=large or SCENARIO=many runs one scenario.
 */
import { type Child, runToEnd, startServer } from './children.ts';

interface Started {
  url: string;
  headers: Record<string, string>;
  loopUrl: string;
  bulk: { url: string; headers: Record<string, string> };
}

const bulkCalls = Number(process.env.BULK_CALLS ?? 8);
const inFlight = Number(process.env.IN_FLIGHT ?? 2000);
const rounds = Number(process.env.ROUNDS ?? 3);
/** MAX_PAGES (default 3): pages of each paginated receive; 4 pages of 9.8 MB pass IX_EXECUTE_MAX_BYTES (502). */
const maxPages = Number(process.env.MAX_PAGES ?? 3);
/** SCENARIO=large or SCENARIO=many runs only that one. */
const only = process.env.SCENARIO;
const script = (name: string) => new URL(`./servers/${name}.ts`, import.meta.url).pathname;
const children: Child[] = [];

async function child<T>(name: string, args: string[] = [], env: NodeJS.ProcessEnv = {}): Promise<T> {
  const { child, info } = await startServer<T>(script(name), args, env);
  children.push(child);
  return info;
}

function summary(latencies: number[]) {
  const sorted = [...latencies].sort((a, b) => a - b);
  const at = (p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
  const ms = (v: number) => Math.round(v * 10) / 10;
  return { n: sorted.length, p50_ms: ms(at(50)), p99_ms: ms(at(99)), max_ms: ms(sorted.at(-1) ?? 0) };
}

/** Sends `request` one at a time every `everyMs` until `done()`; the latency of each. */
async function probe(request: () => Promise<Response>, done: () => boolean, everyMs = 25): Promise<number[]> {
  const latencies: number[] = [];
  while (!done()) {
    const started = performance.now();
    const res = await request();
    await res.arrayBuffer();
    if (!res.ok) throw new Error(`probe answered ${res.status}`);
    latencies.push(performance.now() - started);
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
  return latencies;
}

/** Probes an idle Interchange, then the same while `load` runs; the figures of both. */
async function scenario(name: string, bulkUpstream: string, env: NodeJS.ProcessEnv, load: (ix: Started) => Promise<unknown>) {
  const small = await child<{ url: string }>('graphql-upstream');
  const profile = process.env.PROFILE ? { NODE_OPTIONS: `--cpu-prof --cpu-prof-dir=${process.env.PROFILE}` } : {};
  const ix = await child<Started>('interchange', [small.url, bulkUpstream], { ...env, ...profile });
  const origin = new URL(ix.url).origin;
  const healthz = () => fetch(`${origin}/healthz`);
  const smallReceive = () =>
    fetch(ix.url, {
      method: 'POST',
      headers: ix.headers,
      body: JSON.stringify({ operation: 'receive', query: '{ users { id } }' }),
    });
  const loopDelay = async () => (await fetch(ix.loopUrl)).json();

  const idleUntil = performance.now() + 2000;
  await loopDelay();
  const idle = await Promise.all([
    probe(healthz, () => performance.now() > idleUntil),
    probe(smallReceive, () => performance.now() > idleUntil),
  ]);
  const idleLoop = await loopDelay();

  let running = true;
  const loaded = load(ix).finally(() => {
    running = false;
  });
  const busy = await Promise.all([probe(healthz, () => !running), probe(smallReceive, () => !running)]);
  const statuses = await loaded;
  const busyLoop = await loopDelay();
  return {
    scenario: name,
    bulk: statuses,
    idle: { healthz: summary(idle[0]), small_receive: summary(idle[1]), event_loop: idleLoop },
    under_load: { healthz: summary(busy[0]), small_receive: summary(busy[1]), event_loop: busyLoop },
  };
}

/** `calls` requests of `body` to tenant bulk at once, `rounds` times, from a process of its own; the statuses counted. */
async function flood(ix: Started, calls: number, body: string): Promise<Record<number, number>> {
  const headers = Object.entries(ix.bulk.headers).flatMap(([name, value]) => ['--header', `${name}: ${value}`]);
  const args = [ix.bulk.url, '--body', body, ...headers, '--calls', String(calls), '--rounds', String(rounds)];
  return JSON.parse(await runToEnd(script('../flood'), args));
}

try {
  const results = [];
  const paged = await child<{ url: string }>('paged-upstream', [], { PAD_CHARS: process.env.PAD_CHARS ?? '1000' });
  const pagesBody = JSON.stringify({
    operation: 'receive',
    query: 'query ($after: String) { items(after: $after) { pageInfo { hasNextPage endCursor } nodes { id } } }',
    paginate: { max_pages: maxPages },
  });
  if (only === undefined || only === 'large') {
    results.push(await scenario('large pages', paged.url, {}, (ix) => flood(ix, bulkCalls, pagesBody)));
  }

  const slow = await child<{ url: string }>('graphql-upstream', [], { DELAY_MS: '1000' });
  const smallBody = JSON.stringify({ operation: 'receive', query: '{ users { id } }' });
  if (only === undefined || only === 'many') {
    results.push(
      await scenario('many in flight', slow.url, { IX_TENANT_CONCURRENCY: String(inFlight) }, (ix) =>
        flood(ix, inFlight, smallBody),
      ),
    );
  }
  console.log(JSON.stringify(results, null, 2));
} finally {
  await Promise.all(children.map((c) => c.stop()));
}
