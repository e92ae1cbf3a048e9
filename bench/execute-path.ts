/**
 * The execute path side by side (issue 10), each server in a process of its own and the load generator
 * (bench/load.ts) in another, one target at a time: the GraphQL upstream called directly; a bare Fastify + undici
 * passthrough (bench/servers/passthrough.ts), the floor any Node gateway pays; Interchange's `execute receive` on
 * SQLite and, when scripts/test-services.sh's PostgreSQL answers, on PostgreSQL. Ratios are against the passthrough,
 * which does the same HTTP and JSON work without auth, storage or checks. Between them, the passthrough's handler
 * behind Interchange's per-request steps (request id, key, rate limit, scope, metrics, usage): what an execute costs
 * at least on this stack, before it does anything of its own. The targets are measured in interleaved rounds and
 * compared per round, so a machine whose load drifts (2 shared cores) moves them alike. Then peak RSS with 2,000 calls
 * in flight against an upstream answering after 1 s, the passthrough against Interchange. Also Interchange's idle RSS, the time
 * from spawning `interchange serve` to its first 200 on /healthz, and a CLI command's wall time. The report is
 * printed and written to bench/RESULTS.md.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { createTestDatabase, testMasterKey } from '../test/support/postgres.ts';
import { freePort } from '../test/support/processes.ts';
import { type Child, rssMiB, runToEnd, spawnNode, startServer } from './children.ts';
import { writeResultsSection } from './results.ts';

const connections = 32;
/** Every target is measured once per round, the rounds one after the other: a machine's drift hits them all alike. */
const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
const seconds = 5;
const warmupSeconds = 1;
/** The in-flight memory figure: this many calls at once against an upstream that answers after 1 s. */
const inFlight = 2000;
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
  /** req/s over the passthrough's in the same round, the median of the rounds; and the lowest and highest. */
  ratio: number;
  ratioRange: [number, number];
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const median = (values: number[]) => values.toSorted((a, b) => a - b)[Math.floor(values.length / 2)];

/** A few requests, one at a time, each of which must be a 200 carrying the 10 users: a wrong setup fails here, not in the table. */
async function warm(target: Target, calls = 20): Promise<void> {
  for (let i = 0; i < calls; i++) {
    const res = await fetch(target.url, { method: 'POST', headers: target.headers, body: target.body });
    const answer = (await res.json()) as { data?: { users?: unknown[]; data?: unknown[] } };
    const records = answer.data?.users ?? answer.data?.data;
    if (res.status !== 200 || records?.length !== 10) {
      throw new Error(`${target.name} answered ${res.status}: ${JSON.stringify(answer).slice(0, 300)}`);
    }
  }
}

async function load(target: Target): Promise<LoadRow> {
  const headers = Object.entries(target.headers).flatMap(([name, value]) => ['--header', `${name}:${value}`]);
  const args = [target.url, '--method', 'POST', ...headers, '--body', target.body];
  const limits = ['--connections', String(connections), '--seconds', String(seconds), '--warmup', String(warmupSeconds)];
  const out = await runToEnd(script('load.ts'), [...args, ...limits]);
  const result = JSON.parse(out.trim().split('\n').pop() ?? '') as Omit<LoadRow, 'name'>;
  return { name: target.name, ...result };
}

/**
 * Each target once per round, `rounds` times: per target the median req/s, p50 and p99 of its rounds, the failures of
 * all, its peak RSS over all of them, and the median of its per-round ratios against the passthrough (the first
 * target whose name starts with `passthrough`), each taken from one round, so drift between rounds cancels out.
 */
async function interleaved(targets: Target[]): Promise<Row[]> {
  const measured = targets.map(() => [] as LoadRow[]);
  const base = Math.max(
    0,
    targets.findIndex((t) => t.name.startsWith('passthrough')),
  );
  for (let round = 0; round < rounds; round++) {
    for (const [i, target] of targets.entries()) measured[i].push(await load(target));
  }
  return targets.map((target, i) => {
    const runs = measured[i];
    const ratios = runs.map((r, round) => r.rps / measured[base][round].rps);
    return {
      name: target.name,
      rps: median(runs.map((r) => r.rps)),
      p50: median(runs.map((r) => r.p50)),
      p99: median(runs.map((r) => r.p99)),
      failures: runs.reduce((sum, r) => sum + r.failures, 0),
      ratio: median(ratios),
      ratioRange: [Math.min(...ratios), Math.max(...ratios)],
      peakRssMiB: rssMiB(target.pid, 'VmHWM'),
    };
  });
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
    const range = `${r.ratioRange[0].toFixed(2)}–${r.ratioRange[1].toFixed(2)}`;
    cells.push(`${r.ratio.toFixed(2)}x (${range})`, (r.p50 - base.p50).toFixed(2), r.peakRssMiB.toFixed(0));
    lines.push(`| ${r.name} | ${cells.join(' | ')} |`);
  }
  return lines;
}

/** One server's memory with `inFlight` calls at once: RSS before them, and its peak. */
interface InFlightRun {
  idleMiB: number;
  peakMiB: number;
}

interface InFlightRow {
  name: string;
  idleMiB: number;
  peakMiB: number;
  /** Peak over the passthrough's of the same round, the median of the rounds; and the lowest and highest. */
  ratio: number;
  ratioRange: [number, number];
}

/**
 * Peak RSS with `inFlight` calls at once against an upstream that answers after 1 s: the passthrough and Interchange
 * (SQLite) each in a fresh process per round (a process's peak is the highest it ever was), interleaved. The calls
 * come from bench/flood.ts, one connection each, twice over, so that the second burst finds what the first left.
 * Interchange's tenant concurrency is raised to let them all in.
 */
