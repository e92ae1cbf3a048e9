import type { Selectable } from 'kysely';
import type { Db } from './database.ts';
import { decodeCursor, type Page, toPage } from './pagination.ts';
import type { ApiKeysTable } from './schema.ts';

/** A stored key, as the code uses it (never the secret, only its hash). */
export interface ApiKeyRecord {
  id: string;
  tenant_id: string;
  lineage_id: string;
  name: string;
  hash: string;
  prefix: string;
  start: string;
  last4: string;
  scopes: string[];
  expires_at: string | null;
  rate_limit_per_minute: number;
  legacy: boolean;
  created_at: string;
  revoked_at: string | null;
  rotated_to: string | null;
  last_used_at: string | null;
  last_used_ip: string | null;
  request_count: number;
  /** The user who created the key through the API; null for keys made with a key or the CLI. */
  created_by: string | null;
}

function fromRow(row: Selectable<ApiKeysTable>): ApiKeyRecord {
  return {
    ...row,
    scopes: JSON.parse(row.scopes) as string[],
    legacy: Number(row.legacy) === 1,
    rate_limit_per_minute: Number(row.rate_limit_per_minute),
    request_count: Number(row.request_count),
  };
}

function toRow(key: ApiKeyRecord): ApiKeysTable {
  return { ...key, scopes: JSON.stringify(key.scopes), legacy: key.legacy ? 1 : 0 };
}

export async function insertKey(db: Db, key: ApiKeyRecord): Promise<void> {
  await db.insertInto('api_keys').values(toRow(key)).execute();
}

export async function findKeyByHash(db: Db, hash: string): Promise<ApiKeyRecord | undefined> {
  const row = await db.selectFrom('api_keys').selectAll().where('hash', '=', hash).executeTakeFirst();
  return row && fromRow(row);
}

/** A key by id; with `tenantId`, only when it belongs to that tenant. */
export async function findKey(db: Db, id: string, tenantId?: string): Promise<ApiKeyRecord | undefined> {
  let query = db.selectFrom('api_keys').selectAll().where('id', '=', id);
  if (tenantId !== undefined) query = query.where('tenant_id', '=', tenantId);
  const row = await query.executeTakeFirst();
  return row && fromRow(row);
}

export async function listKeys(
  db: Db,
  tenantId: string,
  options: { limit: number; cursor?: string },
): Promise<Page<ApiKeyRecord>> {
  let query = db.selectFrom('api_keys').selectAll().where('tenant_id', '=', tenantId);
  const after = decodeCursor(options.cursor);
  if (after !== undefined) query = query.where('id', '>', after);
  const rows = await query
    .orderBy('id')
    .limit(options.limit + 1)
    .execute();
  return toPage(rows.map(fromRow), options.limit, (k) => k.id);
}

/** Sets `revoked_at` unless already set; false when it was. */
export async function revokeKey(db: Db, id: string, at: string): Promise<boolean> {
  const result = await db
    .updateTable('api_keys')
    .set({ revoked_at: at })
    .where('id', '=', id)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/**
 * Stores `next` and links the old key to it; `tx` is a transaction (the rotation's event is written on it too). The
 * guard on the update makes two concurrent rotations of one key produce one successor: the loser gets `false` and
 * nothing is written.
 */
export async function rotateKey(tx: Db, old: ApiKeyRecord, next: ApiKeyRecord, oldExpiresAt: string): Promise<boolean> {
  const result = await tx
    .updateTable('api_keys')
    .set({ rotated_to: next.id, expires_at: oldExpiresAt })
    .where('id', '=', old.id)
    .where('rotated_to', 'is', null)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  if (Number(result.numUpdatedRows) !== 1) return false;
  await tx.insertInto('api_keys').values(toRow(next)).execute();
  return true;
}
