/**
 * `BENCH_ONLY=queue npm run bench` (or `node bench/queue.ts`): the job queue of async executions (docs/async.md#the-queue), on each storage. Interchange and
 * its GraphQL upstream run in processes of their own. For each storage, 1,000 `receive` calls are accepted with
 * `Prefer: respond-async` (16 at a time), and the bench measures how fast they are accepted, how long until the last
 * has run (the queue drained), the throughput end to end, and the Interchange process's peak RSS (VmHWM).
 *
 * BENCH_QUEUE_CALLS and BENCH_QUEUE_CONCURRENCY tune it; IX_WORKER_CONCURRENCY is the worker's (8 by default).
 */
import { readFileSync } from 'node:fs';
import { createTestDatabase, testMasterKey } from '../test/support/postgres.ts';
import { startServer } from './children.ts';

const calls = Number(process.env.BENCH_QUEUE_CALLS ?? 1000);
const parallel = Number(process.env.BENCH_QUEUE_CONCURRENCY ?? 16);
const workerConcurrency = process.env.IX_WORKER_CONCURRENCY ?? '8';

interface InterchangeInfo {
  url: string;
  headers: Record<string, string>;
}

function peakRssMiB(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? 0);
  return Math.round(kib / 1024);
}

async function unfinished(base: string, headers: Record<string, string>): Promise<boolean> {
  for (const status of ['queued', 'running']) {
    const res = await fetch(`${base}/api/v1/executions?status=${status}&limit=1`, { headers });
    const page = (await res.json()) as { data: unknown[] };
    if (page.data.length > 0) return true;
  }
  return false;
}

async function run(storage: string, env: NodeJS.ProcessEnv, upstreamUrl: string) {
  const { child, info } = await startServer<InterchangeInfo>('bench/servers/interchange.ts', [upstreamUrl], {
    ...env,
    IX_WORKER_CONCURRENCY: workerConcurrency,
  });
  try {
    const base = new URL(info.url).origin;
    const body = JSON.stringify({ operation: 'receive', query: '{ users { id name email } }' });
    const headers = { ...info.headers, prefer: 'respond-async' };
    let next = 0;
    let refused = 0;
    const started = performance.now();
    await Promise.all(
      Array.from({ length: parallel }, async () => {
        while (next < calls) {
          next += 1;
          const res = await fetch(info.url, { method: 'POST', headers, body });
          await res.arrayBuffer();
          if (res.status !== 202) refused += 1;
        }
      }),
    );
    const accepted = performance.now();
    const { 'content-type': _type, ...readHeaders } = info.headers;
    while (await unfinished(base, readHeaders)) await new Promise((resolve) => setTimeout(resolve, 50));
    const drained = performance.now();
    return {
      storage,
      acceptPerSecond: Math.round(calls / ((accepted - started) / 1000)),
      drainedMs: Math.round(drained - started),
      endToEndPerSecond: Math.round(calls / ((drained - started) / 1000)),
      peakRssMiB: peakRssMiB(child.pid),
      refused,
    };
  } finally {
    await child.stop();
  }
}

/** Runs the queue bench and prints its table (`npm run bench`, or `BENCH_ONLY=queue npm run bench` alone). */
export async function runQueueBench(): Promise<void> {
  const upstream = await startServer<{ url: string }>('bench/servers/graphql-upstream.ts');
  const rows = [];
  try {
    rows.push(await run('SQLite (embedded queue)', {}, upstream.info.url));
    const database = await createTestDatabase();
    try {
      rows.push(
        await run('PostgreSQL (pg-boss)', { DATABASE_URL: database.url, IX_MASTER_KEY: testMasterKey() }, upstream.info.url),
      );
    } finally {
      await database.drop();
    }
  } finally {
    await upstream.child.stop();
  }
  console.log(`${calls} async receives, ${parallel} accepted at a time, worker concurrency ${workerConcurrency}:`);
  console.log('| storage | accepted/s | all run after (ms) | end to end/s | peak RSS (MiB) | refused |');
  console.log('|---|---|---|---|---|---|');
  for (const r of rows) {
    console.log(
      `| ${r.storage} | ${r.acceptPerSecond} | ${r.drainedMs} | ${r.endToEndPerSecond} | ${r.peakRssMiB} | ${r.refused} |`,
    );
  }
}

if (import.meta.main) await runQueueBench();
