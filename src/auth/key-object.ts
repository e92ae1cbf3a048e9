import type { ApiKeyRecord } from '../storage/api-keys.ts';
import type { PendingUsage } from '../storage/usage.ts';

/** The key object of docs/api.md#the-key-object: never the secret or its hash. Unflushed usage is folded in. */
export function toKeyObject(key: ApiKeyRecord, pending?: PendingUsage) {
  const newerPending = pending && (key.last_used_at === null || pending.lastUsedAt > key.last_used_at);
  return {
    id: key.id,
    tenant_id: key.tenant_id,
    name: key.name,
    prefix: key.prefix,
    start: key.start,
    last4: key.last4,
    scopes: key.scopes,
    expires_at: key.expires_at,
    rate_limit_per_minute: key.rate_limit_per_minute,
    legacy: key.legacy,
    created_at: key.created_at,
    revoked_at: key.revoked_at,
    rotated_to: key.rotated_to,
    created_by: key.created_by,
    usage: {
      last_used_at: newerPending ? pending.lastUsedAt : key.last_used_at,
      last_used_ip: newerPending ? pending.lastUsedIp : key.last_used_ip,
      request_count: key.request_count + (pending?.requests ?? 0),
    },
  };
}

export type KeyObject = ReturnType<typeof toKeyObject>;
