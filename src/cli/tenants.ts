import { parseArgs } from 'node:util';
import { cliSource, inTransaction, recordChange } from '../audit/audit-log.ts';
import { ApiError } from '../core/errors.ts';
import { insertTenant, listTenants, type Tenant, type TenantType, tenantTypes } from '../storage/tenants.ts';
import { answerHelp, type CliIo, groupUsage, jsonOption as json, splitName, table, UsageError } from './io.ts';
import { withStorage } from './storage.ts';

const tenantIdPattern = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

const actions = {
  create: `usage: interchange tenants create <tenant_id> [--name N] [--type ${tenantTypes.join('|')}]

  Creates a tenant (type production unless told; the name defaults to the id).`,
  list: `usage: interchange tenants list

  Every tenant, as a table: ID, TYPE, NAME. --json: {"data": [...]} of tenants.`,
};

/** `interchange tenants --help`. */
export const tenantsUsage = groupUsage('tenants', actions);

function show(io: CliIo, asJson: boolean, tenant: Tenant): void {
  io.out(asJson ? JSON.stringify(tenant) : `${tenant.id}\t${tenant.type}\t${tenant.name}`);
}

/** `tenants create <tenant_id> [--name N] [--type T]` and `tenants list`. */
export async function tenantsCommand(args: string[], io: CliIo): Promise<number> {
  if (answerHelp(args, io, tenantsUsage, actions)) return 0;
  const { name: action, rest } = splitName(args);
  if (action === 'create') {
    const { values, positionals } = parseArgs({
      args: rest,
      allowPositionals: true,
      options: { name: { type: 'string' }, type: { type: 'string', default: 'production' }, json },
    });
    const [id, extra] = positionals;
    if (!id || extra !== undefined) throw new UsageError(actions.create.split('\n')[0]);
    if (!tenantIdPattern.test(id)) {
      throw new UsageError('tenant_id: 1–64 characters of A-Z a-z 0-9 . _ -, starting with a letter or digit');
    }
    if (!tenantTypes.includes(values.type as TenantType)) throw new UsageError(`--type must be one of ${tenantTypes.join(', ')}`);
    const source = cliSource();
    const tenant = await withStorage(io, (s) =>
      inTransaction(s.db, async (tx) => {
        const created = await insertTenant(tx, { id, name: values.name ?? id, type: values.type as TenantType });
        if (created) {
          await recordChange(tx, id, source, {
            action: 'tenant.created',
            target: { type: 'tenant', id },
            changes: ['name', 'type'],
          });
        }
        return created;
      }),
    );
    if (!tenant) throw new ApiError('conflict', `tenant ${id} exists already`);
    show(io, values.json, tenant);
    return 0;
  }
  if (action === 'list') {
    const { values } = parseArgs({ args: rest, options: { json } });
    const tenants = await withStorage(io, (s) => listTenants(s.db));
    if (values.json) io.out(JSON.stringify({ data: tenants }));
    else {
      const rows = tenants.map((t) => [t.id, t.type, t.name]);
      io.out(table(['ID', 'TYPE', 'NAME'], rows));
    }
    return 0;
  }
  throw new UsageError(action === undefined ? 'an action is required' : `unknown action tenants ${action}`, tenantsUsage);
}
