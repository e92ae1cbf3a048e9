import type { Db } from './database.ts';
import { dbTime } from './db-clock.ts';

export const idempotencyTtlMs = 24 * 60 * 60 * 1000;

/** Expired entries of every key are purged at most this often per storage, so the table holds about a day of keys. */
const purgeIntervalMs = 60 * 1000;
const lastPurge = new WeakMap<Db, number>();

/** Deletes every expired entry (each one would otherwise stay until its own key came back), at most once a minute. */
async function purgeExpired(db: Db): Promise<void> {
  const now = performance.now();
  if (now - (lastPurge.get(db) ?? Number.NEGATIVE_INFINITY) < purgeIntervalMs) return;
  lastPurge.set(db, now);
  await db.deleteFrom('idempotency_keys').where('expires_at', '<=', dbTime(db)).execute();
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
 * a request that died with its process, and is free again. Every time here is the database's (dbTime): instances
 * whose clocks differ judge a claim alike.
 */
export async function claimIdempotencyKey(
  db: Db,
  tenantId: string,
  key: string,
  fingerprint: string,
  abandonAfterMs: number,
  token: string,
): Promise<Claim> {
  await purgeExpired(db);
  // Expired or abandoned entries give the key back.
  await db
    .deleteFrom('idempotency_keys')
    .where('tenant_id', '=', tenantId)
    .where('key', '=', key)
    .where((eb) =>
      eb.or([
        eb('expires_at', '<=', dbTime(db)),
        eb.and([eb('state', '=', 'pending'), eb('created_at', '<=', dbTime(db, -abandonAfterMs))]),
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
      created_at: dbTime(db),
      expires_at: dbTime(db, idempotencyTtlMs),
      claim_token: token,
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
  if (!existing) return claimIdempotencyKey(db, tenantId, key, fingerprint, abandonAfterMs, token);
  if (existing.fingerprint !== fingerprint) return { kind: 'mismatch' };
  if (existing.state !== 'done' || existing.response === null) return { kind: 'in_progress' };
  return { kind: 'replay', status: Number(existing.http_status), response: existing.response };
}

/** Keeps the answer of a claimed key for replay. */
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

/**
 * Gives a claimed key back (the request failed before it ran): a retry may use it. Only the claim of `token`: a
 * request that does not know whether its claim was written (storage failed meanwhile) can never give back another's.
 */
export async function releaseIdempotencyKey(db: Db, tenantId: string, key: string, token: string): Promise<void> {
  await db
    .deleteFrom('idempotency_keys')
    .where('tenant_id', '=', tenantId)
    .where('key', '=', key)
    .where('state', '=', 'pending')
    .where('claim_token', '=', token)
    .execute();
}
