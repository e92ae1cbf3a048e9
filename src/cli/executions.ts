import { parseArgs } from 'node:util';
import { listExecutions } from '../storage/executions.ts';
import { answerHelp, type CliIo, groupUsage, jsonOption as json, table, UsageError } from './io.ts';
import { collectPages, tenantOrFail, withStorage } from './storage.ts';

const maxLimit = 1000;
const statuses = ['succeeded', 'failed'];

const actions = {
  list: `usage: interchange executions list --tenant T [--integration I] [--status succeeded|failed] [--limit N]

  The tenant's execute calls, newest first (default 20, at most ${maxLimit}). A running server writes its calls
  in batches: the newest may appear a moment later. --json: {"data": [...]} of the API's execution objects.`,
};

/** `interchange executions --help`. */
export const executionsUsage = groupUsage('executions', actions);

/** `executions list --tenant T [--integration I] [--status S] [--limit N]`: the executions log, newest first. */
export async function executionsCommand(args: string[], io: CliIo): Promise<number> {
  if (answerHelp(args, io, executionsUsage, actions)) return 0;
  const [action, ...rest] = args;
  if (action !== 'list') {
    throw new UsageError(action === undefined ? 'an action is required' : `unknown action executions ${action}`, executionsUsage);
  }
  const { values } = parseArgs({
    args: rest,
    options: {
      tenant: { type: 'string' },
      integration: { type: 'string' },
      status: { type: 'string' },
      limit: { type: 'string', default: '20' },
      json,
    },
  });
  if (values.status !== undefined && !statuses.includes(values.status)) {
    throw new UsageError(`--status must be one of ${statuses.join(', ')}`);
  }
  if (!/^\d+$/.test(values.limit) || Number(values.limit) < 1 || Number(values.limit) > maxLimit) {
    throw new UsageError(`--limit must be a whole number from 1 to ${maxLimit}`);
  }
  const filters = { integration_id: values.integration, status: values.status };
  const executions = await withStorage(io, async (s) => {
    const tenant = await tenantOrFail(s.db, values.tenant);
    return collectPages(Number(values.limit), (limit, cursor) => listExecutions(s.db, tenant.id, { ...filters, limit, cursor }));
  });
  if (values.json) io.out(JSON.stringify({ data: executions }));
  else {
    const rows = executions.map((e) => [
      e.id,
      e.started_at,
      e.integration_id,
      e.operation,
      e.status,
      String(e.http_status),
      String(e.duration_ms),
      e.error_code ?? '-',
    ]);
    io.out(table(['ID', 'STARTED_AT', 'INTEGRATION', 'OPERATION', 'STATUS', 'HTTP', 'MS', 'ERROR'], rows));
  }
  return 0;
}
