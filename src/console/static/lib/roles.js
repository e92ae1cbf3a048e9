/**
 * What each role may do in a tenant (docs/people-and-console.md#roles), so the console offers only what the API will
 * allow. The service's src/auth/roles.ts decides; this mirrors it.
 */
const reads = ['entities.read', 'integrations.read', 'api_keys.read', 'executions.read', 'webhooks.read', 'processflow.read'];
const roleScopes = {
  owner: ['*'],
  admin: ['*'],
  developer: ['integrations.*', 'executions.read', 'entities.*', 'api_keys.read', 'webhooks.*'],
  viewer: reads,
};

/** True when `role` grants `scope` (`integrations.execute`, …). */
export function can(role, scope) {
  const resource = scope.split('.')[0];
  return (roleScopes[role] ?? []).some((held) => held === '*' || held === scope || held === `${resource}.*`);
}

/** Every scope a key can be given, in the order the create form lists them. */
export const knownScopes = [
  '*',
  'integrations.*',
  'integrations.read',
  'integrations.write',
  'integrations.execute',
  'executions.read',
  'entities.*',
  'entities.read',
  'entities.write',
  'api_keys.read',
  'api_keys.write',
  'webhooks.read',
  'webhooks.write',
  'processflow.*',
  'audit.read',
];
