/**
 * Interchange for bench/execute-path.ts, ready for `execute receive` against one upstream:
 *   DATABASE_URL=… node bench/servers/interchange.ts UPSTREAM_URL
 * DATABASE_URL defaults to a SQLite file in a temp folder (removed on exit); IX_MASTER_KEY to a random one, which
 * PostgreSQL requires. Creates tenant `bench`, a `*` key at the highest rate limit a key may have (a bench must not
 * measure the limiter's 429s) and the GraphQL integration `g` on UPSTREAM_URL, then listens on a free port of
 * 127.0.0.1 and prints {"url": "…/api/v1/integrations/g/execute", "headers": {…}, "pipelineUrl": "…"}. SIGTERM closes it.
 *
 * `pipelineUrl` is a route added here for the bench only: the passthrough's handler (bench/servers/passthrough.ts)
 * behind every per-request step Interchange has before an execute starts (request id, API key, rate limit, scope,
 * metrics, usage), which is the least an execute through this stack can cost.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { Agent } from 'undici';
import { build } from '../../src/app.ts';
import { cliSource } from '../../src/audit/audit-log.ts';
import { createApiKey, maxRateLimitPerMinute } from '../../src/auth/key-service.ts';
import { loadConfig } from '../../src/config/config.ts';
import { openStorage } from '../../src/storage/database.ts';
import { insertTenant } from '../../src/storage/tenants.ts';
import { passthroughHandler } from './passthrough-handler.ts';

// GC_LOG=file: every garbage collection of 10 ms or more, one line each (kind, ms), to see what holds the loop.
if (process.env.GC_LOG) {
  const { appendFileSync } = await import('node:fs');
  const { PerformanceObserver } = await import('node:perf_hooks');
  const kinds: Record<number, string> = { 1: 'major', 2: 'minor', 4: 'incremental', 8: 'weakcb' };
  new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      const kind = (entry as { detail?: { kind?: number } }).detail?.kind ?? 0;
      if (entry.duration >= 10)
        appendFileSync(process.env.GC_LOG as string, `${kinds[kind] ?? kind} ${entry.duration.toFixed(1)}\n`);
    }
  }).observe({ entryTypes: ['gc'] });
}

const upstreamUrl = process.argv[2];
/** Optional: an upstream of large pages for a second tenant, `bulk`, with the integration `big` (bench/event-loop.ts). */
const bulkUpstreamUrl = process.argv[3];
if (!upstreamUrl) throw new Error('usage: node bench/servers/interchange.ts UPSTREAM_URL [BULK_UPSTREAM_URL]');
const tempDir = process.env.DATABASE_URL ? undefined : mkdtempSync(join(tmpdir(), 'ix-bench-server-'));
const config = loadConfig({
  DATABASE_URL: process.env.DATABASE_URL ?? `sqlite:${join(tempDir ?? '', 'ix.db')}`,
  IX_MASTER_KEY: process.env.IX_MASTER_KEY ?? randomBytes(32).toString('base64'),
  LOG_LEVEL: 'silent',
  // The upstream is on 127.0.0.1: stated here, not left to the default.
  IX_EGRESS_ALLOW_PRIVATE: 'true',
  // bench/event-loop.ts lets one tenant have thousands of executes in flight.
  ...(process.env.IX_TENANT_CONCURRENCY && { IX_TENANT_CONCURRENCY: process.env.IX_TENANT_CONCURRENCY }),
  // bench/queue.ts sets how many async executions the worker runs at once.
  ...(process.env.IX_WORKER_CONCURRENCY && { IX_WORKER_CONCURRENCY: process.env.IX_WORKER_CONCURRENCY }),
});
const storage = openStorage(config.databaseUrl, { pgPoolMax: config.pgPoolMax });
const app = await build(config, { storage });

// Before anything makes the app ready (inject below): Fastify takes no routes after that.
const dispatcher = new Agent();
app.post<{ Body: { query: string } }>(
  '/bench/pipeline',
  { config: { scope: 'integrations.execute' } },
  passthroughHandler(upstreamUrl, dispatcher),
);

// How long this process's event loop was held since the last call (then started over), in ms: what every other
// request waited at worst. For bench/event-loop.ts; sampled every 10 ms.
const loopDelay = monitorEventLoopDelay({ resolution: 10 });
loopDelay.enable();
app.get('/bench/event-loop', async () => {
  const ms = (ns: number) => Math.round(ns / 1e5) / 10;
  const answer = { max_ms: ms(loopDelay.max), p99_ms: ms(loopDelay.percentile(99)), p50_ms: ms(loopDelay.percentile(50)) };
  loopDelay.reset();
  return answer;
});

const tenant = await insertTenant(storage.db, { id: 'bench', name: 'Bench', type: 'production' });
if (!tenant) throw new Error('tenant bench exists already: DATABASE_URL must name an empty database');
const { key } = await createApiKey(storage.db, tenant, { scopes: ['*'] }, maxRateLimitPerMinute, cliSource());
const headers = { 'x-api-key': key, 'x-tenant-id': 'bench', 'content-type': 'application/json' };
const put = await app.inject({
  method: 'PUT',
  url: '/api/v1/integrations/g',
  headers,
  payload: { connector: 'graphql-1.0.0', config: { base_url: upstreamUrl } },
});
if (put.statusCode !== 201) throw new Error(`integration g not created: ${put.body}`);

let bulk: { url: string; headers: Record<string, string> } | undefined;
if (bulkUpstreamUrl) {
  const bulkTenant = await insertTenant(storage.db, { id: 'bulk', name: 'Bulk', type: 'production' });
  if (!bulkTenant) throw new Error('tenant bulk exists already');
  const bulkKey = await createApiKey(storage.db, bulkTenant, { scopes: ['*'] }, maxRateLimitPerMinute, cliSource());
  const bulkHeaders = { 'x-api-key': bulkKey.key, 'x-tenant-id': 'bulk', 'content-type': 'application/json' };
  const created = await app.inject({
    method: 'PUT',
    url: '/api/v1/integrations/big',
    headers: bulkHeaders,
    payload: { connector: 'graphql-1.0.0', config: { base_url: bulkUpstreamUrl } },
  });
  if (created.statusCode !== 201) throw new Error(`integration big not created: ${created.body}`);
  bulk = { url: '/api/v1/integrations/big/execute', headers: bulkHeaders };
}

const origin = await app.listen({ host: '127.0.0.1', port: 0 });
for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.once(signal, async () => {
    await app.close();
    await dispatcher.close();
    await storage.close();
    if (tempDir) rmSync(tempDir, { recursive: true, force: true });
    process.exit(0);
  });
}
console.log(
  JSON.stringify({
    url: `${origin}/api/v1/integrations/g/execute`,
    headers,
    pipelineUrl: `${origin}/bench/pipeline`,
    loopUrl: `${origin}/bench/event-loop`,
    ...(bulk && { bulk: { url: `${origin}${bulk.url}`, headers: bulk.headers } }),
  }),
);
