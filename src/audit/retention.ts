import type { FastifyBaseLogger } from 'fastify';
import { pruneAuditEvents } from '../storage/audit-events.ts';
import type { Db } from '../storage/database.ts';

/** How often the sweep runs. */
export const auditSweepEveryMs = 10 * 60 * 1000;

/** Deletes the events older than `retentionDays` before `now`: the only deletion the log knows (docs/audit.md#retention). */
export function sweepAuditLog(db: Db, retentionDays: number, now: Date): Promise<number> {
  return pruneAuditEvents(db, new Date(now.getTime() - retentionDays * 86_400_000).toISOString());
}

/** Sweeps the log every 10 minutes. */
export function startAuditRetention(db: Db, retentionDays: number, log: FastifyBaseLogger): NodeJS.Timeout {
  const sweep = () =>
    void sweepAuditLog(db, retentionDays, new Date()).catch((e) => log.warn({ err: e }, 'audit log sweep failed'));
  return setInterval(sweep, auditSweepEveryMs).unref();
}
