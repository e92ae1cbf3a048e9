import { parseArgs } from 'node:util';
import { auditActions } from '../audit/audit-log.ts';
import { listAuditEvents } from '../storage/audit-events.ts';
import { answerHelp, type CliIo, groupUsage, jsonOption as json, splitName, table, UsageError } from './io.ts';
import { collectPages, tenantOrFail, withStorage } from './storage.ts';

const maxLimit = 1000;

const actions = {
  list: `usage: interchange audit list --tenant T [--action A] [--actor ID] [--target ID] [--since TIME] [--until TIME] [--limit N]

  The tenant's audit log, newest first (default 20, at most ${maxLimit}): who changed what, from where, and which
  fields; never a secret's value. TIME is RFC 3339 (2026-11-29T09:00:00Z); --since includes, --until excludes.
  --json: {"data": [...]} of the API's audit events.`,
};

/** `interchange audit --help`. */
export const auditUsage = groupUsage('audit', actions);

function time(option: string, value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  if (!/^\d{4}-\d\d-\d\dT/.test(value) || Number.isNaN(Date.parse(value))) {
    throw new UsageError(`--${option} must be an RFC 3339 time, such as 2026-11-29T09:00:00Z`);
  }
  return new Date(value).toISOString();
}

/** `audit list --tenant T [filters]`: what GET /audit-events answers, on DATABASE_URL. */
export async function auditCommand(args: string[], io: CliIo): Promise<number> {
  if (answerHelp(args, io, auditUsage, actions)) return 0;
  const { name: action, rest } = splitName(args);
  if (action !== 'list') {
    throw new UsageError(action === undefined ? 'an action is required' : `unknown action audit ${action}`, auditUsage);
  }
  const { values } = parseArgs({
    args: rest,
    options: {
      tenant: { type: 'string' },
      action: { type: 'string' },
      actor: { type: 'string' },
      target: { type: 'string' },
      since: { type: 'string' },
      until: { type: 'string' },
      limit: { type: 'string', default: '20' },
      json,
    },
  });
  if (values.action !== undefined && !(auditActions as readonly string[]).includes(values.action)) {
    throw new UsageError(`--action must be one of ${auditActions.join(', ')}`);
  }
  if (!/^\d+$/.test(values.limit) || Number(values.limit) < 1 || Number(values.limit) > maxLimit) {
    throw new UsageError(`--limit must be a whole number from 1 to ${maxLimit}`);
  }
  const since = time('since', values.since);
  const until = time('until', values.until);
  if (since !== undefined && until !== undefined && since > until) throw new UsageError('--until must not be before --since');
  const filters = { action: values.action, actor_id: values.actor, target_id: values.target, since, until };
  const events = await withStorage(io, async (s) => {
    const tenant = await tenantOrFail(s.db, values.tenant);
    return collectPages(Number(values.limit), (limit, cursor) => listAuditEvents(s.db, tenant.id, { ...filters, limit, cursor }));
  });
  if (values.json) io.out(JSON.stringify({ data: events }));
  else {
    const rows = events.map((e) => [
      e.at,
      e.action,
      `${e.actor.type}:${e.actor.name ?? e.actor.id}`,
      `${e.target.type}:${e.target.id}`,
      e.changes.join(',') || '-',
      e.ip ?? '-',
    ]);
    io.out(table(['AT', 'ACTION', 'ACTOR', 'TARGET', 'CHANGES', 'IP'], rows));
  }
  return 0;
}
