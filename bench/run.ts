/**
 * `npm run bench`: requests per second and latency of the API's paths against a baseline measured
 * in the same process (GET /healthz: Fastify with no auth and no storage). The load generator shares
 * the process, so the numbers are the whole cost of a request on one core, client included.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build } from '../src/app.ts';
import { createApiKey } from '../src/auth/key-service.ts';
import { loadConfig } from '../src/config.ts';
import { openStorage } from '../src/storage/database.ts';
import { insertEntity } from '../src/storage/entities.ts';
import { insertTenant } from '../src/storage/tenants.ts';

interface Scenario {
  name: string;
  method: string;
  path: string;
  auth: boolean;
  body?: () => string;
}

const requests = Number(process.env.BENCH_REQUESTS ?? 4000);
const concurrency = Number(process.env.BENCH_CONCURRENCY ?? 16);

async function run(url: string, s: Scenario, headers: Record<string, string>) {
  const latencies: number[] = [];
  let next = 0;
  let failures = 0;
  const started = performance.now();
  const worker = async () => {
    while (next < requests) {
      next += 1;
      const t0 = performance.now();
      const res = await fetch(url + s.path, {
        method: s.method,
        headers: s.body ? { ...headers, 'content-type': 'application/json' } : headers,
        body: s.body?.(),
      });
      await res.arrayBuffer();
      if (res.status >= 300) failures += 1;
      latencies.push(performance.now() - t0);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  const seconds = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))];
  return { rps: latencies.length / seconds, p50: at(0.5), p99: at(0.99), failures };
}

async function main() {
  const dir = mkdtempSync(join(tmpdir(), 'ix-bench-'));
  const rows: Array<{ name: string; rps: number; p50: number; p99: number; failures: number }> = [];
  try {
    for (const env of [{}, { IX_KEY_CACHE_MS: '0' }] as Record<string, string>[]) {
      const config = loadConfig({
        DATABASE_URL: `sqlite:${join(dir, `bench-${rows.length}.db`)}`,
        LOG_LEVEL: 'silent',
        IX_DEFAULT_RATE_LIMIT: '1000000',
        IX_AUTH_FAILURE_LIMIT: '1000000',
        ...env,
      });
      const storage = openStorage(config.databaseUrl);
      const app = await build(config, { storage });
      const url = await app.listen({ host: '127.0.0.1', port: 0 });
      await insertTenant(storage.db, { id: 'bench', name: 'Bench', type: 'production' });
      const tenant = { id: 'bench', name: 'Bench', type: 'production' as const, created_at: '' };
      const { key } = await createApiKey(storage.db, tenant, { scopes: ['*'] }, config.defaultRateLimit);
      await insertEntity(storage.db, 'bench', { entity_id: 'e1', name: 'One', status: 'active' });
      const headers = { 'x-api-key': key, 'x-tenant-id': 'bench' };
      let n = 0;
      const cached = env.IX_KEY_CACHE_MS !== '0';
      const scenarios: Scenario[] = cached
        ? [
            { name: 'GET /healthz (baseline: no auth, no storage)', method: 'GET', path: '/healthz', auth: false },
            { name: 'GET /api/v1/me (auth, cached key)', method: 'GET', path: '/api/v1/me', auth: true },
            { name: 'GET /api/v1/entities?id= (auth + 1 read)', method: 'GET', path: '/api/v1/entities?id=e1', auth: true },
            {
              name: 'POST /api/v1/entities (auth + 1 write)',
              method: 'POST',
              path: '/api/v1/entities',
              auth: true,
              body: () => JSON.stringify({ entity_id: `b${n++}`, name: 'x' }),
            },
            { name: 'GET /api/v1/me with a bad key (401 path)', method: 'GET', path: '/api/v1/me', auth: false },
          ]
        : [{ name: 'GET /api/v1/me (auth, key read from SQLite each time)', method: 'GET', path: '/api/v1/me', auth: true }];
      for (const s of scenarios) {
        const h = s.auth ? headers : s.name.includes('bad key') ? { 'x-api-key': 'ix_live_bad', 'x-tenant-id': 'bench' } : {};
        await run(url, s, h); // warm-up
        rows.push({ name: s.name, ...(await run(url, s, h)) });
      }
      await app.close();
      await storage.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const base = rows[0];
  const pad = (t: string, n: number) => t.padEnd(n);
  console.log(`\n${requests} requests per row, ${concurrency} concurrent, Node ${process.version}, one process\n`);
  console.log(
    `${pad('scenario', 58)} ${pad('req/s', 9)} ${pad('p50 ms', 8)} ${pad('p99 ms', 8)} ${pad('vs baseline', 12)} µs/req over baseline`,
  );
  for (const r of rows) {
    const ratio = r.rps / base.rps;
    const overhead = (1 / r.rps - 1 / base.rps) * 1e6;
    console.log(
      `${pad(r.name, 58)} ${pad(r.rps.toFixed(0), 9)} ${pad(r.p50.toFixed(2), 8)} ${pad(r.p99.toFixed(2), 8)} ${pad(`${ratio.toFixed(2)}x`, 12)} ${overhead.toFixed(0)}`,
    );
  }
}

await main();
