import { sql } from 'kysely';
import type { Db } from './database.ts';

/** Usage gathered in memory for one key since the last flush. */
export interface PendingUsage {
  requests: number;
  lastUsedAt: string;
  lastUsedIp: string;
  /** date (YYYY-MM-DD) → counts of that day */
  days: Map<string, { requests: number; errors: number }>;
}

/** Adds a batch of usage to storage in one transaction: all of it lands, or none. */
export async function writeUsage(db: Db, batch: ReadonlyMap<string, PendingUsage>): Promise<void> {
  if (batch.size === 0) return;
  await db.transaction().execute(async (tx) => {
    // Always in key order: two instances flushing the same keys must lock their rows in the same order,
    // or PostgreSQL aborts one of them as a deadlock.
    for (const [keyId, usage] of [...batch].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
      await tx
        .updateTable('api_keys')
        .set({
          request_count: sql`request_count + ${usage.requests}`,
          // Another instance may have flushed a later use already; keep the latest.
          last_used_at: sql`CASE WHEN last_used_at IS NULL OR last_used_at < ${usage.lastUsedAt} THEN ${usage.lastUsedAt} ELSE last_used_at END`,
          last_used_ip: sql`CASE WHEN last_used_at IS NULL OR last_used_at < ${usage.lastUsedAt} THEN ${usage.lastUsedIp} ELSE last_used_ip END`,
        })
        .where('id', '=', keyId)
        .execute();
      for (const [date, counts] of usage.days) {
        await tx
          .insertInto('api_key_usage_daily')
          .values({ key_id: keyId, date, requests: counts.requests, errors: counts.errors })
          .onConflict((c) =>
            c.columns(['key_id', 'date']).doUpdateSet({
              requests: sql`api_key_usage_daily.requests + ${counts.requests}`,
              errors: sql`api_key_usage_daily.errors + ${counts.errors}`,
            }),
          )
          .execute();
      }
    }
  });
}

export async function usageSince(
  db: Db,
  keyId: string,
  fromDate: string,
): Promise<Array<{ date: string; requests: number; errors: number }>> {
  const rows = await db
    .selectFrom('api_key_usage_daily')
    .select(['date', 'requests', 'errors'])
    .where('key_id', '=', keyId)
    .where('date', '>=', fromDate)
    .orderBy('date')
    .execute();
  return rows.map((r) => ({ date: r.date, requests: Number(r.requests), errors: Number(r.errors) }));
}
