import { parseArgs } from 'node:util';
import { insertTenant, listTenants, type Tenant, type TenantType, tenantTypes } from '../storage/tenants.ts';
import { type CliIo, UsageError } from './io.ts';
import { withStorage } from './storage.ts';

const tenantIdPattern = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

function show(io: CliIo, json: boolean, tenant: Tenant): void {
  io.out(json ? JSON.stringify(tenant) : `${tenant.id}\t${tenant.type}\t${tenant.name}`);
}

/** `tenants create <tenant_id> [--name N] [--type T]` and `tenants list`. */
export async function tenantsCommand(args: string[], io: CliIo): Promise<number> {
  const [action, ...rest] = args;
  if (action === 'create') {
    const { values, positionals } = parseArgs({
      args: rest,
      allowPositionals: true,
      options: {
        name: { type: 'string' },
        type: { type: 'string', default: 'production' },
        json: { type: 'boolean', default: false },
      },
    });
    const [id, extra] = positionals;
    if (!id || extra !== undefined) throw new UsageError('usage: interchange tenants create <tenant_id> [--name N] [--type T]');
    if (!tenantIdPattern.test(id)) {
      throw new UsageError('tenant_id: 1–64 characters of A-Z a-z 0-9 . _ -, starting with a letter or digit');
    }
    if (!tenantTypes.includes(values.type as TenantType)) throw new UsageError(`--type must be one of ${tenantTypes.join(', ')}`);
    const tenant = await withStorage(io, (s) =>
      insertTenant(s.db, { id, name: values.name ?? id, type: values.type as TenantType }),
    );
    if (!tenant) {
      io.err(`tenant ${id} exists already`);
      return 1;
    }
    show(io, values.json, tenant);
    return 0;
  }
  if (action === 'list') {
    const { values } = parseArgs({ args: rest, options: { json: { type: 'boolean', default: false } } });
    const tenants = await withStorage(io, (s) => listTenants(s.db));
    if (values.json) io.out(JSON.stringify({ data: tenants }));
    else for (const t of tenants) show(io, false, t);
    return 0;
  }
  throw new UsageError('usage: interchange tenants create|list');
}
