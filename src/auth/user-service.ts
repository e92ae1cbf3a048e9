import { type AuditSource, inTransaction, recordPersonEvent } from '../audit/audit-log.ts';
import { ApiError, type ValidationIssue, validationFailed } from '../core/errors.ts';
import { newId, nowIso } from '../core/ids.ts';
import type { Db } from '../storage/database.ts';
import {
  findMember,
  findUserByEmail,
  insertUser,
  lockTenantMembers,
  normalizeEmail,
  type Role,
  roles,
  type User,
} from '../storage/users.ts';
import { dropMember, putMember } from './members.ts';
import { hashPassword, passwordProblem } from './passwords.ts';

// Something@something.tld without spaces: enough to catch a typo; the address is never mailed.
const emailPattern = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

/**
 * Creates a user, with its `user.created` event (naming the fields set, never their values): kept until the person's
 * first tenant, in whose log it then appears (src/audit/audit-log.ts). `validation_failed` for a bad email or a short
 * password, `conflict` when the email is taken.
 */
export async function createUser(
  db: Db,
  input: { email: string; name?: string; password: string },
  source: AuditSource,
): Promise<User> {
  const email = normalizeEmail(input.email);
  const issues: ValidationIssue[] = [];
  if (email.length > 320 || !emailPattern.test(email)) issues.push({ path: 'email', message: 'must be an email address' });
  const problem = passwordProblem(input.password);
  if (problem) issues.push({ path: 'password', message: problem });
  if (input.name !== undefined && (input.name.length > 200 || /\p{Cc}/u.test(input.name))) {
    issues.push({ path: 'name', message: 'must be at most 200 characters with no control characters' });
  }
  if (issues.length > 0) throw validationFailed(issues);
  const user = { id: newId('usr'), email, name: input.name ?? '', created_at: nowIso() };
  // Hashed before the transaction: a tenth of a second of scrypt is not spent holding a write lock.
  const passwordHash = await hashPassword(input.password);
  return inTransaction(db, async (tx) => {
    if (!(await insertUser(tx, { ...user, password_hash: passwordHash }))) {
      throw new ApiError('conflict', `A user with the email ${email} exists already.`);
    }
    await recordPersonEvent(tx, user.id, source, {
      action: 'user.created',
      target: { type: 'user', id: user.id },
      changes: ['email', 'name', 'password'],
    });
    return user;
  });
}

async function userOrFail(db: Db, email: string): Promise<User> {
  const found = await findUserByEmail(db, email);
  if (!found) throw new ApiError('not_found', `No user ${normalizeEmail(email)}.`);
  const { password_hash: _hash, ...user } = found;
  return user;
}

/**
 * Gives the user a role in the tenant (replacing the one they had there), with its event: `member.added`,
 * `member.role_changed`, or none when they have that role already. The operator's tool: the API's rules on owners
 * (src/auth/members.ts) do not bind it.
 */
export async function grantRole(db: Db, email: string, tenantId: string, role: string, source: AuditSource) {
  if (!(roles as readonly string[]).includes(role)) {
    throw validationFailed([{ path: 'role', message: `must be one of ${roles.join(', ')}` }]);
  }
  return inTransaction(db, async (tx) => {
    // The tenant's lock first: on SQLite a transaction that writes first waits for the write lock instead of failing.
    if (!(await lockTenantMembers(tx, tenantId))) throw new ApiError('not_found', `No tenant ${tenantId}.`);
    const user = await userOrFail(tx, email);
    const before = await findMember(tx, tenantId, user.id);
    await putMember(tx, tenantId, user.id, role as Role, before?.role, source);
    return { user, tenant_id: tenantId, role: role as Role };
  });
}

/** Removes the user's membership of the tenant, with its `member.removed` event; running servers refuse their tokens there within 1 s. */
export async function revokeRole(db: Db, email: string, tenantId: string, source: AuditSource) {
  return inTransaction(db, async (tx) => {
    if (!(await lockTenantMembers(tx, tenantId))) throw new ApiError('not_found', `No tenant ${tenantId}.`);
    const user = await userOrFail(tx, email);
    if (!(await dropMember(tx, tenantId, user.id, source))) {
      throw new ApiError('not_found', `${user.email} has no role in tenant ${tenantId}.`);
    }
    return { user, tenant_id: tenantId, revoked: true as const };
  });
}
