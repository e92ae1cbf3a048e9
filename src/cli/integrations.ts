import { parseArgs } from 'node:util';
import { listIntegrations } from '../storage/integrations.ts';
import { answerHelp, type CliIo, groupUsage, jsonOption as json, table, UsageError } from './io.ts';
import { collectPages, tenantOrFail, withStorage } from './storage.ts';

const actions = {
  list: `usage: interchange integrations list --tenant T

  The tenant's integrations: id, name, connector, the secrets that are set (names only, never values), last change.
  --json: {"data": [...]} of the API's integration objects (secrets only as <name>_set).`,
};

/** `interchange integrations --help`. */
export const integrationsUsage = groupUsage('integrations', actions);

/** `integrations list --tenant T`: what GET /integrations shows, never a secret's value. */
export async function integrationsCommand(args: string[], io: CliIo): Promise<number> {
  if (answerHelp(args, io, integrationsUsage, actions)) return 0;
  const [action, ...rest] = args;
  if (action !== 'list') {
    throw new UsageError(
      action === undefined ? 'an action is required' : `unknown action integrations ${action}`,
      integrationsUsage,
    );
  }
  const { values } = parseArgs({ args: rest, options: { tenant: { type: 'string' }, json } });
  const views = await withStorage(io, async (s, _limit, config) => {
    const tenant = await tenantOrFail(s.db, values.tenant);
    const stored = await collectPages(Number.POSITIVE_INFINITY, (limit, cursor) =>
      listIntegrations(s.db, tenant.id, { limit, cursor }),
    );
    // Loaded here: the connectors (and what they load) are needed by this command alone, to show each config as the
    // API does (defaults filled in, secrets as `<name>_set`, URLs without user information).
    const { builtInConnectors, ConnectorRegistry } = await import('../connectors/registry.ts');
    const { integrationView } = await import('../integrations/config.ts');
    const registry = new ConnectorRegistry(builtInConnectors(config));
    return stored.map((integration) => integrationView(registry.get(integration.connector), integration));
  });
  if (values.json) io.out(JSON.stringify({ data: views }));
  else {
    const rows = views.map((view) => {
      const secrets = Object.entries(view.config)
        .filter(([field, value]) => field.endsWith('_set') && value === true)
        .map(([field]) => field.slice(0, -'_set'.length));
      return [view.id, view.name, view.connector, secrets.join(',') || '-', view.updated_at];
    });
    io.out(table(['ID', 'NAME', 'CONNECTOR', 'SECRETS_SET', 'UPDATED_AT'], rows));
  }
  return 0;
}
