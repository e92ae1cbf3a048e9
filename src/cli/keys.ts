import { parseArgs } from 'node:util';
import { announceKeyChange } from '../auth/key-events.ts';
import { toKeyObject } from '../auth/key-object.ts';
import { createApiKey, importLegacyKey, maxOverlapSeconds, revokeApiKey, rotateApiKey } from '../auth/key-service.ts';
import { ApiError } from '../errors.ts';
import { type ApiKeyRecord, findKey, listKeys } from '../storage/api-keys.ts';
import type { Db } from '../storage/database.ts';
import { findTenant, type Tenant } from '../storage/tenants.ts';
import { type CliIo, UsageError } from './io.ts';
import { withStorage } from './storage.ts';

const json = { type: 'boolean', default: false } as const;

async function tenantOrFail(db: Db, id: string | undefined): Promise<Tenant> {
  if (!id) throw new UsageError('--tenant is required');
  const tenant = await findTenant(db, id);
  if (!tenant) throw new ApiError('not_found', `No tenant ${id}.`);
  return tenant;
}

function scopesOf(value: string | undefined): string[] {
  if (!value) throw new UsageError('--scopes is required (comma-separated, e.g. integrations.execute,entities.read)');
  return value
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
}

function wholeNumber(name: string, value: string | undefined, max: number): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value) || Number(value) > max) throw new UsageError(`${name} must be a whole number from 0 to ${max}`);
  return Number(value);
}

// RFC 3339 only: Date.parse would also take "Jan 1 2030", read in the local time zone.
const rfc3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/i;

function timestamp(name: string, value: string | undefined): string | undefined {
  if (value !== undefined && !rfc3339.test(value)) {
    throw new UsageError(`${name} must be an RFC 3339 timestamp, e.g. 2030-01-31T00:00:00Z`);
  }
  return value;
}

function show(io: CliIo, asJson: boolean, key: ApiKeyRecord, secret?: string): void {
  const object = secret === undefined ? toKeyObject(key) : { ...toKeyObject(key), key: secret };
  if (asJson) io.out(JSON.stringify(object));
  else {
    io.out(`${key.id}\t${key.start}…${key.last4}\t${key.scopes.join(',')}${key.revoked_at ? '\trevoked' : ''}`);
    if (secret !== undefined) io.out(`key: ${secret}\n(shown once: store it now)`);
  }
}

/** `keys create|import|list|revoke|rotate`, the same operations as the HTTP API, on DATABASE_URL. */
export async function keysCommand(args: string[], io: CliIo): Promise<number> {
  const [action, ...rest] = args;
  switch (action) {
    case 'create': {
      const { values } = parseArgs({
        args: rest,
        options: {
          tenant: { type: 'string' },
          scopes: { type: 'string' },
          name: { type: 'string' },
          'expires-at': { type: 'string' },
          'rate-limit': { type: 'string' },
          json,
        },
      });
      const input = {
        name: values.name,
        scopes: scopesOf(values.scopes),
        expires_at: timestamp('--expires-at', values['expires-at']),
        rate_limit_per_minute: wholeNumber('--rate-limit', values['rate-limit'], 1_000_000),
      };
      const { record, key } = await withStorage(io, async (s, limit) =>
        createApiKey(s.db, await tenantOrFail(s.db, values.tenant), input, limit),
      );
      show(io, values.json, record, key);
      return 0;
    }
    case 'import': {
      const { values } = parseArgs({
        args: rest,
        options: {
          tenant: { type: 'string' },
          key: { type: 'string' },
          scopes: { type: 'string' },
          name: { type: 'string' },
          json,
        },
      });
      if (!values.key) throw new UsageError('--key is required');
      const secret = values.key;
      const input = { name: values.name, scopes: scopesOf(values.scopes) };
      const { record } = await withStorage(io, async (s, limit) =>
        importLegacyKey(s.db, await tenantOrFail(s.db, values.tenant), secret, input, limit),
      );
      show(io, values.json, record, secret);
      return 0;
    }
    case 'list': {
      const { values } = parseArgs({ args: rest, options: { tenant: { type: 'string' }, json } });
      const keys = await withStorage(io, async (s) => {
        const tenant = await tenantOrFail(s.db, values.tenant);
        const all: ApiKeyRecord[] = [];
        let cursor: string | undefined;
        do {
          const page = await listKeys(s.db, tenant.id, { limit: 100, cursor });
          all.push(...page.items);
          cursor = page.nextCursor ?? undefined;
        } while (cursor);
        return all;
      });
      if (values.json) io.out(JSON.stringify({ data: keys.map((k) => toKeyObject(k)) }));
      else for (const k of keys) show(io, false, k);
      return 0;
    }
    case 'revoke': {
      const { values, positionals } = parseArgs({ args: rest, allowPositionals: true, options: { json } });
      if (positionals.length !== 1) throw new UsageError('usage: interchange keys revoke <key_id>');
      const key = await withStorage(io, async (s, _limit, config) => {
        const revoked = await revokeApiKey(s.db, positionals[0]);
        // Running instances drop it at once (with REDIS_URL); otherwise within their key cache TTL.
        await announceKeyChange(config.redisUrl, config.redisPrefix, revoked.hash);
        return revoked;
      });
      show(io, values.json, key);
      return 0;
    }
    case 'rotate': {
      const { values, positionals } = parseArgs({
        args: rest,
        allowPositionals: true,
        options: { 'overlap-seconds': { type: 'string' }, json },
      });
      if (positionals.length !== 1) throw new UsageError('usage: interchange keys rotate <key_id> [--overlap-seconds N]');
      const overlap = wholeNumber('--overlap-seconds', values['overlap-seconds'], maxOverlapSeconds) ?? 3600;
      const { record, key } = await withStorage(io, async (s, _limit, config) => {
        const old = await findKey(s.db, positionals[0]);
        if (!old) throw new ApiError('not_found', `No API key ${positionals[0]}.`);
        const tenant = await tenantOrFail(s.db, old.tenant_id);
        const rotated = await rotateApiKey(s.db, old, tenant, overlap);
        await announceKeyChange(config.redisUrl, config.redisPrefix, old.hash);
        return rotated;
      });
      show(io, values.json, record, key);
      return 0;
    }
    default:
      throw new UsageError('usage: interchange keys create|import|list|revoke|rotate');
  }
}
