import { PostgresAdapter, type RawBuilder, sql } from 'kysely';
import type { Db } from './database.ts';

/**
 * The database's time now, plus `offsetMs`, as the ISO text the tables keep (`2026-11-28T21:33:08.123Z`), for what
 * instances must judge alike: a lease taken by one instance and read by another is compared against one clock, the
 * database's, not against each instance's own (a clock minutes ahead would otherwise think a live claim abandoned).
 */
export function dbTime(db: Db, offsetMs = 0): RawBuilder<string> {
  if (db.getExecutor().adapter instanceof PostgresAdapter) {
    return sql<string>`to_char((now() + ${offsetMs}::double precision * interval '1 millisecond') at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
  }
  return sql<string>`strftime('%Y-%m-%dT%H:%M:%fZ', 'now', ${`${offsetMs / 1000} seconds`})`;
}
