import type { Role } from '../storage/users.ts';
import { scopeResources } from './scopes.ts';

// A viewer reads everything but the audit log, which is for owners and admins (docs/audit.md).
const readAll = scopeResources.filter((resource) => resource !== 'audit').map((resource) => `${resource}.read`);

/** The scopes each role grants in its tenant (docs/people-and-console.md#roles). */
export const roleScopes: Readonly<Record<Role, readonly string[]>> = Object.freeze({
  owner: ['*'],
  admin: ['*'],
  developer: ['integrations.*', 'executions.read', 'entities.*', 'api_keys.read', 'webhooks.*'],
  viewer: readAll,
});
