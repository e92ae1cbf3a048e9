import { hostname, userInfo } from 'node:os';
import type { FastifyRequest } from 'fastify';
import { newId } from '../core/ids.ts';
import {
  type AuditEvent,
  deleteAuditEvents,
  insertAuditEvents,
  toAuditRow,
  unplacedEventsOf,
  unplacedTenant,
} from '../storage/audit-events.ts';
import type { Db } from '../storage/database.ts';

/** Every action the log records (docs/audit.md#actions). */
export const auditActions = [
  'api_key.created',
  'api_key.rotated',
  'api_key.revoked',
  'api_key.imported',
  'integration.created',
  'integration.replaced',
  'integration.updated',
  'integration.deleted',
  'webhook.created',
  'webhook.updated',
  'webhook.deleted',
  'webhook.secret_rotated',
  'webhook.delivery_resent',
  'member.added',
  'member.role_changed',
  'member.removed',
  'user.created',
  'user.signed_in',
  'user.sign_in_failed',
  'signing_key.rotated',
  'tenant.created',
] as const;
export type AuditAction = (typeof auditActions)[number];

export interface AuditActor {
  type: 'api_key' | 'user' | 'cli' | 'system';
  id: string;
  name?: string;
}

/** Who makes a change and from where: what a request, the CLI or the service itself fixes for every event it writes. */
export interface AuditSource {
  actor: AuditActor;
  ip: string | null;
  request_id: string | null;
}

/** What changed: the action, its object, and the paths of the fields that changed (never a value). */
export interface AuditChange {
  action: AuditAction;
  target: { type: string; id: string };
  changes?: readonly string[];
}

/** At most this many paths per event, each at most this long (docs/limits.md#audit-log). */
export const maxChangedPaths = 200;
const maxPathLength = 300;

function event(source: AuditSource, change: AuditChange, now = Date.now()): AuditEvent {
  const paths = [...new Set(change.changes ?? [])].slice(0, maxChangedPaths).map((p) => p.slice(0, maxPathLength));
  return {
    id: newId('aud', now),
    at: new Date(now).toISOString(),
    action: change.action,
    actor: source.actor,
    ip: source.ip,
    request_id: source.request_id,
    target: change.target,
    changes: paths,
  };
}

/**
 * Runs `work` in a transaction, or in the one `db` is already: a change and its events commit together or not at all.
 */
export async function inTransaction<T>(db: Db, work: (tx: Db) => Promise<T>): Promise<T> {
  return db.isTransaction ? work(db) : db.transaction().execute(work);
}

/** Writes the change's event to the tenant's log, on `tx`: the transaction of the change itself. */
export async function recordChange(tx: Db, tenantId: string, source: AuditSource, change: AuditChange): Promise<void> {
  await insertAuditEvents(tx, [toAuditRow(tenantId, event(source, change))]);
}

/** Writes one event to the log of each tenant: a change that concerns them all (`signing_key.rotated`). */
export async function recordForTenants(tx: Db, tenantIds: readonly string[], source: AuditSource, change: AuditChange) {
  const now = Date.now();
  await insertAuditEvents(
    tx,
    tenantIds.map((tenantId) => toAuditRow(tenantId, event(source, change, now))),
  );
}

/**
 * An event about a person (`user.created`, sign-ins): to the log of every tenant they are a member of now; a member of
 * none, it waits for the first tenant they are added to (placePersonEvents).
 */
export async function recordPersonEvent(tx: Db, userId: string, source: AuditSource, change: AuditChange): Promise<void> {
  const tenants = await tx.selectFrom('memberships').select('tenant_id').where('user_id', '=', userId).execute();
  const now = Date.now();
  const owners = tenants.length > 0 ? tenants.map((t) => t.tenant_id) : [unplacedTenant];
  await insertAuditEvents(
    tx,
    owners.map((tenantId) => toAuditRow(tenantId, event(source, change, now))),
  );
}

/** A person's first membership: the events about them that waited for a tenant move to its log, as they were. */
export async function placePersonEvents(tx: Db, userId: string, tenantId: string): Promise<void> {
  const waiting = await unplacedEventsOf(tx, userId);
  await deleteAuditEvents(
    tx,
    waiting.map((e) => e.id),
  );
  await insertAuditEvents(
    tx,
    waiting.map((e) => toAuditRow(tenantId, { ...e, id: newId('aud', Date.parse(e.at)) })),
  );
}

/** Who calls, from where: the key (by id and name) or the person (by id and name), the client's address, the request id. */
export function requestSource(request: FastifyRequest): AuditSource {
  const auth = request.auth;
  let actor: AuditActor;
  if (auth?.key) actor = { type: 'api_key', id: auth.key.id, name: auth.key.name };
  else if (auth?.user) actor = { type: 'user', id: auth.user.id, name: auth.user.name || auth.user.email };
  else actor = { type: 'system', id: 'anonymous' };
  return { actor, ip: request.ip, request_id: request.id };
}

/** A person acting on themselves without a tenant's credentials (signing in). */
export function personSource(request: FastifyRequest, user: { id: string; name: string; email: string }): AuditSource {
  return { actor: { type: 'user', id: user.id, name: user.name || user.email }, ip: request.ip, request_id: request.id };
}

/** The CLI: the operating-system account that ran it; one request id for everything one command changes. */
export function cliSource(): AuditSource {
  let account = 'unknown';
  try {
    account = userInfo().username;
  } catch {
    // No passwd entry for this uid (a container's arbitrary user): the account stays unknown.
  }
  return { actor: { type: 'cli', id: account, name: `${account}@${hostname()}` }, ip: null, request_id: newId('cli') };
}

/** The service itself (a webhook disabled after its failures). */
export function systemSource(what: string): AuditSource {
  return { actor: { type: 'system', id: what }, ip: null, request_id: null };
}

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * The paths of the fields that differ between `before` and `after`, objects walked field by field and anything else
 * (a list, a string) compared whole: `config.base_url`, `config.auth.client_secret`. Never a value.
 */
export function changedPaths(before: unknown, after: unknown, prefix: string): string[] {
  if (isPlainObject(before) && isPlainObject(after)) {
    const keys = new Set([...Object.keys(before), ...Object.keys(after)]);
    return [...keys].sort().flatMap((key) => changedPaths(before[key], after[key], prefix ? `${prefix}.${key}` : key));
  }
  if (isPlainObject(after) && before === undefined) return changedPaths({}, after, prefix);
  if (isPlainObject(before) && after === undefined) return changedPaths(before, {}, prefix);
  return JSON.stringify(before) === JSON.stringify(after) ? [] : [prefix];
}
