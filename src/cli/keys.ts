import { parseArgs } from 'node:util';
import { cliSource } from '../audit/audit-log.ts';
import { announceKeyChange } from '../auth/key-events.ts';
import { toKeyObject } from '../auth/key-object.ts';
import { createApiKey, importLegacyKey, maxOverlapSeconds, revokeApiKey, rotateApiKey } from '../auth/key-service.ts';
import { ApiError } from '../core/errors.ts';
import { type ApiKeyRecord, findKey, listKeys } from '../storage/api-keys.ts';
import { answerHelp, type CliIo, groupUsage, jsonOption as json, splitName, table, UsageError } from './io.ts';
import { collectPages, tenantOrFail, withStorage } from './storage.ts';

const actions = {
  create: `usage: interchange keys create --tenant T --scopes a,b [--name N] [--expires-at ISO] [--rate-limit N]

  Creates an API key; prints it with its secret, which is shown this once.`,
  import: `usage: interchange keys import --tenant T --key ix_prod_… --scopes a,b [--name N]

  Registers a legacy key you already hold (ix_prod_…, ix_dev_…); only its hash is stored.`,
  list: `usage: interchange keys list --tenant T

  The tenant's keys, with a STATE column: active, expiring (works, but stops within 7 days or is in its
  rotation overlap), expired, revoked, rotated (replaced by ROTATED_TO and its overlap has ended).`,
  revoke: `usage: interchange keys revoke <key_id>

  Revokes a key: running servers refuse it within IX_KEY_CACHE_MS (at once with REDIS_URL).`,
  rotate: `usage: interchange keys rotate <key_id> [--overlap-seconds N]

  Issues a successor with the same name, scopes, limit and expiry; the old key works for the overlap
  (default 3600 s, at most ${maxOverlapSeconds}), then answers expired_credentials.`,
};

/** `interchange keys --help`. */
export const keysUsage = groupUsage('keys', actions);

/** Where a key stands; `active` and `expiring` keys are accepted, the others refused. */
export type KeyState = 'active' | 'expiring' | 'expired' | 'revoked' | 'rotated';

// The longest rotation overlap: a key in its overlap always shows `expiring`.
const expiringWithinMs = maxOverlapSeconds * 1000;

/**
 * The state `keys list` shows. Revoked wins; a key past its expiry is `rotated` when it has a successor (its overlap
 * ended) and `expired` otherwise; a key still accepted is `expiring` when it has a successor (it is in its overlap) or
 * stops within 7 days, else `active`.
 */
export function keyState(key: Pick<ApiKeyRecord, 'revoked_at' | 'rotated_to' | 'expires_at'>, now = Date.now()): KeyState {
  if (key.revoked_at) return 'revoked';
  const end = key.expires_at === null ? Number.POSITIVE_INFINITY : Date.parse(key.expires_at);
  if (end <= now) return key.rotated_to ? 'rotated' : 'expired';
  return key.rotated_to || end - now <= expiringWithinMs ? 'expiring' : 'active';
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

const masked = (key: ApiKeyRecord) => `${key.start}…${key.last4}`;

/** One key: its object (with `key` when there is a secret to give) or one line; `note` follows the line. */
function show(io: CliIo, asJson: boolean, key: ApiKeyRecord, secret?: string, note?: string): void {
  const object = secret === undefined ? toKeyObject(key) : { ...toKeyObject(key), key: secret };
  if (asJson) io.out(JSON.stringify(object));
  else {
    io.out(`${key.id}\t${masked(key)}\t${key.scopes.join(',')}${key.revoked_at ? '\trevoked' : ''}`);
    if (note !== undefined) io.out(note);
  }
}

const shownOnce = (secret: string) => `key: ${secret}\n(shown once: store it now)`;

/** `keys create|import|list|revoke|rotate`, the same operations as the HTTP API, on DATABASE_URL. */
export async function keysCommand(args: string[], io: CliIo): Promise<number> {
  if (answerHelp(args, io, keysUsage, actions)) return 0;
  const { name: action, rest } = splitName(args);
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
        createApiKey(s.db, await tenantOrFail(s.db, values.tenant), input, limit, cliSource()),
      );
      show(io, values.json, record, key, shownOnce(key));
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
        importLegacyKey(s.db, await tenantOrFail(s.db, values.tenant), secret, input, limit, cliSource()),
      );
      // The caller supplied the secret: it is neither new nor shown here again, and it keeps working as it did.
      show(io, values.json, record, secret, `imported the key you supplied (${masked(record)}); only its hash is stored`);
      return 0;
    }
    case 'list': {
      const { values } = parseArgs({ args: rest, options: { tenant: { type: 'string' }, json } });
      const keys = await withStorage(io, async (s) => {
        const tenant = await tenantOrFail(s.db, values.tenant);
        return collectPages(Number.POSITIVE_INFINITY, (limit, cursor) => listKeys(s.db, tenant.id, { limit, cursor }));
      });
      const now = Date.now();
      // `state` is the CLI's addition to the API's key object: what the STATE column shows.
      if (values.json) io.out(JSON.stringify({ data: keys.map((k) => ({ ...toKeyObject(k), state: keyState(k, now) })) }));
      else {
        const header = ['ID', 'NAME', 'STATE', 'KEY', 'SCOPES', 'EXPIRES_AT', 'ROTATED_TO'];
        const rows = keys.map((k) => [
          k.id,
          k.name,
          keyState(k, now),
          masked(k),
          k.scopes.join(','),
          k.expires_at ?? '-',
          k.rotated_to ?? '-',
        ]);
        io.out(table(header, rows));
      }
      return 0;
    }
    case 'revoke': {
      const { values, positionals } = parseArgs({ args: rest, allowPositionals: true, options: { json } });
      if (positionals.length !== 1) throw new UsageError(actions.revoke.split('\n')[0]);
      const key = await withStorage(io, async (s, _limit, config) => {
        const revoked = await revokeApiKey(s.db, positionals[0], cliSource());
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
      if (positionals.length !== 1) throw new UsageError(actions.rotate.split('\n')[0]);
      const overlap = wholeNumber('--overlap-seconds', values['overlap-seconds'], maxOverlapSeconds) ?? 3600;
      const { record, key } = await withStorage(io, async (s, _limit, config) => {
        const old = await findKey(s.db, positionals[0]);
        if (!old) throw new ApiError('not_found', `No API key ${positionals[0]}.`);
        const tenant = await tenantOrFail(s.db, old.tenant_id);
        const rotated = await rotateApiKey(s.db, old, tenant, overlap, cliSource());
        await announceKeyChange(config.redisUrl, config.redisPrefix, old.hash);
        return rotated;
      });
      show(io, values.json, record, key, shownOnce(key));
      return 0;
    }
    default:
      throw new UsageError(action === undefined ? 'an action is required' : `unknown action keys ${action}`, keysUsage);
  }
}
