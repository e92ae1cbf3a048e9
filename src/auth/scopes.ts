export const scopeResources = ['entities', 'integrations', 'api_keys', 'executions', 'webhooks', 'processflow', 'audit'] as const;

const scopePattern = new RegExp(`^(\\*|(${scopeResources.join('|')})\\.(\\*|[a-z][a-z_]{0,31}))$`);

/** A scope is `*`, `<resource>.*` or `<resource>.<action>` with a known resource and a lower-case action. */
export function isValidScope(scope: string): boolean {
  return scopePattern.test(scope);
}

/** True when `granted` includes `wanted`: an exact match, the resource's wildcard, or `*`. */
export function scopeCovers(granted: string, wanted: string): boolean {
  if (granted === '*' || granted === wanted) return true;
  if (!granted.endsWith('.*')) return false;
  return wanted !== '*' && wanted.startsWith(granted.slice(0, -1));
}

export function hasScope(granted: readonly string[], wanted: string): boolean {
  return granted.some((g) => scopeCovers(g, wanted));
}

/** The requested scopes that `granted` does not cover. */
export function uncoveredScopes(granted: readonly string[], requested: readonly string[]): string[] {
  return requested.filter((r) => !hasScope(granted, r));
}
