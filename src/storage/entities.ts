import { nowIso } from '../core/ids.ts';
import type { Db } from './database.ts';
import { decodeCursor, type Page, toPage } from './pagination.ts';

export const entityStatuses = ['active', 'inactive', 'archived'] as const;
export type EntityStatus = (typeof entityStatuses)[number];

/** An entity as the API shows it: always exactly these three fields. */
export interface Entity {
  entity_id: string;
  name: string;
  status: EntityStatus;
}

const columns = ['entity_id', 'name', 'status'] as const;

export async function findEntity(db: Db, tenantId: string, entityId: string): Promise<Entity | undefined> {
  const row = await db
    .selectFrom('entities')
    .select(columns)
    .where('tenant_id', '=', tenantId)
    .where('entity_id', '=', entityId)
    .executeTakeFirst();
  return row as Entity | undefined;
}

/** Inserts unless the id is taken in this tenant; `undefined` means it was. */
export async function insertEntity(db: Db, tenantId: string, entity: Entity): Promise<Entity | undefined> {
  const at = nowIso();
  const result = await db
    .insertInto('entities')
    .values({ tenant_id: tenantId, ...entity, created_at: at, updated_at: at })
    .onConflict((c) => c.columns(['tenant_id', 'entity_id']).doNothing())
    .executeTakeFirst();
  return Number(result.numInsertedOrUpdatedRows ?? 0) === 1 ? entity : undefined;
}

export async function updateEntity(
  db: Db,
  tenantId: string,
  entityId: string,
  changes: Partial<Pick<Entity, 'name' | 'status'>>,
): Promise<Entity | undefined> {
  await db
    .updateTable('entities')
    .set({ ...changes, updated_at: nowIso() })
    .where('tenant_id', '=', tenantId)
    .where('entity_id', '=', entityId)
    .execute();
  return findEntity(db, tenantId, entityId);
}

export async function deleteEntity(db: Db, tenantId: string, entityId: string): Promise<boolean> {
  const result = await db
    .deleteFrom('entities')
    .where('tenant_id', '=', tenantId)
    .where('entity_id', '=', entityId)
    .executeTakeFirst();
  return Number(result.numDeletedRows) === 1;
}

export async function listEntities(
  db: Db,
  tenantId: string,
  options: { limit: number; cursor?: string; status?: EntityStatus },
): Promise<Page<Entity>> {
  let query = db.selectFrom('entities').select(columns).where('tenant_id', '=', tenantId);
  if (options.status) query = query.where('status', '=', options.status);
  const after = decodeCursor(options.cursor);
  if (after !== undefined) query = query.where('entity_id', '>', after);
  const rows = (await query
    .orderBy('entity_id')
    .limit(options.limit + 1)
    .execute()) as Entity[];
  return toPage(rows, options.limit, (e) => e.entity_id);
}
