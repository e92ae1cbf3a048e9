import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { cliSource } from '../../src/audit/audit-log.ts';
import { createApiKey } from '../../src/auth/key-service.ts';
import { migrate, openStorage, type Storage } from '../../src/storage/database.ts';
import { insertTenant } from '../../src/storage/tenants.ts';
import { type PendingUsage, writeUsage } from '../../src/storage/usage.ts';
import { createTestDatabase } from '../support/postgres.ts';

function usage(requests: number): PendingUsage {
  const at = new Date().toISOString();
  return { requests, lastUsedAt: at, lastUsedIp: '127.0.0.1', days: new Map([[at.slice(0, 10), { requests, errors: 0 }]]) };
}

describe('usage writes from several instances on PostgreSQL', () => {
  let database: { url: string; drop(): Promise<void> };
  let a: Storage;
  let b: Storage;
  const keys: string[] = [];

  before(async () => {
    database = await createTestDatabase();
    a = openStorage(database.url);
    b = openStorage(database.url);
    await migrate(a);
    const tenant = { id: 't', name: 't', type: 'production' as const };
    await insertTenant(a.db, tenant);
    for (let i = 0; i < 4; i++)
      keys.push((await createApiKey(a.db, { ...tenant, created_at: '' }, { scopes: ['*'] }, 600, cliSource())).record.id);
  });
  after(async () => {
    await a.close();
    await b.close();
    await database.drop();
  });

  test('batches naming the same keys in opposite orders neither deadlock nor lose a count', async () => {
    const rounds = 30;
    for (let round = 0; round < rounds; round++) {
      // Instance A met the keys in one order, instance B in the reverse one.
      const forward = new Map(keys.map((k) => [k, usage(1)]));
      const backward = new Map([...keys].reverse().map((k) => [k, usage(2)]));
      await Promise.all([writeUsage(a.db, forward), writeUsage(b.db, backward)]);
    }
    const rows = await a.db.selectFrom('api_keys').select(['id', 'request_count']).execute();
    for (const row of rows) assert.equal(Number(row.request_count), rounds * 3, row.id);
    const days = await a.db.selectFrom('api_key_usage_daily').select(['requests']).execute();
    assert.equal(
      days.reduce((sum, d) => sum + Number(d.requests), 0),
      keys.length * rounds * 3,
    );
  });
});
