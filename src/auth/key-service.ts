import { type AuditSource, inTransaction, recordChange } from '../audit/audit-log.ts';
import { ApiError, type ValidationIssue, validationFailed } from '../core/errors.ts';
import { newId, nowIso } from '../core/ids.ts';
import { type ApiKeyRecord, findKey, insertKey, revokeKey, rotateKey } from '../storage/api-keys.ts';
import type { Db } from '../storage/database.ts';
import type { Tenant } from '../storage/tenants.ts';
import { displayParts, generateKey, hashKey, isLegacyKey, prefixFor } from './key-format.ts';
import { isValidScope, scopeResources, uncoveredScopes } from './scopes.ts';

export interface NewKeyInput {
  name?: string;
  scopes: string[];
  expires_at?: string | null;
  rate_limit_per_minute?: number;
  /** The user creating the key (a signed-in person); omitted for a key or the CLI. */
  created_by?: string | null;
}

export const maxRateLimitPerMinute = 1_000_000;
export const maxOverlapSeconds = 604_800;

// Said from the list the scopes are checked against, so the message names every resource there is.
const resourceNames = `${scopeResources.slice(0, -1).join(', ')} or ${scopeResources.at(-1)}`;

/** Checks what JSON schema cannot: scope grammar, a future expiry, a sane limit. Lists every problem. */
export function checkNewKeyInput(input: NewKeyInput, now = Date.now()): void {
  const issues: ValidationIssue[] = [];
  if (input.scopes.length === 0) issues.push({ path: 'scopes', message: 'must name at least one scope' });
  input.scopes.forEach((scope, i) => {
    if (!isValidScope(scope)) {
      issues.push({
        path: `scopes.${i}`,
        message: `"${scope}" is not a scope: use *, <resource>.* or <resource>.<action> with resource ${resourceNames}`,
      });
    }
  });
  if (input.expires_at != null) {
    const at = Date.parse(input.expires_at);
    if (Number.isNaN(at)) issues.push({ path: 'expires_at', message: 'must be an RFC 3339 timestamp' });
    else if (at <= now) issues.push({ path: 'expires_at', message: 'must be in the future' });
  }
  const limit = input.rate_limit_per_minute;
  if (limit !== undefined && (!Number.isInteger(limit) || limit < 1 || limit > maxRateLimitPerMinute)) {
    issues.push({ path: 'rate_limit_per_minute', message: `must be a whole number from 1 to ${maxRateLimitPerMinute}` });
  }
  if (input.name !== undefined && (input.name.length > 200 || /\p{Cc}/u.test(input.name))) {
    issues.push({ path: 'name', message: 'must be at most 200 characters with no control characters' });
  }
  if (issues.length > 0) throw validationFailed(issues);
}

/** Refuses with `scope_escalation` when `granter` holds fewer scopes than `requested`. */
export function assertNoEscalation(granter: readonly string[], requested: readonly string[]): void {
  const missing = uncoveredScopes(granter, requested);
  if (missing.length > 0) {
    throw new ApiError('scope_escalation', `This key cannot grant ${missing.join(', ')}: it does not hold it.`, {
      field: 'scopes',
      requested_scopes: requested,
      granted_scopes: granter,
      missing_scopes: missing,
    });
  }
}

/** What a calling key holds, and so the most it may hand on (docs/api.md#post-apiv1api-keys: a key never mints more than it has). */
export type Granter = Pick<ApiKeyRecord, 'id' | 'scopes' | 'expires_at' | 'rate_limit_per_minute'>;

/** True when an `expires_at` of `a` outlives one of `b` (null: never expires). */
function outlives(a: string | null, b: string | null): boolean {
  if (b === null) return false;
  return a === null || Date.parse(a) > Date.parse(b);
}

function expiryEscalation(granter: Granter, requested: string | null, action: string): ApiError {
  const what = requested === null ? 'never expires' : `expires later (${new Date(requested).toISOString()})`;
  return new ApiError('scope_escalation', `This key expires at ${granter.expires_at}, so it cannot ${action} that ${what}.`, {
    field: 'expires_at',
    requested_expires_at: requested,
    granted_expires_at: granter.expires_at,
  });
}

