import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import { type BuildOptions, build } from '../../src/app.ts';
import { cliSource } from '../../src/audit/audit-log.ts';
import { createApiKey } from '../../src/auth/key-service.ts';
import { type Config, loadConfig } from '../../src/config/config.ts';
import type { ConnectorDefinition } from '../../src/connectors/connector.ts';
import type { ApiKeyRecord } from '../../src/storage/api-keys.ts';
import { openStorage, type Storage } from '../../src/storage/database.ts';
import { insertTenant, type TenantType } from '../../src/storage/tenants.ts';
import { createTestDatabase, onPostgres, testMasterKey } from './postgres.ts';

/** The credentials `call` takes: a key's secret and its tenant. */
export interface Auth {
  key: string;
  tenant: string;
}

export interface Harness {
  app: FastifyInstance;
  storage: Storage;
  config: Config;
  dir: string;
  /** Creates a tenant (id → type) and returns it. */
  tenant(id: string, type?: TenantType): Promise<void>;
  /** Creates a key directly in storage; returns its secret and record. */
  key(
    tenantId: string,
    scopes: string[],
    extra?: { expires_at?: string; rate_limit_per_minute?: number; name?: string },
  ): Promise<{ key: string; record: ApiKeyRecord }>;
  /** A new key of the (existing) tenant with `scopes`, as the credentials `call` takes. */
  auth(tenantId: string, scopes: string[], extra?: { rate_limit_per_minute?: number }): Promise<Auth>;
  /** `app.inject` with the key and tenant headers set. */
  call(auth: Auth | null, options: InjectOptions): Promise<LightMyRequestResponse>;
  close(): Promise<void>;
}

/**
 * A fresh app on fresh storage: a SQLite file in a temp folder, or, when the suite runs on
 * PostgreSQL (IX_TEST_STORAGE=postgres: npm run test:api:pg), a new database on the test server.
 * `options.connectors` replaces the built-in connectors; `options.logStream` receives the logs; `options.webhooks`
 * paces webhook deliveries.
 */
export async function harness(
  env: Record<string, string> = {},
  options: {
    connectors?: (config: Config) => ConnectorDefinition[];
    logStream?: NodeJS.WritableStream;
    /** Webhook delivery pacing (retry delays, timeout, clock) for tests that cannot wait production's. */
    webhooks?: BuildOptions['webhooks'];
    /** Circuit breaker timings and clock, for tests that step a clock through them. */
    breakers?: BuildOptions['breakers'];
    /** The clock of people's cached memberships and sessions. */
    people?: BuildOptions['people'];
  } = {},
): Promise<Harness> {
  const dir = mkdtempSync(join(tmpdir(), 'ix-test-'));
  const database = onPostgres() ? await createTestDatabase() : undefined;
  const config = loadConfig({
    DATABASE_URL: database?.url ?? `sqlite:${join(dir, 'ix.db')}`,
    LOG_LEVEL: 'silent',
    ...(database && { IX_MASTER_KEY: testMasterKey() }),
    ...env,
  });
  const storage = openStorage(config.databaseUrl);
  const app = await build(config, {
    storage,
    connectors: options.connectors?.(config),
    logStream: options.logStream,
    webhooks: options.webhooks,
    breakers: options.breakers,
    people: options.people,
  });
  const h: Harness = {
    app,
    storage,
    config,
    dir,
    async tenant(id, type = 'production') {
      await insertTenant(storage.db, { id, name: `Tenant ${id}`, type });
    },
    async key(tenantId, scopes, extra = {}) {
      const tenant = { id: tenantId, name: '', type: 'production' as const, created_at: '' };
      const row = await storage.db.selectFrom('tenants').selectAll().where('id', '=', tenantId).executeTakeFirstOrThrow();
      return createApiKey(
        storage.db,
        { ...tenant, type: row.type as TenantType },
        { scopes, ...extra },
        config.defaultRateLimit,
        cliSource(),
      );
    },
    async auth(tenantId, scopes, extra = {}) {
      return { key: (await h.key(tenantId, scopes, extra)).key, tenant: tenantId };
    },
    call(auth, options) {
      const headers: Record<string, string> = { ...(options.headers as Record<string, string>) };
      if (auth) {
        headers['x-api-key'] = auth.key;
        headers['x-tenant-id'] = auth.tenant;
      }
      return app.inject({ ...options, headers });
    },
    async close() {
      // A test may have closed the app or storage itself (to see what happens when storage is gone).
      await app.close().catch(() => {});
      await storage.close().catch(() => {});
      await database?.drop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
  return h;
}

/** Tenants acme and globex, each with a key of `scopes`: the pair a test of tenant isolation compares. */
export async function twoTenants(h: Harness, scopes: string[]): Promise<{ acme: Auth; globex: Auth }> {
  await h.tenant('acme');
  await h.tenant('globex');
  return { acme: await h.auth('acme', scopes), globex: await h.auth('globex', scopes) };
}

/** The parsed JSON body. */
// biome-ignore lint/suspicious/noExplicitAny: tests read response bodies by shape and assert on the values.
export function body(response: LightMyRequestResponse): any {
  return JSON.parse(response.body);
}

/**
 * PUT, PATCH and execute of one tenant's integrations as `auth`, both read from `current` when a call is made, so a
 * suite can set them in its `before`.
 *
 * @example const { put, patch, execute } = integrationCalls(() => ({ h, auth }));
 */
export function integrationCalls(current: () => { h: Harness; auth: Auth }) {
  const call = (options: InjectOptions) => {
    const { h, auth } = current();
    return h.call(auth, options);
  };
  return {
    put: (id: string, connector: string, config: Record<string, unknown>) =>
      call({ method: 'PUT', url: `/api/v1/integrations/${id}`, payload: { connector, config } }),
    patch: (id: string, config: Record<string, unknown>) =>
      call({ method: 'PATCH', url: `/api/v1/integrations/${id}`, payload: { config } }),
    execute: (id: string, payload: Record<string, unknown>) =>
      call({ method: 'POST', url: `/api/v1/integrations/${id}/execute`, payload }),
  };
}

/**
 * Config for a GraphQL integration in front of an upstream that is not a real GraphQL server (a raw `node:http` one
 * that misbehaves on purpose, one that echoes): schema-aware checking off (docs/execute.md#schema-aware-checking), so
 * that what reaches it is exactly the test's requests, with no introspection before them.
 */
export const noSchemaCheck = { validate_schema: false } as const;
