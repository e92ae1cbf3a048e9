import type { Db } from './database.ts';

export const idempotencyTtlMs = 24 * 60 * 60 * 1000;

/** Expired entries of every key are purged at most this often per storage, so the table holds about a day of keys. */
const purgeIntervalMs = 60 * 1000;
const lastPurge = new WeakMap<Db, number>();

/** Deletes every expired entry (each one would otherwise stay until its own key came back), at most once a minute. */
async function purgeExpired(db: Db, now: number): Promise<void> {
  if (now - (lastPurge.get(db) ?? Number.NEGATIVE_INFINITY) < purgeIntervalMs) return;
  lastPurge.set(db, now);
  await db.deleteFrom('idempotency_keys').where('expires_at', '<=', new Date(now).toISOString()).execute();
}

export type Claim =
  | { kind: 'claimed' }
  | { kind: 'replay'; status: number; response: string }
  | { kind: 'in_progress' }
  | { kind: 'mismatch' };

/**
 * Claims `key` for a request with `fingerprint`. The insert is the lock: of two concurrent
 * requests with one key exactly one gets `claimed`, so only one reaches the upstream. A pending
 * claim older than `abandonAfterMs` (the execute deadline: no live request runs longer) belonged to
 * a request that died with its process, and is free again.
 */
export async function claimIdempotencyKey(
  db: Db,
  tenantId: string,
  key: string,
  fingerprint: string,
  abandonAfterMs: number,
): Promise<Claim> {
  const now = Date.now();
  await purgeExpired(db, now);
  // Expired or abandoned entries give the key back.
  await db
    .deleteFrom('idempotency_keys')
    .where('tenant_id', '=', tenantId)
    .where('key', '=', key)
    .where((eb) =>
      eb.or([
        eb('expires_at', '<=', new Date(now).toISOString()),
        eb.and([eb('state', '=', 'pending'), eb('created_at', '<=', new Date(now - abandonAfterMs).toISOString())]),
      ]),
    )
    .execute();
  const inserted = await db
    .insertInto('idempotency_keys')
    .values({
      tenant_id: tenantId,
      key,
      fingerprint,
      state: 'pending',
      http_status: null,
      response: null,
      created_at: new Date(now).toISOString(),
      expires_at: new Date(now + idempotencyTtlMs).toISOString(),
    })
    .onConflict((c) => c.columns(['tenant_id', 'key']).doNothing())
    .executeTakeFirst();
  if (Number(inserted.numInsertedOrUpdatedRows ?? 0) === 1) return { kind: 'claimed' };

  const existing = await db
    .selectFrom('idempotency_keys')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('key', '=', key)
    .executeTakeFirst();
  if (!existing) return claimIdempotencyKey(db, tenantId, key, fingerprint, abandonAfterMs);
  if (existing.fingerprint !== fingerprint) return { kind: 'mismatch' };
  if (existing.state !== 'done' || existing.response === null) return { kind: 'in_progress' };
  return { kind: 'replay', status: Number(existing.http_status), response: existing.response };
}

export async function completeIdempotencyKey(
  db: Db,
  tenantId: string,
  key: string,
  status: number,
  response: string,
): Promise<void> {
  await db
    .updateTable('idempotency_keys')
    .set({ state: 'done', http_status: status, response })
    .where('tenant_id', '=', tenantId)
    .where('key', '=', key)
    .execute();
}

/** Gives a claimed key back (the request failed before it ran): a retry may use it. */
export async function releaseIdempotencyKey(db: Db, tenantId: string, key: string): Promise<void> {
  await db
    .deleteFrom('idempotency_keys')
    .where('tenant_id', '=', tenantId)
    .where('key', '=', key)
    .where('state', '=', 'pending')
    .execute();
}
