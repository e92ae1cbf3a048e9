import { nowIso } from '../core/ids.ts';
import type { Db } from './database.ts';

export const tenantTypes = ['production', 'sandbox', 'staging', 'development'] as const;
export type TenantType = (typeof tenantTypes)[number];

export interface Tenant {
  id: string;
  name: string;
  type: TenantType;
  created_at: string;
}

export async function insertTenant(db: Db, tenant: Omit<Tenant, 'created_at'>): Promise<Tenant | undefined> {
  const row = { ...tenant, created_at: nowIso() };
  const result = await db
    .insertInto('tenants')
    .values(row)
    .onConflict((c) => c.column('id').doNothing())
    .executeTakeFirst();
  return Number(result.numInsertedOrUpdatedRows ?? 0) === 1 ? row : undefined;
}

export async function findTenant(db: Db, id: string): Promise<Tenant | undefined> {
  const row = await db.selectFrom('tenants').selectAll().where('id', '=', id).executeTakeFirst();
  return row as Tenant | undefined;
}

export async function listTenants(db: Db): Promise<Tenant[]> {
  return (await db.selectFrom('tenants').selectAll().orderBy('id').execute()) as Tenant[];
}
