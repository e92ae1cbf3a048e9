/**
 * `npm run bench`: requests per second and latency, each table against a baseline measured in the
 * same run:
 *   0. the execute path with every server and the load generator in processes of their own (bench/execute-path.ts,
 *      which writes bench/RESULTS.md); BENCH_ONLY=execute-path runs only this part;
 *   0b. the job queue of async executions on each storage (bench/queue.ts); BENCH_ONLY=queue runs only this part;
 *   0c. BENCH_ONLY=graphql-schema: schema-aware GraphQL checking per call and a cold introspection (bench/graphql-schema.ts).
 *       BENCH_ONLY=answer-reading: the CPU of refusing a million-node XML answer and of reading 10 MiB against 2.5 MiB
 *       (bench/answer-reading.ts).
 *   0d. BENCH_ONLY=wsdl-first-call: only the first call on WSDLs, ours against node-soap's, each in a fresh process;
 *       BENCH_ONLY=soap: the warm SOAP calls and a 10 MB answer too (bench/soap.ts), ours against node-soap, each
 *       client in its own process; writes its section of bench/RESULTS.md.
 * Then, in one process:
 *   1. API paths against GET /healthz (Fastify with no auth and no storage);
 *   2. `execute receive` through Interchange against POSTing the same query to the upstream directly.
 * The load generator and the upstream share the process, so the numbers are the whole cost of a
 * request on one core, client included. BENCH_REQUESTS and BENCH_CONCURRENCY tune the load.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { FastifyInstance } from 'fastify';
import { createClientAsync } from 'soap';
import { build } from '../src/app.ts';
import { cliSource } from '../src/audit/audit-log.ts';
import { createApiKey } from '../src/auth/key-service.ts';
import { loadConfig } from '../src/config/config.ts';
import { openStorage, type Storage } from '../src/storage/database.ts';
import { insertEntity } from '../src/storage/entities.ts';
import { insertTenant } from '../src/storage/tenants.ts';
import { startGraphqlServer } from '../test/support/graphql-server.ts';
import { startPhpSoapServer } from '../test/support/php-soap-server.ts';
import { corpusDir, corpusEntries, serveCorpus, zeepSamples } from '../test/support/wsdl-corpus.ts';
import { runAnswerReadingBench } from './answer-reading.ts';
import { compileCache, serviceNodeFlags } from './children.ts';
import { type LoadRow as Row, runExecutePath } from './execute-path.ts';
import { runGraphqlSchemaBench } from './graphql-schema.ts';
import { runQueueBench } from './queue.ts';
import { writeResultsSection } from './results.ts';
import { runSoapBench } from './soap.ts';

interface Scenario {
  name: string;
  url: string;
  method?: string;
  headers?: Record<string, string>;
  body?: () => string;
}

const requests = Number(process.env.BENCH_REQUESTS ?? 4000);
const concurrency = Number(process.env.BENCH_CONCURRENCY ?? 16);
// PHP's built-in server runs 8 workers: more concurrency would only measure its queue.
const soapRequests = Number(process.env.BENCH_SOAP_REQUESTS ?? 1500);
const soapConcurrency = 4;

async function measure(s: Scenario, total = requests, parallel = concurrency): Promise<Row> {
  const latencies: number[] = [];
  let next = 0;
  let failures = 0;
  const started = performance.now();
  const worker = async () => {
    while (next < total) {
      next += 1;
      const t0 = performance.now();
      const res = await fetch(s.url, {
        method: s.method ?? 'GET',
        headers: s.body ? { ...s.headers, 'content-type': 'application/json' } : s.headers,
        body: s.body?.(),
      });
      await res.arrayBuffer();
      if (res.status >= 300) failures += 1;
      latencies.push(performance.now() - t0);
    }
  };
  await Promise.all(Array.from({ length: parallel }, worker));
  const seconds = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))];
  return { name: s.name, rps: latencies.length / seconds, p50: at(0.5), p99: at(0.99), failures };
}

/** Warm-up run, then the measured one. */
async function row(s: Scenario, total = requests, parallel = concurrency): Promise<Row> {
  await measure(s, total, parallel);
  return measure(s, total, parallel);
}

