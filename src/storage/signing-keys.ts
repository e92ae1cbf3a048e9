import type { Db } from './database.ts';
import type { SigningKeysTable } from './schema.ts';

export type StoredSigningKey = SigningKeysTable;

export async function insertSigningKey(db: Db, key: StoredSigningKey): Promise<void> {
  await db.insertInto('signing_keys').values(key).execute();
}

/** The key to sign with: the newest one not retired. */
export async function currentSigningKey(db: Db): Promise<StoredSigningKey | undefined> {
  return db
    .selectFrom('signing_keys')
    .selectAll()
    .where('retired_at', 'is', null)
    .orderBy('created_at', 'desc')
    .orderBy('kid', 'desc')
    .limit(1)
    .executeTakeFirst();
}

/** Keys that still verify: not retired, or retired after `retiredSince`. */
export async function verifyingKeys(db: Db, retiredSince: string): Promise<StoredSigningKey[]> {
  return db
    .selectFrom('signing_keys')
    .selectAll()
    .where((eb) => eb.or([eb('retired_at', 'is', null), eb('retired_at', '>', retiredSince)]))
    .orderBy('created_at', 'desc')
    .execute();
}

/** Retires every key but `keep`, on the transaction `keep` is stored in. */
export async function replaceSigningKeys(tx: Db, keep: StoredSigningKey, at: string): Promise<void> {
  await tx.updateTable('signing_keys').set({ retired_at: at }).where('retired_at', 'is', null).execute();
  await tx.insertInto('signing_keys').values(keep).execute();
}
