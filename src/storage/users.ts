import type { Db } from './database.ts';
import { decodeCursor, type Page, toPage } from './pagination.ts';

/** What a person may do in a tenant (docs/people-and-console.md#roles). */
export const roles = ['owner', 'admin', 'developer', 'viewer'] as const;
export type Role = (typeof roles)[number];

/** A user as the API shows it: never the password hash. */
export interface User {
  id: string;
  email: string;
  name: string;
  created_at: string;
}

/** A user with the stored password hash, for sign-in only. */
export interface UserWithPassword extends User {
  password_hash: string;
}

export interface Membership {
  tenant_id: string;
  tenant_name: string;
  role: Role;
}

/** Emails are compared case-insensitively: stored and looked up lower-cased. */
export function normalizeEmail(email: string): string {
  return email.trim().toLowerCase();
}

/** Inserts a user; false when the email is taken already. */
export async function insertUser(db: Db, user: UserWithPassword): Promise<boolean> {
  const result = await db
    .insertInto('users')
    .values({ ...user, email: normalizeEmail(user.email) })
    .onConflict((c) => c.column('email').doNothing())
    .executeTakeFirst();
  return Number(result.numInsertedOrUpdatedRows ?? 0) === 1;
}

export async function findUserByEmail(db: Db, email: string): Promise<UserWithPassword | undefined> {
  return db.selectFrom('users').selectAll().where('email', '=', normalizeEmail(email)).executeTakeFirst();
}

export async function findUser(db: Db, id: string): Promise<User | undefined> {
  return db.selectFrom('users').select(['id', 'email', 'name', 'created_at']).where('id', '=', id).executeTakeFirst();
}

export async function listUsers(db: Db): Promise<User[]> {
  return db.selectFrom('users').select(['id', 'email', 'name', 'created_at']).orderBy('email').execute();
}

/** The user's tenants and roles, by tenant id. */
export async function membershipsOf(db: Db, userId: string): Promise<Membership[]> {
  const rows = await db
    .selectFrom('memberships')
    .innerJoin('tenants', 'tenants.id', 'memberships.tenant_id')
    .select(['memberships.tenant_id', 'tenants.name as tenant_name', 'memberships.role'])
    .where('memberships.user_id', '=', userId)
    .orderBy('memberships.tenant_id')
    .execute();
  return rows.map((row) => ({ ...row, role: row.role as Role }));
}

/** Gives the user `role` in the tenant, replacing the role they had there. */
export async function grantMembership(db: Db, userId: string, tenantId: string, role: Role, at: string): Promise<void> {
  await db
    .insertInto('memberships')
    .values({ user_id: userId, tenant_id: tenantId, role, created_at: at })
    .onConflict((c) => c.columns(['user_id', 'tenant_id']).doUpdateSet({ role }))
    .execute();
}

/** Removes the user's membership of the tenant; false when there was none. */
export async function revokeMembership(db: Db, userId: string, tenantId: string): Promise<boolean> {
  const result = await db
    .deleteFrom('memberships')
    .where('user_id', '=', userId)
    .where('tenant_id', '=', tenantId)
    .executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

/** A member of a tenant as the API shows one (docs/api.md#the-member-object). */
export interface Member {
  user: { id: string; email: string; name: string };
  role: Role;
  created_at: string;
}

function memberSelect(db: Db) {
  return db
    .selectFrom('memberships')
    .innerJoin('users', 'users.id', 'memberships.user_id')
    .select(['users.id', 'users.email', 'users.name', 'memberships.role', 'memberships.created_at']);
}

function toMember(row: { id: string; email: string; name: string; role: string; created_at: string }): Member {
  return { user: { id: row.id, email: row.email, name: row.name }, role: row.role as Role, created_at: row.created_at };
}

/** A tenant's members by user id (ids sort by their creation). */
export async function listMembers(db: Db, tenantId: string, query: { limit: number; cursor?: string }): Promise<Page<Member>> {
  let select = memberSelect(db).where('memberships.tenant_id', '=', tenantId);
  const after = decodeCursor(query.cursor);
  if (after !== undefined) select = select.where('users.id', '>', after);
  const rows = await select
    .orderBy('users.id')
    .limit(query.limit + 1)
    .execute();
  return toPage(rows.map(toMember), query.limit, (m) => m.user.id);
}

/** The user's membership of the tenant, or undefined. */
export async function findMember(db: Db, tenantId: string, userId: string): Promise<Member | undefined> {
  const row = await memberSelect(db)
    .where('memberships.tenant_id', '=', tenantId)
    .where('memberships.user_id', '=', userId)
    .executeTakeFirst();
  return row && toMember(row);
}

/** How many owners the tenant has. */
export async function countOwners(db: Db, tenantId: string): Promise<number> {
  const row = await db
    .selectFrom('memberships')
    .select((eb) => eb.fn.countAll<number | string>().as('owners'))
    .where('tenant_id', '=', tenantId)
    .where('role', '=', 'owner')
    .executeTakeFirstOrThrow();
  return Number(row.owners);
}

/**
 * Takes the tenant's row lock for the rest of the transaction `tx`: changes to one tenant's members then run one after
 * the other, so two owners demoting each other at once cannot both see the other still an owner (PostgreSQL's read
 * committed would let both pass); on SQLite it takes the write lock at once. False when there is no such tenant.
 */
export async function lockTenantMembers(tx: Db, tenantId: string): Promise<boolean> {
  const result = await tx
    .updateTable('tenants')
    .set((eb) => ({ name: eb.ref('name') }))
    .where('id', '=', tenantId)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** What a request with an access token needs: the user, their role in the tenant (null: none), and whether the session ended. */
export interface PersonInTenant {
  user: User;
  role: Role | null;
  sessionRevoked: boolean;
}

/** The user, their role in `tenantId` and their session's state, in one query; undefined when the user or session is gone. */
export async function personInTenant(
  db: Db,
  userId: string,
  sessionId: string,
  tenantId: string,
): Promise<PersonInTenant | undefined> {
  const row = await db
    .selectFrom('users')
    .innerJoin('sessions', (join) => join.onRef('sessions.user_id', '=', 'users.id').on('sessions.id', '=', sessionId))
    .leftJoin('memberships', (join) =>
      join.onRef('memberships.user_id', '=', 'users.id').on('memberships.tenant_id', '=', tenantId),
    )
    .select([
      'users.id',
      'users.email',
      'users.name',
      'users.created_at',
      'memberships.role',
      'sessions.revoked_at as session_revoked_at',
    ])
    .where('users.id', '=', userId)
    .executeTakeFirst();
  if (!row) return undefined;
  const { role, session_revoked_at, ...user } = row;
  return { user, role: (role ?? null) as Role | null, sessionRevoked: session_revoked_at !== null };
}