function print(title: string, rows: Row[]): void {
  const base = rows[0];
  const pad = (t: string, n: number) => t.padEnd(n);
  console.log(`\n${title}`);
  console.log(
    `${pad('scenario', 60)} ${pad('req/s', 8)} ${pad('p50 ms', 8)} ${pad('p99 ms', 8)} ${pad('errors', 7)} ${pad('vs base', 8)} µs/req over base`,
  );
  for (const r of rows) {
    const overhead = (1 / r.rps - 1 / base.rps) * 1e6;
    console.log(
      `${pad(r.name, 60)} ${pad(r.rps.toFixed(0), 8)} ${pad(r.p50.toFixed(2), 8)} ${pad(r.p99.toFixed(2), 8)} ${pad(String(r.failures), 7)} ${pad(`${(r.rps / base.rps).toFixed(2)}x`, 8)} ${overhead.toFixed(0)}`,
    );
  }
}

async function startApp(dir: string, name: string, env: Record<string, string> = {}) {
  const config = loadConfig({
    DATABASE_URL: `sqlite:${join(dir, `${name}.db`)}`,
    LOG_LEVEL: 'silent',
    IX_DEFAULT_RATE_LIMIT: '1000000',
    IX_AUTH_FAILURE_LIMIT: '1000000',
    ...env,
  });
  const storage: Storage = openStorage(config.databaseUrl);
  const app: FastifyInstance = await build(config, { storage });
  const url = await app.listen({ host: '127.0.0.1', port: 0 });
  await insertTenant(storage.db, { id: 'bench', name: 'Bench', type: 'production' });
  const tenant = { id: 'bench', name: 'Bench', type: 'production' as const, created_at: '' };
  const { key } = await createApiKey(storage.db, tenant, { scopes: ['*'] }, config.defaultRateLimit, cliSource());
  const headers = { 'x-api-key': key, 'x-tenant-id': 'bench' };
  const close = async () => {
    await app.close();
    await storage.close();
  };
  return { url, storage, headers, close };
}

async function apiPaths(dir: string): Promise<Row[]> {
  const rows: Row[] = [];
  const app = await startApp(dir, 'api');
  await insertEntity(app.storage.db, 'bench', { entity_id: 'e1', name: 'One', status: 'active' });
  let n = 0;
  rows.push(await row({ name: 'GET /healthz (baseline: no auth, no storage)', url: `${app.url}/healthz` }));
  rows.push(
    await row({
      name: 'GET /api/v1/entities?id= (auth + 1 read)',
      url: `${app.url}/api/v1/entities?id=e1`,
      headers: app.headers,
    }),
  );
  rows.push(
    await row({ name: 'GET /api/v1/me (auth + key and tenant reads)', url: `${app.url}/api/v1/me`, headers: app.headers }),
  );
  rows.push(
    await row({
      name: 'POST /api/v1/entities (auth + 1 write)',
      url: `${app.url}/api/v1/entities`,
      method: 'POST',
      headers: app.headers,
      body: () => JSON.stringify({ entity_id: `b${n++}`, name: 'x' }),
    }),
  );
  rows.push(
    await row({
      name: 'GET /api/v1/me, malformed key (401 path)',
      url: `${app.url}/api/v1/me`,
      headers: { 'x-api-key': 'ix_live_bad', 'x-tenant-id': 'bench' },
    }),
  );
  await app.close();
  const uncached = await startApp(dir, 'uncached', { IX_KEY_CACHE_MS: '0' });
  await insertEntity(uncached.storage.db, 'bench', { entity_id: 'e1', name: 'One', status: 'active' });
  rows.push(
    await row({
      name: 'GET /api/v1/entities?id= (key read from SQLite every time)',
      url: `${uncached.url}/api/v1/entities?id=e1`,
      headers: uncached.headers,
    }),
  );
  await uncached.close();
  return rows;
}

async function executeVersusDirect(dir: string): Promise<Row[]> {
  const upstream = await startGraphqlServer({ userCount: 25 });
  const app = await startApp(dir, 'execute');
  const put = await fetch(`${app.url}/api/v1/integrations/bench-gql`, {
    method: 'PUT',
    headers: { ...app.headers, 'content-type': 'application/json' },
    body: JSON.stringify({ connector: 'graphql-1.0.0', config: { base_url: upstream.origin } }),
  });
  if (put.status !== 201) throw new Error(`integration not created: ${await put.text()}`);
  const query = '{ users(first: 25) { totalCount edges { node { id name email } } } }';
  const rows = [
    await row({
      name: 'POST upstream /graphql directly (baseline)',
      url: upstream.url,
      method: 'POST',
      body: () => JSON.stringify({ query, variables: {} }),
    }),
    await row({
      name: 'POST /integrations/{id}/execute receive (same query)',
      url: `${app.url}/api/v1/integrations/bench-gql/execute`,
      method: 'POST',
      headers: app.headers,
      body: () => JSON.stringify({ operation: 'receive', query }),
    }),
  ];
  upstream.requests.length = 0;
  await app.close();
  await upstream.close();
  return rows;
}

