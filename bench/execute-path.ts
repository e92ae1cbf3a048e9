/**
 * The execute path side by side (issue 10), each server in a process of its own and the load generator
 * (bench/load.ts) in another, one target at a time: the GraphQL upstream called directly; a bare Fastify + undici
 * passthrough (bench/servers/passthrough.ts), the floor any Node gateway pays; Interchange's `execute receive` on
 * SQLite and, when scripts/test-services.sh's PostgreSQL answers, on PostgreSQL. Ratios are against the passthrough,
 * which does the same HTTP and JSON work without auth, storage or checks. Between them, the passthrough's handler
 * behind Interchange's per-request steps (request id, key, rate limit, scope, metrics, usage): what an execute costs
 * at least on this stack, before it does anything of its own. Also Interchange's idle RSS, the time
 * from spawning `interchange serve` to its first 200 on /healthz, and a CLI command's wall time. The report is
 * printed and written to bench/RESULTS.md.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { createTestDatabase, testMasterKey } from '../test/helpers/postgres.ts';
import { freePort } from '../test/helpers/processes.ts';
import { type Child, rssMiB, runToEnd, spawnNode, startServer } from './children.ts';

const connections = 32;
const seconds = 8;
const warmupSeconds = 2;
const query = '{ users { id name email } }';
const bin = join(import.meta.dirname, '../bin/interchange.js');
const script = (name: string) => join(import.meta.dirname, name);

interface Target {
  name: string;
  url: string;
  headers: Record<string, string>;
  body: string;
  pid: number;
}

/** One measured target: requests per second, latency percentiles (ms) and failed requests. */
export interface LoadRow {
  name: string;
  rps: number;
  p50: number;
  p99: number;
  failures: number;
}

