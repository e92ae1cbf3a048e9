import { api, apiAll } from './api.js';

/**
 * The members API as the console uses it: every call the Members screen makes is here, so a change of the contract is
 * a change of this file.
 */

/** The roles, most powerful first, with what each may do (docs/people-and-console.md#roles). */
export const roleChoices = [
  ['owner', 'Everything, and the only role that makes, changes or removes owners.'],
  ['admin', 'Everything: keys, integrations, webhooks, members (but owners), the audit log.'],
  ['developer', 'Integrations, entities and webhooks; reads executions and keys.'],
  ['viewer', 'Reads everything but the audit log.'],
];

/** Every member of the tenant (all pages), by user id. */
export function listMembers(tenant) {
  return apiAll('/members', { tenant, max: 5000 });
}

/** Adds the person with this email (an account an operator made) with `role`; resolves to the new member. */
export async function addMember(tenant, { email, role }) {
  return (await api('/members', { method: 'POST', tenant, body: { email, role } })).data;
}

export async function changeRole(tenant, userId, role) {
  return (await api(`/members/${encodeURIComponent(userId)}`, { method: 'PATCH', tenant, body: { role } })).data;
}

export async function removeMember(tenant, userId) {
  return (await api(`/members/${encodeURIComponent(userId)}`, { method: 'DELETE', tenant })).data;
}

/**
 * What `role` may do to `member` here, as the API decides it: owners and admins change members, but only an owner
 * touches an owner (and makes one); a tenant's last owner is neither demoted nor removed.
 */
export function memberActions(role, member, owners) {
  const manages = role === 'owner' || role === 'admin';
  const touches = manages && (member.role !== 'owner' || role === 'owner');
  const lastOwner = member.role === 'owner' && owners <= 1;
  return { change: touches && !lastOwner, remove: touches && !lastOwner, lastOwner };
}

/** The roles `role` may give: an owner any, an admin all but owner. */
export function assignableRoles(role) {
  return roleChoices.filter(([r]) => role === 'owner' || r !== 'owner');
}