function limitEscalation(granter: Granter, requested: number, action: string): ApiError {
  return new ApiError(
    'scope_escalation',
    `This key is limited to ${granter.rate_limit_per_minute} requests per minute, so it cannot ${action} with a limit of ${requested}.`,
    {
      field: 'rate_limit_per_minute',
      requested_rate_limit_per_minute: requested,
      granted_rate_limit_per_minute: granter.rate_limit_per_minute,
    },
  );
}

/**
 * The input a key may create: its own scopes at most, an `expires_at` no later than its own and a
 * `rate_limit_per_minute` no higher than its own, else `scope_escalation` naming the field. Omitted
 * fields are inherited: the creator's expiry, and the lower of `defaultLimit` and the creator's limit.
 */
export function boundByGranter(
  granter: Granter,
  input: NewKeyInput,
  defaultLimit: number,
): NewKeyInput & { expires_at: string | null; rate_limit_per_minute: number } {
  assertNoEscalation(granter.scopes, input.scopes);
  const expiresAt = input.expires_at === undefined ? granter.expires_at : input.expires_at;
  if (outlives(expiresAt, granter.expires_at)) throw expiryEscalation(granter, expiresAt, 'create a key');
  const limit = input.rate_limit_per_minute ?? Math.min(defaultLimit, granter.rate_limit_per_minute);
  if (limit > granter.rate_limit_per_minute) throw limitEscalation(granter, limit, 'create a key');
  return { ...input, expires_at: expiresAt, rate_limit_per_minute: limit };
}

/**
 * Rotation hands the caller a successor with the rotated key's scopes, expiry and limit, so the caller
 * must hold at least as much; a key rotating itself gains nothing.
 */
export function assertMayRotate(granter: Granter, key: ApiKeyRecord): void {
  if (granter.id === key.id) return;
  assertNoEscalation(granter.scopes, key.scopes);
  if (outlives(key.expires_at, granter.expires_at)) throw expiryEscalation(granter, key.expires_at, 'rotate a key');
  if (key.rate_limit_per_minute > granter.rate_limit_per_minute) {
    throw limitEscalation(granter, key.rate_limit_per_minute, 'rotate a key');
  }
}

function record(
  tenantId: string,
  key: string,
  input: NewKeyInput,
  defaultLimit: number,
  lineage?: { id: string; createdBy: string | null },
): ApiKeyRecord {
  const id = newId('key');
  return {
    id,
    tenant_id: tenantId,
    lineage_id: lineage?.id ?? id,
    name: input.name ?? '',
    hash: hashKey(key),
    ...displayParts(key),
    scopes: [...new Set(input.scopes)],
    expires_at: input.expires_at ? new Date(input.expires_at).toISOString() : null,
    rate_limit_per_minute: input.rate_limit_per_minute ?? defaultLimit,
    legacy: isLegacyKey(key),
    created_at: nowIso(),
    revoked_at: null,
    rotated_to: null,
    last_used_at: null,
    last_used_ip: null,
    request_count: 0,
    created_by: input.created_by ?? lineage?.createdBy ?? null,
  };
}

/** The fields a new key is given, as its event names them (never the key). */
const newKeyFields = ['name', 'scopes', 'expires_at', 'rate_limit_per_minute'];

/** Stores a new key with its event (`api_key.created` or `.imported`) in one transaction. */
async function storeNewKey(db: Db, stored: ApiKeyRecord, source: AuditSource, action: 'api_key.created' | 'api_key.imported') {
  await inTransaction(db, async (tx) => {
    await insertKey(tx, stored);
    await recordChange(tx, stored.tenant_id, source, {
      action,
      target: { type: 'api_key', id: stored.id },
      changes: newKeyFields,
    });
  });
}

