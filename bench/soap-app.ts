/**
 * The app the SOAP benches' Interchange processes run (bench/wsdl-first-call.ts, bench/soap-warm.ts): on a temp
 * SQLite file, a tenant with a key no rate limit holds back, and integration `w` in WSDL mode on `wsdlUrl`, its calls
 * sent to `endpoint`. Its modules are imported here, when it is built, so that a process measuring node-soap never
 * loads them.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cliSource } from '../src/audit/audit-log.ts';

/** POSTs an execute to integration `w`; its `data`, or a throw when it is not 200. */
export type Execute = (payload: string) => Promise<unknown>;

/** Builds the app, runs `measure` with it, then closes it and removes its files. */
export async function withSoapApp<T>(wsdlUrl: string, endpoint: string, measure: (execute: Execute) => Promise<T>): Promise<T> {
  const { build } = await import('../src/app.ts');
  const { createApiKey } = await import('../src/auth/key-service.ts');
  const { loadConfig } = await import('../src/config/config.ts');
  const { openStorage } = await import('../src/storage/database.ts');
  const { insertTenant } = await import('../src/storage/tenants.ts');
  const dir = mkdtempSync(join(tmpdir(), 'ix-bench-soap-'));
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
    const { key } = await createApiKey(
      storage.db,
      tenant,
      { scopes: ['*'], rate_limit_per_minute: 1_000_000 },
      1000,
      cliSource(),
    );
    const headers = { 'x-api-key': key, 'x-tenant-id': 'bench', 'content-type': 'application/json' };
    const put = await app.inject({
      method: 'PUT',
      url: '/api/v1/integrations/w',
      headers,
      payload: { connector: 'soap-1.0.0', config: { endpoint_url: wsdlUrl, service_url: endpoint, timeout_seconds: 120 } },
    });
    if (put.statusCode !== 201) throw new Error(put.body);
    const result = await measure(async (payload) => {
      const res = await app.inject({ method: 'POST', url: '/api/v1/integrations/w/execute', headers, payload });
      if (res.statusCode !== 200) throw new Error(`execute answered ${res.statusCode}: ${res.body.slice(0, 300)}`);
      return JSON.parse(res.body).data;
    });
    await app.close();
    await storage.close();
    return result;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