async function inFlightMemory(dir: string, children: Child[]): Promise<InFlightRow[]> {
  const slow = await server(children, 'servers/graphql-upstream.ts', [], { DELAY_MS: '1000' });
  const runs: Record<'passthrough' | 'interchange', InFlightRun[]> = { passthrough: [], interchange: [] };
  const execute = JSON.stringify({ operation: 'receive', query, records_path: 'users' });
  for (let round = 0; round < rounds; round++) {
    for (const kind of ['passthrough', 'interchange'] as const) {
      const started =
        kind === 'passthrough'
          ? await startServer<Started>(script('servers/passthrough.ts'), [slow.url])
          : await startServer<Started>(script('servers/interchange.ts'), [slow.url], {
              DATABASE_URL: `sqlite:${join(dir, `in-flight-${round}.db`)}`,
              IX_TENANT_CONCURRENCY: String(inFlight),
            });
      try {
        const target = {
          name: kind,
          url: started.info.url,
          headers: { 'content-type': 'application/json', ...started.info.headers },
          body: kind === 'passthrough' ? JSON.stringify({ query }) : execute,
          pid: started.child.pid,
        };
        // Against the slow upstream each call takes a second: a few show that the setup works.
        await warm(target, 3);
        await sleep(1000);
        const idleMiB = rssMiB(target.pid);
        const headers = Object.entries(target.headers).flatMap(([name, value]) => ['--header', `${name}:${value}`]);
        const args = [target.url, '--body', target.body, ...headers, '--calls', String(inFlight), '--rounds', '2'];
        const statuses = JSON.parse(await runToEnd(script('flood.ts'), args)) as Record<string, number>;
        if (statuses[200] !== inFlight * 2) throw new Error(`${kind} in flight answered ${JSON.stringify(statuses)}`);
        runs[kind].push({ idleMiB, peakMiB: rssMiB(target.pid, 'VmHWM') });
      } finally {
        await started.child.stop();
      }
    }
  }
  return (['passthrough', 'interchange'] as const).map((kind) => {
    const ratios = runs[kind].map((r, round) => r.peakMiB / runs.passthrough[round].peakMiB);
    return {
      name: kind === 'passthrough' ? 'passthrough (Fastify + undici)' : 'Interchange execute receive, SQLite',
      idleMiB: median(runs[kind].map((r) => r.idleMiB)),
      peakMiB: median(runs[kind].map((r) => r.peakMiB)),
      ratio: median(ratios),
      ratioRange: [Math.min(...ratios), Math.max(...ratios)],
    };
  });
}

function inFlightTable(rows: InFlightRow[]): string[] {
  const lines = [
    '| server | RSS before MiB | peak RSS MiB | peak vs passthrough | KiB per call in flight |',
    '|---|--:|--:|--:|--:|',
  ];
  for (const r of rows) {
    const perCall = ((r.peakMiB - r.idleMiB) * 1024) / inFlight;
    const ratio = `${r.ratio.toFixed(2)}x (${r.ratioRange[0].toFixed(2)}–${r.ratioRange[1].toFixed(2)})`;
    lines.push(`| ${r.name} | ${r.idleMiB.toFixed(0)} | ${r.peakMiB.toFixed(0)} | ${ratio} | ${perCall.toFixed(0)} |`);
  }
  return lines;
}

interface Measured {
  rows: Row[];
  inFlight: InFlightRow[];
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
    `Written by \`npm run bench\` (bench/execute-path.ts). Each server runs in a process of its own and the load generator (bench/load.ts) in another; one target at a time, ${connections} keep-alive connections with one request in flight each, ${seconds} s measured after ${warmupSeconds} s of warm-up, every target once per round for ${rounds} rounds; a row shows the medians of its rounds and the median of its per-round ratios against the passthrough (lowest–highest in brackets). The upstream is \`node:http\` answering 10 users \`{id, name, email}\` to the query \`${query}\`. Interchange runs \`execute receive\` with a cached key. The pipeline row is that Interchange process answering the passthrough's request with the passthrough's handler, behind every per-request step Interchange takes before an execute (request id, API key, rate limit, scope, metrics, usage): the least an execute through this stack costs.`,
    '',
    ...table(m.rows),
    '',
    m.postgresSkipped
      ? `Interchange on PostgreSQL skipped: ${m.postgresSkipped}`
      : 'Interchange on PostgreSQL: a fresh database on 127.0.0.1 (scripts/test-services.sh).',
    '',
    `Memory with ${inFlight.toLocaleString('en')} calls in flight against the same upstream answering after 1 s: each server in a fresh process per round, warmed with 3 calls, then ${inFlight.toLocaleString('en')} calls at once (one connection each, bench/flood.ts), twice; medians of ${rounds} interleaved rounds.`,
    '',
    ...inFlightTable(m.inFlight),
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
  for (const target of targets) await warm(target);
  const rows = await interleaved(targets);
  for (const child of children.splice(0)) await child.stop();
  return { rows, idle, inFlight: await inFlightMemory(dir, children) };
}

/** Runs the whole comparison, prints the report and writes it to its section of bench/RESULTS.md. */
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
    writeResultsSection('execute-path', text);
  } finally {
    for (const child of children) await child.stop();
    if (typeof pg !== 'string') await pg.drop();
    rmSync(dir, { recursive: true, force: true });
  }
}
