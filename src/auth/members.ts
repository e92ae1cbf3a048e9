import { type AuditSource, inTransaction, placePersonEvents, recordChange } from '../audit/audit-log.ts';
import { ApiError } from '../core/errors.ts';
import { nowIso } from '../core/ids.ts';
import type { Db } from '../storage/database.ts';
import {
  countOwners,
  findMember,
  findUserByEmail,
  grantMembership,
  lockTenantMembers,
  type Member,
  normalizeEmail,
  type Role,
  revokeMembership,
} from '../storage/users.ts';

/**
 * A tenant's members, changed through the API (docs/api.md#endpoints-members) or the CLI (`users grant`, `users revoke`),
 * each change in one transaction with its audit event. The API's changes are held to two rules the CLI, the operator's
 * own tool, is not: only an owner touches owners, and a tenant keeps at least one owner.
 */

/** Who changes members through the API: a person (their role is read again in the change's transaction), or a key. */
export interface MemberChanger {
  user: { id: string } | null;
}

const userTarget = (userId: string) => ({ type: 'user', id: userId });

/**
 * Gives the user `role` in the tenant on `tx`, with its event: `member.added` or `member.role_changed`; nothing when
 * `before` is `role` already. An added member's events that waited for a tenant (`user.created`, sign-ins while a
 * member of none) move to this one's log first: placed on every add, not only a first one, so one that a sign-in
 * racing an earlier grant left waiting is placed too (with a membership already, none waits).
 */
export async function putMember(
  tx: Db,
  tenantId: string,
  userId: string,
  role: Role,
  before: Role | undefined,
  source: AuditSource,
): Promise<void> {
  if (before === role) return;
  await grantMembership(tx, userId, tenantId, role, nowIso());
  if (before === undefined) await placePersonEvents(tx, userId, tenantId);
  const action = before === undefined ? 'member.added' : 'member.role_changed';
  await recordChange(tx, tenantId, source, { action, target: userTarget(userId), changes: ['role'] });
}

/** Removes the user's membership on `tx` with its `member.removed` event; false (and no event) when there was none. */
export async function dropMember(tx: Db, tenantId: string, userId: string, source: AuditSource): Promise<boolean> {
  if (!(await revokeMembership(tx, userId, tenantId))) return false;
  await recordChange(tx, tenantId, source, { action: 'member.removed', target: userTarget(userId), changes: ['role'] });
  return true;
}

/**
 * `insufficient_scope` unless the changer is a person who is an owner here now: read on `tx`, after the tenant's lock, so
 * of two owners demoting each other at once the second is no owner any more when its turn comes.
 */
async function onlyAnOwner(tx: Db, tenantId: string, changer: MemberChanger): Promise<void> {
  const role = changer.user === null ? null : ((await findMember(tx, tenantId, changer.user.id))?.role ?? null);
  if (role === 'owner') return;
  let who = 'an API key may not';
  if (changer.user !== null) who = role === null ? 'you are no member here any more' : `your role here is ${role}`;
  throw new ApiError('insufficient_scope', `Only an owner may make someone an owner, or change or remove an owner (${who}).`, {
    required_role: 'owner',
  });
}

async function memberOrFail(tx: Db, tenantId: string, userId: string): Promise<Member> {
  const member = await findMember(tx, tenantId, userId);
  if (!member) throw new ApiError('not_found', `No member ${userId} in this tenant.`);
  return member;
}

/** `conflict` when the owner `member` is the tenant's last. */
async function keepAnOwner(tx: Db, tenantId: string, member: Member, what: string): Promise<void> {
  if (member.role === 'owner' && (await countOwners(tx, tenantId)) <= 1) {
    throw new ApiError(
      'conflict',
      `${member.user.email} is the last owner of this tenant: make someone else owner before ${what}.`,
    );
  }
}

/** Adds the person with this email (made with `interchange users create`) as a member with `role`. */
export async function addMember(
  db: Db,
  tenantId: string,
  input: { email: string; role: Role },
  changer: MemberChanger,
  source: AuditSource,
): Promise<Member> {
  return inTransaction(db, async (tx) => {
    await lockTenantMembers(tx, tenantId);
    if (input.role === 'owner') await onlyAnOwner(tx, tenantId, changer);
    const user = await findUserByEmail(tx, input.email);
    if (!user) {
      throw new ApiError(
        'not_found',
        `No account ${normalizeEmail(input.email)}: an operator makes it with \`interchange users create\`, then it can be added.`,
      );
    }
    const existing = await findMember(tx, tenantId, user.id);
    if (existing) {
      throw new ApiError('conflict', `${user.email} is a member already, as ${existing.role}: change the role instead.`, {
        user_id: user.id,
      });
    }
    await putMember(tx, tenantId, user.id, input.role, undefined, source);
    return (await findMember(tx, tenantId, user.id)) as Member;
  });
}

/** Gives a member another role; the same role again changes nothing and writes no event. */
export async function changeMemberRole(
  db: Db,
  tenantId: string,
  userId: string,
  role: Role,
  changer: MemberChanger,
  source: AuditSource,
): Promise<Member> {
  return inTransaction(db, async (tx) => {
    await lockTenantMembers(tx, tenantId);
    const member = await memberOrFail(tx, tenantId, userId);
    if (member.role === 'owner' || role === 'owner') await onlyAnOwner(tx, tenantId, changer);
    if (member.role === role) return member;
    if (role !== 'owner') await keepAnOwner(tx, tenantId, member, 'changing their role');
    await putMember(tx, tenantId, userId, role, member.role, source);
    return { ...member, role };
  });
}

/** Removes a member from the tenant; their access tokens stop working here. */
export async function removeMember(
  db: Db,
  tenantId: string,
  userId: string,
  changer: MemberChanger,
  source: AuditSource,
): Promise<Member> {
  return inTransaction(db, async (tx) => {
    await lockTenantMembers(tx, tenantId);
    const member = await memberOrFail(tx, tenantId, userId);
    if (member.role === 'owner') await onlyAnOwner(tx, tenantId, changer);
    await keepAnOwner(tx, tenantId, member, 'removing them');
    await dropMember(tx, tenantId, userId, source);
    return member;
  });
}
