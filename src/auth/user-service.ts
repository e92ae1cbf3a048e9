import { ApiError, type ValidationIssue, validationFailed } from '../core/errors.ts';
import { newId, nowIso } from '../core/ids.ts';
import type { Db } from '../storage/database.ts';
import { findTenant } from '../storage/tenants.ts';
import {
  findUserByEmail,
  grantMembership,
  insertUser,
  normalizeEmail,
  type Role,
  revokeMembership,
  roles,
  type User,
} from '../storage/users.ts';
import { hashPassword, passwordProblem } from './passwords.ts';

// Something@something.tld without spaces: enough to catch a typo; the address is never mailed.
const emailPattern = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

/** Creates a user; `validation_failed` for a bad email or a short password, `conflict` when the email is taken. */
export async function createUser(db: Db, input: { email: string; name?: string; password: string }): Promise<User> {
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
  if (!(await insertUser(db, { ...user, password_hash: await hashPassword(input.password) }))) {
    throw new ApiError('conflict', `A user with the email ${email} exists already.`);
  }
  return user;
}

async function userOrFail(db: Db, email: string): Promise<User> {
  const found = await findUserByEmail(db, email);
  if (!found) throw new ApiError('not_found', `No user ${normalizeEmail(email)}.`);
  const { password_hash: _hash, ...user } = found;
  return user;
}

/** Gives the user a role in the tenant (replacing the one they had there). */
export async function grantRole(db: Db, email: string, tenantId: string, role: string) {
  if (!(roles as readonly string[]).includes(role)) {
    throw validationFailed([{ path: 'role', message: `must be one of ${roles.join(', ')}` }]);
  }
  const user = await userOrFail(db, email);
  if (!(await findTenant(db, tenantId))) throw new ApiError('not_found', `No tenant ${tenantId}.`);
  await grantMembership(db, user.id, tenantId, role as Role, nowIso());
  return { user, tenant_id: tenantId, role: role as Role };
}

/** Removes the user's membership of the tenant; running servers refuse their tokens there within 1 s. */
export async function revokeRole(db: Db, email: string, tenantId: string) {
  const user = await userOrFail(db, email);
  if (!(await revokeMembership(db, user.id, tenantId))) {
    throw new ApiError('not_found', `${user.email} has no role in tenant ${tenantId}.`);
  }
  return { user, tenant_id: tenantId, revoked: true as const };
}