/** Creates a key for the tenant; the returned `key` is the only time the secret exists outside the caller. */
export async function createApiKey(db: Db, tenant: Tenant, input: NewKeyInput, defaultLimit: number, source: AuditSource) {
  checkNewKeyInput(input);
  const key = generateKey(prefixFor(tenant.type));
  const stored = record(tenant.id, key, input, defaultLimit);
  await storeNewKey(db, stored, source, 'api_key.created');
  return { record: stored, key };
}

/** Imports a legacy `ix_prod_`/`ix_dev_` key: it keeps working until it is rotated. */
export async function importLegacyKey(
  db: Db,
  tenant: Tenant,
  key: string,
  input: NewKeyInput,
  defaultLimit: number,
  source: AuditSource,
) {
  if (!isLegacyKey(key)) {
    throw validationFailed([
      { path: 'key', message: 'a legacy key starts ix_prod_ or ix_dev_ followed by at least 16 of A-Z a-z 0-9 _ -' },
    ]);
  }
  checkNewKeyInput(input);
  const stored = record(tenant.id, key, input, defaultLimit);
  try {
    await storeNewKey(db, stored, source, 'api_key.imported');
  } catch (error) {
    if (/unique|duplicate/i.test(String(error))) throw new ApiError('conflict', 'This key has been imported already.');
    throw error;
  }
  return { record: stored, key };
}

/**
 * Issues a successor with the same name, scopes, limit and expiry, in a new-format key; the old key
 * keeps working for `overlapSeconds` and then answers expired_credentials.
 */
export async function rotateApiKey(db: Db, old: ApiKeyRecord, tenant: Tenant, overlapSeconds: number, source: AuditSource) {
  if (old.revoked_at) throw new ApiError('conflict', 'A revoked key cannot be rotated.');
  if (old.rotated_to) throw new ApiError('conflict', `This key was rotated already, to ${old.rotated_to}.`);
  if (old.expires_at && Date.parse(old.expires_at) <= Date.now()) {
    throw new ApiError('conflict', 'An expired key cannot be rotated.');
  }
  const key = generateKey(prefixFor(tenant.type));
  const next = record(
    tenant.id,
    key,
    { name: old.name, scopes: old.scopes, expires_at: old.expires_at, rate_limit_per_minute: old.rate_limit_per_minute },
    old.rate_limit_per_minute,
    { id: old.lineage_id, createdBy: old.created_by },
  );
  const overlapEnd = Date.now() + overlapSeconds * 1000;
  const oldExpiry = old.expires_at ? Math.min(Date.parse(old.expires_at), overlapEnd) : overlapEnd;
  const rotated = await inTransaction(db, async (tx) => {
    if (!(await rotateKey(tx, old, next, new Date(oldExpiry).toISOString()))) return false;
    await recordChange(tx, tenant.id, source, {
      action: 'api_key.rotated',
      target: { type: 'api_key', id: old.id },
      changes: ['expires_at', 'rotated_to'],
    });
    return true;
  });
  if (!rotated) {
    const current = await findKey(db, old.id);
    throw new ApiError('conflict', current?.revoked_at ? 'A revoked key cannot be rotated.' : 'This key was rotated already.');
  }
  return { record: next, key, old: (await findKey(db, old.id)) as ApiKeyRecord };
}

/** Revokes a key; revoking a revoked key is a no-op that answers the key as it is (and writes no event). */
export async function revokeApiKey(db: Db, id: string, source: AuditSource, tenantId?: string): Promise<ApiKeyRecord> {
  return inTransaction(db, async (tx) => {
    const existing = await findKey(tx, id, tenantId);
    if (!existing) throw new ApiError('not_found', `No API key ${id}.`);
    if (!(await revokeKey(tx, id, nowIso()))) return existing;
    await recordChange(tx, existing.tenant_id, source, {
      action: 'api_key.revoked',
      target: { type: 'api_key', id },
      changes: ['revoked_at'],
    });
    return (await findKey(tx, id)) as ApiKeyRecord;
  });
}
