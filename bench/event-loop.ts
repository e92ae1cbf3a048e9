/**
 * `node bench/event-loop.ts`: whether one tenant's large answers hold the instance (issue 17, finding 5). Interchange,
 * a GraphQL upstream of small answers and one of ~9.8 MB pages each run in a process of their own. Meanwhile:
 *   - tenant `bulk` keeps BULK_CALLS (8) paginated receives of 3 pages (~29 MB each) in flight, ROUNDS (3) times over;
 *   - a prober sends GET /healthz and a small receive of tenant `bench` every 25 ms, one at a time each.
 * Printed: the probes' latencies (p50, p99, max) and Interchange's own event-loop delay over the run, as measured in
 * its process (monitorEventLoopDelay). The same probes on an idle instance come first, as the baseline.
 */
import { type Child, startServer } from './children.ts';

interface Started {
  url: string;
  headers: Record<string, string>;
  loopUrl: string;
  bulk: { url: string; headers: Record<string, string> };
}

const bulkCalls = Number(process.env.BULK_CALLS ?? 8);
const rounds = Number(process.env.ROUNDS ?? 3);
const script = (name: string) => new URL(`./servers/${name}.ts`, import.meta.url).pathname;
const children: Child[] = [];

async function child<T>(name: string, args: string[] = [], env: NodeJS.ProcessEnv = {}): Promise<T> {
  const { child, info } = await startServer<T>(script(name), args, env);
  children.push(child);
  return info;
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

function summary(latencies: number[]) {
  const sorted = [...latencies].sort((a, b) => a - b);
  const ms = (v: number) => Math.round(v * 10) / 10;
  return {
    n: sorted.length,
    p50_ms: ms(percentile(sorted, 50)),
    p99_ms: ms(percentile(sorted, 99)),
    max_ms: ms(sorted.at(-1) ?? 0),
  };
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

try {
  const small = await child<{ url: string }>('graphql-upstream');
  const paged = await child<{ url: string }>('paged-upstream');
  // PROFILE=dir writes a CPU profile of Interchange's process there (node --cpu-prof), to see what holds its loop.
  const profile = process.env.PROFILE
    ? { NODE_OPTIONS: process.env.PROFILE_OPTIONS ?? `--cpu-prof --cpu-prof-dir=${process.env.PROFILE}` }
    : {};
  const ix = await child<Started>('interchange', [small.url, paged.url], profile);
  const origin = new URL(ix.url).origin;
  const healthz = () => fetch(`${origin}/healthz`);
  const smallReceive = () =>
    fetch(ix.url, {
      method: 'POST',
      headers: ix.headers,
      body: JSON.stringify({ operation: 'receive', query: '{ users { id } }' }),
    });
  const loop = async () => (await fetch(ix.loopUrl)).json();

  // Baseline: the same probes on an idle instance.
  let idleUntil = performance.now() + 2000;
  await loop();
  const [idleHealth, idleSmall] = await Promise.all([
    probe(healthz, () => performance.now() > idleUntil),
    probe(smallReceive, () => performance.now() > idleUntil),
  ]);
  const idleLoop = await loop();

  let running = true;
  const statuses: Record<number, number> = {};
  const bulkBody = JSON.stringify({
    operation: 'receive',
    query: 'query ($after: String) { items(after: $after) { pageInfo { hasNextPage endCursor } nodes { id } } }',
    paginate: { max_pages: 3 },
  });
  const load = (async () => {
    for (let round = 0; round < rounds; round++) {
      await Promise.all(
        Array.from({ length: bulkCalls }, async () => {
          const res = await fetch(ix.bulk.url, { method: 'POST', headers: ix.bulk.headers, body: bulkBody });
          await res.arrayBuffer();
          statuses[res.status] = (statuses[res.status] ?? 0) + 1;
        }),
      );
    }
    running = false;
  })();
  idleUntil = 0;
  const [busyHealth, busySmall] = await Promise.all([probe(healthz, () => !running), probe(smallReceive, () => !running)]);
  await load;
  const busyLoop = await loop();

  console.log(
    JSON.stringify(
      {
        bulk: { calls: bulkCalls * rounds, statuses },
        idle: { healthz: summary(idleHealth), small_receive: summary(idleSmall), event_loop: idleLoop },
        under_load: { healthz: summary(busyHealth), small_receive: summary(busySmall), event_loop: busyLoop },
      },
      null,
      2,
    ),
  );
} finally {
  await Promise.all(children.map((c) => c.stop()));
}
