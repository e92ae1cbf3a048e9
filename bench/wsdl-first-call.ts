/**
 * One first call on a WSDL, in a process of its own so that its peak RSS is its own (bench/run.ts runs it):
 *   node bench/wsdl-first-call.ts interchange|node-soap WSDL_URL ENDPOINT_URL METHOD PARAMS_JSON
 * Prints {ms, rssBeforeMiB, peakRssMiB}: the time from the start of the load to the call's answer, the resident
 * memory once everything before the load was ready, and the process's peak (VmHWM). Each mode loads only its own
 * client's modules.
 * - interchange: the app on a temp SQLite file, the integration PUT (endpoint_url the WSDL, service_url the local
 *   endpoint), then the timed execute: fetch, parse and check the WSDL, call.
 * - node-soap: createClientAsync on the WSDL (endpoint overridden), then the timed call.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const [mode, wsdlUrl, endpoint, method, paramsJson] = process.argv.slice(2);
const params = JSON.parse(paramsJson ?? '{}');

function rssMiB(field: 'VmRSS' | 'VmHWM'): number {
  const line = readFileSync('/proc/self/status', 'utf8')
    .split('\n')
    .find((l) => l.startsWith(`${field}:`));
  return Number(line?.replace(/\D+/g, '') ?? 0) / 1024;
}

async function interchange(): Promise<number> {
  // Each process loads only the client it measures: the app here, node-soap in nodeSoap().
  const { build } = await import('../src/app.ts');
  const { createApiKey } = await import('../src/auth/key-service.ts');
  const { loadConfig } = await import('../src/config.ts');
  const { openStorage } = await import('../src/storage/database.ts');
  const { insertTenant } = await import('../src/storage/tenants.ts');
  const dir = mkdtempSync(join(tmpdir(), 'ix-bench-wsdl-'));
  try {
    const config = loadConfig({
      DATABASE_URL: `sqlite:${join(dir, 'ix.db')}`,
      LOG_LEVEL: 'silent',
      IX_UPSTREAM_MAX_BYTES: String(16 * 1024 * 1024),
    });
    const storage = openStorage(config.databaseUrl);
    const app = await build(config, { storage });
    const tenant = { id: 'bench', name: 'bench', type: 'production' as const, created_at: '' };
    await insertTenant(storage.db, { id: tenant.id, name: tenant.name, type: tenant.type });
    const { key } = await createApiKey(storage.db, tenant, { scopes: ['*'] }, 1000);
    const headers = { 'x-api-key': key, 'x-tenant-id': 'bench', 'content-type': 'application/json' };
    const put = await app.inject({
      method: 'PUT',
      url: '/api/v1/integrations/w',
      headers,
      payload: { connector: 'soap-1.0.0', config: { endpoint_url: wsdlUrl, service_url: endpoint, timeout_seconds: 120 } },
    });
    if (put.statusCode !== 201) throw new Error(put.body);
    before = rssMiB('VmRSS');
    const started = performance.now();
    const res = await app.inject({
      method: 'POST',
      url: '/api/v1/integrations/w/execute',
      headers,
      payload: { operation: 'send', method, params },
    });
    const ms = performance.now() - started;
    if (res.statusCode !== 200) throw new Error(`execute answered ${res.statusCode}: ${res.body.slice(0, 300)}`);
    await app.close();
    await storage.close();
    return ms;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function nodeSoap(): Promise<number> {
  const { createClientAsync } = await import('soap');
  before = rssMiB('VmRSS');
  const started = performance.now();
  const client = await createClientAsync(wsdlUrl, { endpoint });
  await (client as unknown as Record<string, (a: object) => Promise<unknown>>)[`${method}Async`](params);
  return performance.now() - started;
}

let before = 0;
const ms = mode === 'interchange' ? await interchange() : await nodeSoap();
console.log(JSON.stringify({ ms, rssBeforeMiB: before, peakRssMiB: rssMiB('VmHWM') }));
process.exit(0);
