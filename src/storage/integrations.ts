import type { Selectable } from 'kysely';
import { nowIso } from '../core/ids.ts';
import type { Db } from './database.ts';
import { decodeCursor, type Page, toPage } from './pagination.ts';
import type { IntegrationsTable } from './schema.ts';

/** An integration as stored: non-secret config in the clear, secrets as ciphertexts. */
export interface StoredIntegration {
  tenant_id: string;
  id: string;
  name: string;
  connector: string;
  config: Record<string, unknown>;
  secrets: Record<string, string>;
  /** The operation catalogue's settings as written (integrations/catalog-settings.ts reads them with defaults). */
  catalog: Record<string, unknown>;
  /** Bumped on every change: caches (the WSDL cache) key on it. */
  version: number;
  created_at: string;
  updated_at: string;
}

function fromRow(row: Selectable<IntegrationsTable>): StoredIntegration {
  return {
    ...row,
    config: JSON.parse(row.config) as Record<string, unknown>,
    secrets: JSON.parse(row.secrets) as Record<string, string>,
    catalog: JSON.parse(row.catalog) as Record<string, unknown>,
    version: Number(row.version),
  };
}

export async function findIntegration(db: Db, tenantId: string, id: string): Promise<StoredIntegration | undefined> {
  const row = await db
    .selectFrom('integrations')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('id', '=', id)
    .executeTakeFirst();
  return row && fromRow(row);
}

export interface IntegrationWrite {
  name: string;
  connector: string;
  config: Record<string, unknown>;
  secrets: Record<string, string>;
  /** Left out: kept as stored (`{}` for a new integration). */
  catalog?: Record<string, unknown>;
}

/**
 * Creates the integration, or replaces it when `expectedVersion` still matches (optimistic
 * concurrency: a change written in between makes this return undefined, and the caller retries).
 */
export async function saveIntegration(
  db: Db,
  tenantId: string,
  id: string,
  write: IntegrationWrite,
  existing: StoredIntegration | undefined,
): Promise<StoredIntegration | undefined> {
  const at = nowIso();
  const columns = {
    ...write,
    config: JSON.stringify(write.config),
    secrets: JSON.stringify(write.secrets),
    catalog: JSON.stringify(write.catalog ?? existing?.catalog ?? {}),
  };
  if (!existing) {
    const result = await db
      .insertInto('integrations')
      .values({ tenant_id: tenantId, id, ...columns, version: 1, created_at: at, updated_at: at })
      .onConflict((c) => c.columns(['tenant_id', 'id']).doNothing())
      .executeTakeFirst();
    if (Number(result.numInsertedOrUpdatedRows ?? 0) !== 1) return undefined;
  } else {
    const result = await db
      .updateTable('integrations')
      .set({ ...columns, version: existing.version + 1, updated_at: at })
      .where('tenant_id', '=', tenantId)
      .where('id', '=', id)
      .where('version', '=', existing.version)
      .executeTakeFirst();
    if (Number(result.numUpdatedRows) !== 1) return undefined;
  }
  return findIntegration(db, tenantId, id);
}

/** Deletes the integration if it is still at `version`: false when it is gone, or was changed since it was read. */
export async function deleteIntegration(db: Db, tenantId: string, id: string, version: number): Promise<boolean> {
  const result = await db
    .deleteFrom('integrations')
    .where('tenant_id', '=', tenantId)
    .where('id', '=', id)
    .where('version', '=', version)
    .executeTakeFirst();
  return Number(result.numDeletedRows) === 1;
}

export async function listIntegrations(
  db: Db,
  tenantId: string,
  options: { limit: number; cursor?: string },
): Promise<Page<StoredIntegration>> {
  let query = db.selectFrom('integrations').selectAll().where('tenant_id', '=', tenantId);
  const after = decodeCursor(options.cursor);
  if (after !== undefined) query = query.where('id', '>', after);
  const rows = await query
    .orderBy('id')
    .limit(options.limit + 1)
    .execute();
  return toPage(rows.map(fromRow), options.limit, (i) => i.id);
}
