import { parseArgs } from 'node:util';
import { listIntegrations } from '../storage/integrations.ts';
import { answerHelp, type CliIo, groupUsage, jsonOption as json, splitName, table, UsageError } from './io.ts';
import { collectPages, tenantOrFail, withStorage } from './storage.ts';

const actions = {
  list: `usage: interchange integrations list --tenant T

  The tenant's integrations: id, name, connector, the secrets that are set (by their path, such as auth.token or
  tls.client_key; never their values), last change.
  --json: {"data": [...]} of the API's integration objects (secrets only as <name>_set).`,
};

/** `interchange integrations --help`. */
export const integrationsUsage = groupUsage('integrations', actions);

/** `integrations list --tenant T`: what GET /integrations shows, never a secret's value. */
export async function integrationsCommand(args: string[], io: CliIo): Promise<number> {
  if (answerHelp(args, io, integrationsUsage, actions)) return 0;
  const { name: action, rest } = splitName(args);
  if (action !== 'list') {
    throw new UsageError(
      action === undefined ? 'an action is required' : `unknown action integrations ${action}`,
      integrationsUsage,
    );
  }
  const { values } = parseArgs({ args: rest, options: { tenant: { type: 'string' }, json } });
  const listed = await withStorage(io, async (s, _limit, config) => {
    const tenant = await tenantOrFail(s.db, values.tenant);
    const stored = await collectPages(Number.POSITIVE_INFINITY, (limit, cursor) =>
      listIntegrations(s.db, tenant.id, { limit, cursor }),
    );
    // Loaded here: the connectors (and what they load) are needed by this command alone, to show each config as the
    // API does (defaults filled in, secrets as `<name>_set`, URLs without user information).
    const { builtInConnectors, ConnectorRegistry } = await import('../connectors/registry.ts');
    const { integrationView } = await import('../connectors/integration-config.ts');
    const registry = new ConnectorRegistry(builtInConnectors(config));
    return stored.map((integration) => ({
      view: integrationView(registry.get(integration.connector), integration),
      // Every stored secret by its dot path (`token`, `auth.password`, `tls.client_key`), the nested ones included.
      secretPaths: Object.keys(integration.secrets).sort(),
    }));
  });
  if (values.json) io.out(JSON.stringify({ data: listed.map(({ view }) => view) }));
  else {
    const rows = listed.map(({ view, secretPaths }) => [
      view.id,
      view.name,
      view.connector,
      secretPaths.join(','),
      view.updated_at,
    ]);
    io.out(table(['ID', 'NAME', 'CONNECTOR', 'SECRETS_SET', 'UPDATED_AT'], rows));
  }
  return 0;
}