interface Row extends LoadRow {
  peakRssMiB: number;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const median = (values: number[]) => values.toSorted((a, b) => a - b)[Math.floor(values.length / 2)];

/** A few requests, one at a time, each of which must be a 200 carrying the 10 users: a wrong setup fails here, not in the table. */
async function warm(target: Target): Promise<void> {
  for (let i = 0; i < 20; i++) {
    const res = await fetch(target.url, { method: 'POST', headers: target.headers, body: target.body });
    const answer = (await res.json()) as { data?: { users?: unknown[]; data?: unknown[] } };
    const records = answer.data?.users ?? answer.data?.data;
    if (res.status !== 200 || records?.length !== 10) {
      throw new Error(`${target.name} answered ${res.status}: ${JSON.stringify(answer).slice(0, 300)}`);
    }
  }
}

async function load(target: Target): Promise<Row> {
  const headers = Object.entries(target.headers).flatMap(([name, value]) => ['--header', `${name}:${value}`]);
  const args = [target.url, '--method', 'POST', ...headers, '--body', target.body];
  const limits = ['--connections', String(connections), '--seconds', String(seconds), '--warmup', String(warmupSeconds)];
  const out = await runToEnd(script('load.ts'), [...args, ...limits]);
  const result = JSON.parse(out.trim().split('\n').pop() ?? '') as Omit<Row, 'name' | 'peakRssMiB'>;
  return { name: target.name, ...result, peakRssMiB: rssMiB(target.pid, 'VmHWM') };
}

type Started = { url: string; headers?: Record<string, string>; pipelineUrl?: string };

/** Starts a server script, remembered in `children` so that the caller stops it whatever happens. */
async function server(children: Child[], name: string, args: string[], env: NodeJS.ProcessEnv = {}) {
  const { child, info } = await startServer<Started>(script(name), args, env);
  children.push(child);
  return {
    pid: child.pid,
    url: info.url,
    pipelineUrl: info.pipelineUrl,
    headers: { 'content-type': 'application/json', ...info.headers },
  };
}

/** A fresh database on the PostgreSQL of scripts/test-services.sh, or why there is none. */
async function postgresDatabase(): Promise<{ url: string; drop(): Promise<void> } | string> {
  try {
    return await createTestDatabase();
  } catch (error) {
    return (error as Error).message;
  }
}

/** Milliseconds from spawning `interchange serve` to its first 200 on /healthz (polled every 20 ms), and its RSS 2 s later. */
async function startToReady(env: NodeJS.ProcessEnv, measureRss: boolean): Promise<{ ms: number; idleRssMiB?: number }> {
  const port = await freePort();
  const started = performance.now();
  const child = spawnNode(bin, ['serve'], { ...env, HOST: '127.0.0.1', PORT: String(port), LOG_LEVEL: 'silent' });
  try {
    while (
      !(await fetch(`http://127.0.0.1:${port}/healthz`)
        .then((res) => res.ok)
        .catch(() => false))
    ) {
      if (child.process.exitCode !== null) throw new Error(`interchange serve exited: ${child.stderr()}`);
      await sleep(20);
    }
    const ms = performance.now() - started;
    if (!measureRss) return { ms };
    await sleep(2000);
    return { ms, idleRssMiB: rssMiB(child.pid) };
  } finally {
    await child.stop();
  }
}

/**
 * Start-up and CLI times on one SQLite file, migrated first so that every run does the same work: medians of 5, after
 * a first start on an empty compile cache (bin/interchange.js), reported apart.
 */
async function processTimes(dir: string) {
  const env = { DATABASE_URL: `sqlite:${join(dir, 'cli.db')}`, NODE_COMPILE_CACHE: join(dir, 'compile-cache') };
  const coldStartMs = (await startToReady(env, false)).ms;
  await runToEnd(bin, ['migrate'], env);
  const starts: number[] = [];
  let idleRssMiB = 0;
  for (let i = 0; i < 5; i++) {
    const run = await startToReady(env, i === 4);
    starts.push(run.ms);
    idleRssMiB = run.idleRssMiB ?? idleRssMiB;
  }
  const cli: number[] = [];
  for (let i = 0; i < 5; i++) {
    const started = performance.now();
    await runToEnd(bin, ['tenants', 'list'], env);
    cli.push(performance.now() - started);
  }
  return { coldStartMs, startMs: median(starts), serveIdleRssMiB: idleRssMiB, cliMs: median(cli) };
}

function table(rows: Row[]): string[] {
  const base = rows.find((r) => r.name.startsWith('passthrough')) ?? rows[0];
  const lines = [
    '| target | req/s | p50 ms | p99 ms | failures | req/s vs passthrough | p50 added vs passthrough (ms) | peak RSS MiB |',
    '|---|--:|--:|--:|--:|--:|--:|--:|',
  ];
  for (const r of rows) {
    const cells = [r.rps.toFixed(0), r.p50.toFixed(2), r.p99.toFixed(2), String(r.failures)];
    cells.push(`${(r.rps / base.rps).toFixed(2)}x`, (r.p50 - base.p50).toFixed(2), r.peakRssMiB.toFixed(0));
    lines.push(`| ${r.name} | ${cells.join(' | ')} |`);
  }
  return lines;
}

interface Measured {
  rows: Row[];
  idle: { passthroughMiB: number; interchangeMiB: number };
  times: Awaited<ReturnType<typeof processTimes>>;
  postgresSkipped?: string;
}

function report(m: Measured): string {
  const cpu = cpus();
  const machine = `${cpu[0]?.model ?? 'unknown CPU'}, ${cpu.length} cores, ${(totalmem() / 2 ** 30).toFixed(1)} GiB`;
  return [
    '# Execute path, side by side',
    '',
    `${machine}; Node ${process.version}; ${new Date().toISOString()}.`,
    '',
    `Written by \`npm run bench\` (bench/execute-path.ts). Each server runs in a process of its own and the load generator (bench/load.ts) in another; one target at a time, ${connections} keep-alive connections with one request in flight each, ${seconds} s measured after ${warmupSeconds} s of warm-up. The upstream is \`node:http\` answering 10 users \`{id, name, email}\` to the query \`${query}\`. Interchange runs \`execute receive\` with a cached key. The pipeline row is that Interchange process answering the passthrough's request with the passthrough's handler, behind every per-request step Interchange takes before an execute (request id, API key, rate limit, scope, metrics, usage): the least an execute through this stack costs.`,
    '',
    ...table(m.rows),
    '',
    m.postgresSkipped
      ? `Interchange on PostgreSQL skipped: ${m.postgresSkipped}`
      : 'Interchange on PostgreSQL: a fresh database on 127.0.0.1 (scripts/test-services.sh).',
    '',
    `- Idle RSS 2 s after ready, before any load: passthrough ${m.idle.passthroughMiB.toFixed(0)} MiB, Interchange (SQLite, integration created) ${m.idle.interchangeMiB.toFixed(0)} MiB, \`interchange serve\` ${m.times.serveIdleRssMiB.toFixed(0)} MiB.`,
    `- \`interchange serve\` from spawn to the first 200 on /healthz (SQLite, migrated): ${m.times.startMs.toFixed(0)} ms, median of 5; the first start, on an empty compile cache (it strips and compiles every module, then keeps them): ${m.times.coldStartMs.toFixed(0)} ms.`,
    `- \`interchange tenants list\` wall time (SQLite, migrated): ${m.times.cliMs.toFixed(0)} ms, median of 5.`,
    '',
  ].join('\n');
}

async function measure(dir: string, children: Child[], pg: { url: string } | undefined): Promise<Omit<Measured, 'times'>> {
  const upstream = await server(children, 'servers/graphql-upstream.ts', []);
  const passthrough = await server(children, 'servers/passthrough.ts', [upstream.url]);
  const sqlite = await server(children, 'servers/interchange.ts', [upstream.url], {
    DATABASE_URL: `sqlite:${join(dir, 'ix.db')}`,
  });
  await sleep(2000);
  const idle = { passthroughMiB: rssMiB(passthrough.pid), interchangeMiB: rssMiB(sqlite.pid) };
  const execute = JSON.stringify({ operation: 'receive', query, records_path: 'users' });
  const targets: Target[] = [
    { name: 'upstream called directly', ...upstream, body: JSON.stringify({ query, variables: {} }) },
    { name: 'passthrough (Fastify + undici)', ...passthrough, body: JSON.stringify({ query }) },
    {
      name: 'Interchange request pipeline + passthrough handler, SQLite',
      ...sqlite,
      url: sqlite.pipelineUrl ?? '',
      body: JSON.stringify({ query }),
    },
    { name: 'Interchange execute receive, SQLite', ...sqlite, body: execute },
  ];
  if (pg) {
    const env = { DATABASE_URL: pg.url, IX_MASTER_KEY: testMasterKey() };
    targets.push({
      name: 'Interchange execute receive, PostgreSQL',
      ...(await server(children, 'servers/interchange.ts', [upstream.url], env)),
      body: execute,
    });
  }
  const rows: Row[] = [];
  for (const target of targets) {
    await warm(target);
    rows.push(await load(target));
  }
  return { rows, idle };
}

/** Runs the whole comparison, prints the report and writes it to bench/RESULTS.md. */
export async function runExecutePath(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'ix-bench-execute-'));
  const children: Child[] = [];
  const pg = await postgresDatabase();
  try {
    const measured = await measure(dir, children, typeof pg === 'string' ? undefined : pg);
    for (const child of children.splice(0)) await child.stop();
    const text = report({
      ...measured,
      times: await processTimes(dir),
      postgresSkipped: typeof pg === 'string' ? pg : undefined,
    });
    console.log(`\n${text}`);
    writeFileSync(join(import.meta.dirname, 'RESULTS.md'), text);
  } finally {
    for (const child of children) await child.stop();
    if (typeof pg !== 'string') await pg.drop();
    rmSync(dir, { recursive: true, force: true });
  }
}
