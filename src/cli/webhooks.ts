import { parseArgs } from 'node:util';
import { cliSource } from '../audit/audit-log.ts';
import { createEgressPolicy } from '../egress/policy.ts';
import { loadMasterKey } from '../secrets/master-key.ts';
import { listWebhooks } from '../storage/webhooks.ts';
import { createWebhook, noSuchWebhook, removeWebhook, subscribableEvents, toWebhookObject } from '../webhooks/endpoints.ts';
import { answerHelp, type CliIo, groupUsage, jsonOption as json, splitName, table, UsageError } from './io.ts';
import { collectPages, tenantOrFail, withStorage } from './storage.ts';

const actions = {
  list: `usage: interchange webhooks list --tenant T

  The tenant's webhook endpoints (never their secrets). --json: {"data": [...]} of the API's webhook objects.`,
  create: `usage: interchange webhooks create --tenant T --url U [--events a,b] [--description D]

  Adds an endpoint for the events listed (${subscribableEvents.join(', ')}; default *, all of them) and prints
  its signing secret, which is shown this once. The URL obeys IX_WEBHOOK_ALLOW_PRIVATE and the egress lists.
  Running servers see the new endpoint within 5 seconds.`,
  delete: `usage: interchange webhooks delete <webhook_id> --tenant T

  Deletes the endpoint and its delivery history; deliveries still pending for it are dropped.`,
};

/** `interchange webhooks --help`. */
export const webhooksUsage = groupUsage('webhooks', actions);

function eventsOf(value: string): string[] {
  const events = value
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  const unknown = events.find((e) => !subscribableEvents.includes(e));
  if (events.length === 0 || unknown !== undefined) {
    throw new UsageError(`--events takes a comma-separated list of ${subscribableEvents.join(', ')}`);
  }
  return events;
}

/** `webhooks list|create|delete`: the same operations as the HTTP API, on DATABASE_URL. */
export async function webhooksCommand(args: string[], io: CliIo): Promise<number> {
  if (answerHelp(args, io, webhooksUsage, actions)) return 0;
  const { name: action, rest } = splitName(args);
  switch (action) {
    case 'list': {
      const { values } = parseArgs({ args: rest, options: { tenant: { type: 'string' }, json } });
      const webhooks = await withStorage(io, async (s) => {
        const tenant = await tenantOrFail(s.db, values.tenant);
        return collectPages(Number.POSITIVE_INFINITY, (limit, cursor) => listWebhooks(s.db, tenant.id, { limit, cursor }));
      });
      if (values.json) io.out(JSON.stringify({ data: webhooks.map(toWebhookObject) }));
      else {
        const rows = webhooks.map((w) => [
          w.id,
          w.url,
          w.events.join(','),
          w.disabled ? 'disabled' : 'enabled',
          w.failing_since ?? '-',
        ]);
        io.out(table(['ID', 'URL', 'EVENTS', 'STATE', 'FAILING_SINCE'], rows));
      }
      return 0;
    }
    case 'create': {
      const { values } = parseArgs({
        args: rest,
        options: {
          tenant: { type: 'string' },
          url: { type: 'string' },
          events: { type: 'string', default: '*' },
          description: { type: 'string' },
          json,
        },
      });
      if (!values.url) throw new UsageError('--url is required');
      const input = { url: values.url, events: eventsOf(values.events), description: values.description };
      const { record, secret } = await withStorage(io, async (s, _limit, config) => {
        const tenant = await tenantOrFail(s.db, values.tenant);
        const policy = createEgressPolicy({
          allowPrivate: config.webhookAllowPrivate,
          allow: config.egressAllow,
          deny: config.egressDeny,
        });
        const at = new Date().toISOString();
        return createWebhook(s.db, loadMasterKey(config, s).key, policy, tenant.id, input, at, cliSource());
      });
      if (values.json) io.out(JSON.stringify({ ...toWebhookObject(record), secret }));
      else io.out(`${record.id}\t${record.url}\t${record.events.join(',')}\nsecret: ${secret}\n(shown once: store it now)`);
      return 0;
    }
    case 'delete': {
      const { values, positionals } = parseArgs({
        args: rest,
        allowPositionals: true,
        options: { tenant: { type: 'string' }, json },
      });
      if (positionals.length !== 1) throw new UsageError(actions.delete.split('\n')[0]);
      const id = positionals[0];
      await withStorage(io, async (s) => {
        const tenant = await tenantOrFail(s.db, values.tenant);
        if (!(await removeWebhook(s.db, tenant.id, id, cliSource()))) throw noSuchWebhook(id);
      });
      io.out(values.json ? JSON.stringify({ id, deleted: true }) : `deleted ${id}`);
      return 0;
    }
    default:
      throw new UsageError(action === undefined ? 'an action is required' : `unknown action webhooks ${action}`, webhooksUsage);
  }
}
