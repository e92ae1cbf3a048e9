import { parseArgs } from 'node:util';
import type { FastifyBaseLogger } from 'fastify';
import type { Config } from '../config/config.ts';
import { ApiError } from '../core/errors.ts';
import type { JobQueue } from '../queue/job-queue.ts';
import { cancelExecution } from '../storage/async-executions.ts';
import type { Storage } from '../storage/database.ts';
import type { Execution } from '../storage/execution-rows.ts';
import { listExecutions } from '../storage/executions.ts';
import { enabledWebhooks } from '../storage/webhooks.ts';
import { emitExecutionEvent } from '../webhooks/webhooks.ts';
import { answerHelp, type CliIo, groupUsage, jsonOption as json, splitName, table, UsageError } from './io.ts';
import { collectPages, tenantOrFail, withStorage } from './storage.ts';

const maxLimit = 1000;
const statuses = ['succeeded', 'failed'];

const actions = {
  list: `usage: interchange executions list --tenant T [--integration I] [--status succeeded|failed] [--limit N]

  The tenant's execute calls, newest first (default 20, at most ${maxLimit}). A running server writes its calls
  in batches: the newest may appear a moment later. --json: {"data": [...]} of the API's execution objects.`,
  cancel: `usage: interchange executions cancel <execution_id> --tenant T

  Cancels a queued async execution, as POST /executions/{id}/cancel does: a running or finished one cannot be
  (exit 1, conflict). Its execution.canceled event goes to the tenant's webhooks. --json: the execution object.`,
};

/** `interchange executions --help`. */
export const executionsUsage = groupUsage('executions', actions);

/** A logger for the queue a command opens: its errors on stderr, nothing else (stdout is the command's answer). */
function queueLog(io: CliIo): FastifyBaseLogger {
  const quiet = () => {};
  const error = (object: unknown, message?: string) =>
    io.err(`error: ${message ?? (typeof object === 'string' ? object : ((object as { err?: Error })?.err?.message ?? ''))}`);
  const log = { level: 'error', fatal: error, error, warn: quiet, info: quiet, debug: quiet, trace: quiet, silent: quiet };
  return { ...log, child: () => log } as unknown as FastifyBaseLogger;
}

/** Sends the canceled execution's event to the tenant's webhooks: stored with its jobs on the queue servers work. */
async function emitCanceled(io: CliIo, storage: Storage, config: Config, tenantId: string, execution: Execution): Promise<void> {
  if ((await enabledWebhooks(storage.db, tenantId)).length === 0) return;
  const settings = { heartbeatSeconds: config.workerHeartbeatSeconds, retryLimit: 10 };
  const queue: JobQueue =
    storage.kind === 'postgres'
      ? new (await import('../queue/pg-boss-queue.ts')).PgBossQueue(config.databaseUrl, storage.db, queueLog(io), settings)
      : new (await import('../queue/embedded-queue.ts')).EmbeddedQueue(storage.db, queueLog(io), settings);
  await queue.start();
  try {
    await emitExecutionEvent(storage.db, queue, tenantId, execution, null, execution.finished_at ?? new Date().toISOString());
  } finally {
    await queue.stop(0);
  }
}

/** `executions cancel <id> --tenant T`: the API's cancel, on DATABASE_URL. */
async function cancelCommand(rest: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseArgs({
    args: rest,
    allowPositionals: true,
    options: { tenant: { type: 'string' }, json },
  });
  if (positionals.length !== 1) throw new UsageError(actions.cancel.split('\n')[0]);
  const id = positionals[0];
  const execution = await withStorage(io, async (s, _limit, config) => {
    const tenant = await tenantOrFail(s.db, values.tenant);
    const { canceled, execution: found } = await cancelExecution(s.db, tenant.id, id, new Date().toISOString());
    if (!found) throw new ApiError('not_found', `No execution ${id}.`);
    if (!canceled) {
      throw new ApiError('conflict', `Execution ${id} is ${found.status}; only a queued execution can be canceled.`, {
        status: found.status,
      });
    }
    await emitCanceled(io, s, config, tenant.id, found);
    return found;
  });
  io.out(values.json ? JSON.stringify(execution) : `canceled ${execution.id}`);
  return 0;
}

/**
 * `executions list --tenant T [--integration I] [--status S] [--limit N]`: the executions log, newest first;
 * `executions cancel <id> --tenant T`.
 */
export async function executionsCommand(args: string[], io: CliIo): Promise<number> {
  if (answerHelp(args, io, executionsUsage, actions)) return 0;
  const { name: action, rest } = splitName(args);
  if (action === 'cancel') return cancelCommand(rest, io);
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