async function putIntegration(app: { url: string; headers: Record<string, string> }, id: string, body: object): Promise<void> {
  const res = await fetch(`${app.url}/api/v1/integrations/${id}`, {
    method: 'PUT',
    headers: { ...app.headers, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  if (res.status !== 201) throw new Error(`integration ${id} not created: ${await res.text()}`);
}

async function executeOnce(app: { url: string; headers: Record<string, string> }, id: string, body: object): Promise<number> {
  const started = performance.now();
  const res = await fetch(`${app.url}/api/v1/integrations/${id}/execute`, {
    method: 'POST',
    headers: { ...app.headers, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  if (res.status !== 200) throw new Error(`execute ${id} failed: ${text}`);
  return performance.now() - started;
}

/** SOAP against PHP's SoapServer (another process): node-soap built once vs WSDL mode (cached) vs raw mode. */
async function soapCalls(dir: string): Promise<{ calls: Row[]; firstCalls: Array<[string, number]> }> {
  const php = await startPhpSoapServer();
  const app = await startApp(dir, 'soap');
  try {
    const wsdlUrl = php.url('/calculator?wsdl');
    await putIntegration(app, 'calc', { connector: 'soap-1.0.0', config: { endpoint_url: wsdlUrl } });
    await putIntegration(app, 'calc-raw', {
      connector: 'soap-1.0.0',
      config: { endpoint_url: php.url('/calculator'), namespace: 'http://example.com/calculator' },
    });
    const client = await createClientAsync(wsdlUrl);
    const add = (client as unknown as { AddAsync(args: object): Promise<unknown> }).AddAsync.bind(client);
    const calls = [
      await rowOf('node-soap client built once: AddAsync (baseline)', () => add({ a: 2, b: 3 })),
      await row(
        {
          name: 'execute send Add, WSDL mode (cached WSDL)',
          url: `${app.url}/api/v1/integrations/calc/execute`,
          method: 'POST',
          headers: app.headers,
          body: () => JSON.stringify({ operation: 'send', method: 'Add', params: { a: 2, b: 3 } }),
        },
        soapRequests,
        soapConcurrency,
      ),
      await row(
        {
          name: 'execute send Add, raw mode',
          url: `${app.url}/api/v1/integrations/calc-raw/execute`,
          method: 'POST',
          headers: app.headers,
          body: () => JSON.stringify({ operation: 'send', method: 'Add', params: { a: 2, b: 3 } }),
        },
        soapRequests,
        soapConcurrency,
      ),
    ];

    const firstCalls: Array<[string, number]> = [];
    for (const ops of [300, 1000]) {
      const url = php.url(`/large?wsdl&ops=${ops}`);
      await putIntegration(app, `large-${ops}`, { connector: 'soap-1.0.0', config: { endpoint_url: url } });
      const call = { operation: 'send', method: `Op${ops - 1}`, params: { value: 'x' } };
      firstCalls.push([
        `Interchange, ${ops} operations: first call (fetch + parse + call)`,
        await executeOnce(app, `large-${ops}`, call),
      ]);
      firstCalls.push([`Interchange, ${ops} operations: second call (cached)`, await executeOnce(app, `large-${ops}`, call)]);
      const started = performance.now();
      const large = await createClientAsync(url);
      await (large as unknown as Record<string, (a: object) => Promise<unknown>>)[`Op${ops - 1}Async`]({ value: 'x' });
      firstCalls.push([`node-soap, ${ops} operations: createClientAsync + first call`, performance.now() - started]);
    }
    return { calls, firstCalls };
  } finally {
    await app.close();
    await php.close();
  }
}

/** Like measure(), for a call that is not an HTTP request of ours (the node-soap baseline). */
async function rowOf(name: string, call: () => Promise<unknown>): Promise<Row> {
  const once = async (): Promise<Row> => {
    const latencies: number[] = [];
    let next = 0;
    const started = performance.now();
    const worker = async () => {
      while (next < soapRequests) {
        next += 1;
        const t0 = performance.now();
        await call();
        latencies.push(performance.now() - t0);
      }
    };
    await Promise.all(Array.from({ length: soapConcurrency }, worker));
    latencies.sort((a, b) => a - b);
    const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))];
    return { name, rps: latencies.length / ((performance.now() - started) / 1000), p50: at(0.5), p99: at(0.99), failures: 0 };
  };
  await once();
  return once();
}

interface FirstCall {
  ms: number;
  rssBeforeMiB: number;
  peakRssMiB: number;
}

/**
 * One first call in a fresh process (bench/wsdl-first-call.ts), so that its peak RSS is its own: Interchange with the
 * flags `npm start` gives the service, node-soap with Node's defaults unless `flags` says otherwise.
 */
async function firstCallIn(
  mode: 'interchange' | 'node-soap',
  wsdl: string,
  endpoint: string,
  method: string,
  params: object,
  flags: string[] = mode === 'interchange' ? serviceNodeFlags : [],
) {
  const script = join(import.meta.dirname, 'wsdl-first-call.ts');
  const args = [...flags, script, mode, wsdl, endpoint, method, JSON.stringify(params)];
  // With the compile cache the service runs with (bin/interchange.js), for both: neither carries the type stripper.
  const env = { ...process.env, NODE_COMPILE_CACHE: compileCache };
  const { stdout } = await promisify(execFile)(process.execPath, args, { maxBuffer: 1024 * 1024, env });
  return JSON.parse(stdout.trim().split('\n').pop() ?? '{}') as FirstCall;
}

/** The corpus WSDLs issue 23 measures the first call on: the largest, a large rpc/literal one, and a WCF one. */
const firstCallWsdls = ['asmx-economic', 'vbox-webservice', 'wcf-bingads-campaign'];

/**
 * First call and peak RSS on corpus WSDLs (firstCallWsdls; medians of three interleaved rounds) and on a generated
 * 1,000-operation WSDL, Interchange against node-soap's createClientAsync on the same file, each in its own process; node-soap also with the service's
 * V8 flags, so that the flag's share of the difference shows. Each row's call is the first
 * sample call zeep builds for the WSDL; calls go to a local endpoint answering an empty Body, never to the WSDL's own
 * address.
 */
async function wsdlFirstCalls(): Promise<Array<[string, FirstCall]>> {
  const corpus = await serveCorpus();
  const php = await startPhpSoapServer();
  const endpoint = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/xml; charset=utf-8' });
    res.end('<s:Envelope xmlns:s="http://schemas.xmlsoap.org/soap/envelope/"><s:Body/></s:Envelope>');
  });
  await new Promise<void>((resolve) => endpoint.listen(0, '127.0.0.1', resolve));
  const endpointUrl = `http://127.0.0.1:${(endpoint.address() as AddressInfo).port}/soap`;
  try {
    const entries = firstCallWsdls.map((name) => {
      const entry = corpusEntries().find((e) => e.name === name);
      if (!entry) throw new Error(`${name} is not in ${corpusDir} (IX_WSDL_CORPUS)`);
      return entry;
    });
    const urls = entries.map((entry) => corpus.url(entry));
    const samples = await zeepSamples(urls);
    const rows: Array<[string, FirstCall]> = [];
    for (const [i, entry] of entries.entries()) {
      const found = samples[urls[i]];
      const sample = Array.isArray(found) ? found.find((s) => 'params' in s) : undefined;
      if (!sample || !('params' in sample)) throw new Error(`zeep gave no sample call for ${entry.name}`);
      const call = [urls[i], endpointUrl, sample.operation, sample.params] as const;
      const [ours, theirs, theirsFlagged] = await medianOfRounds([
        () => firstCallIn('interchange', ...call),
        () => firstCallIn('node-soap', ...call),
        () => firstCallIn('node-soap', ...call, serviceNodeFlags),
      ]);
      rows.push([`interchange, ${entry.name}: ${sample.operation}`, ours]);
      rows.push([`node-soap, ${entry.name}`, theirs]);
      rows.push([`node-soap with ${serviceNodeFlags.join(' ')}, ${entry.name}`, theirsFlagged]);
    }
    const generated = [php.url('/large?wsdl&ops=1000'), php.url('/large?ops=1000'), 'Op999', { value: 'x' }] as const;
    const [ours, theirs] = await medianOfRounds([
      () => firstCallIn('interchange', ...generated),
      () => firstCallIn('node-soap', ...generated),
    ]);
    rows.push(['interchange, generated 1,000 operations: Op999', ours]);
    rows.push(['node-soap, generated 1,000 operations: Op999', theirs]);
    return rows;
  } finally {
    endpoint.close();
    await php.close();
    await corpus.close();
  }
}

/** Each of `runs` once per round, interleaved, for three rounds: each one's median time and median peak RSS. */
async function medianOfRounds(runs: Array<() => Promise<FirstCall>>): Promise<FirstCall[]> {
  const measured: FirstCall[][] = runs.map(() => []);
  for (let round = 0; round < 3; round++) {
    for (const [i, run] of runs.entries()) measured[i].push(await run());
  }
  const median = (values: number[]) => [...values].sort((a, b) => a - b)[1];
  return measured.map((rounds) => ({
    ms: median(rounds.map((r) => r.ms)),
    rssBeforeMiB: median(rounds.map((r) => r.rssBeforeMiB)),
    peakRssMiB: median(rounds.map((r) => r.peakRssMiB)),
  }));
}

function printFirstCalls(rows: Array<[string, FirstCall]>): void {
  console.log('\nFirst call on a WSDL, each in a fresh process: time (ms), RSS before the load and peak RSS (MiB)');
  for (const [name, r] of rows) {
    console.log(
      `${name.padEnd(70)} ${r.ms.toFixed(0).padStart(6)} ${r.rssBeforeMiB.toFixed(0).padStart(6)} ${r.peakRssMiB.toFixed(0).padStart(6)}`,
    );
  }
}

/** The first calls as a Markdown table, with each Interchange row's time against the node-soap row after it. */
function firstCallsTable(rows: Array<[string, FirstCall]>): string {
  const lines = [
    '| first call: load, compile, call (fresh process; medians of 3) | ms | vs node-soap | RSS before MiB | peak RSS MiB | added MiB |',
    '|---|--:|--:|--:|--:|--:|',
  ];
  for (const [i, [name, r]] of rows.entries()) {
    const baseline = name.startsWith('interchange') ? rows[i + 1]?.[1] : undefined;
    const ratio = baseline ? `${(r.ms / baseline.ms).toFixed(2)}x` : '';
    const added = r.peakRssMiB - r.rssBeforeMiB;
    lines.push(
      `| ${name} | ${r.ms.toFixed(0)} | ${ratio} | ${r.rssBeforeMiB.toFixed(0)} | ${r.peakRssMiB.toFixed(0)} | ${added.toFixed(0)} |`,
    );
  }
  return lines.join('\n');
}

/** BENCH_ONLY=soap: the SOAP rows alone, warm calls (ours against node-soap's) and first calls. */
async function runSoap(): Promise<void> {
  const warm = await runSoapBench();
  console.log(`\n${warm}`);
  const firstCalls = await wsdlFirstCalls();
  printFirstCalls(firstCalls);
  writeResultsSection(
    'soap',
    `${warm}\n\nEach first call in a fresh process that loads only its own client, both with the compile cache the service runs with: Interchange's in the app (SQLite) with the service's V8 flags, node-soap's with Node's defaults and again with the service's flags. "RSS before" is the process at rest, before the WSDL: the whole service for Interchange, the library alone for node-soap.\n\n${firstCallsTable(firstCalls)}`,
  );
}

async function main() {
  if (process.env.BENCH_ONLY === 'queue') return runQueueBench();
  if (process.env.BENCH_ONLY === 'graphql-schema') return console.log(runGraphqlSchemaBench());
  if (process.env.BENCH_ONLY === 'answer-reading') return console.log(runAnswerReadingBench());
  if (process.env.BENCH_ONLY === 'wsdl-first-call') return printFirstCalls(await wsdlFirstCalls());
  if (process.env.BENCH_ONLY === 'soap') return runSoap();
  await runExecutePath();
  if (process.env.BENCH_ONLY === 'execute-path') return;
  const dir = mkdtempSync(join(tmpdir(), 'ix-bench-'));
  try {
    console.log(`${requests} requests per row, ${concurrency} concurrent, Node ${process.version}, one process`);
    print('API paths against GET /healthz', await apiPaths(dir));
    print('execute receive against the upstream called directly', await executeVersusDirect(dir));
    const soap = await soapCalls(dir);
    print(`SOAP Add against PHP SoapServer (${soapRequests} calls, ${soapConcurrency} concurrent)`, soap.calls);
    console.log('\nFirst call on a large WSDL (one run each, ms)');
    for (const [name, ms] of soap.firstCalls) console.log(`${name.padEnd(70)} ${ms.toFixed(0)}`);
    await runSoap();
    console.log('');
    await runQueueBench();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
