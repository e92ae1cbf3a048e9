/** Calls of the API written out as curl commands, for a person to run from a shell. */

/** `text` as one shell word in single quotes: any text is safe in it (a quote is closed, escaped and reopened). */
export const shellQuoted = (text) => `'${text.replaceAll("'", `'\\''`)}'`;

/**
 * The curl command of a call to `path` (below /api/v1) of this service, as a machine with a key sends it: the key read
 * from the shell's `$IX_API_KEY` (the page's own access token is never written out), the tenant's `X-Tenant-ID`,
 * `headers` (`{'Idempotency-Key': 'k'}`) and `body` as JSON.
 *
 * @example curlCommand({ path: '/integrations/crm/execute', tenant: 'acme', body: { operation: 'test' } })
 */
export function curlCommand({ method = 'POST', path, tenant, headers = {}, body }) {
  const lines = [
    `curl -s -X ${method} ${shellQuoted(`${location.origin}/api/v1${path}`)}`,
    '-H "X-API-Key: $IX_API_KEY"',
    `-H ${shellQuoted(`X-Tenant-ID: ${tenant}`)}`,
  ];
  for (const [name, value] of Object.entries(headers)) lines.push(`-H ${shellQuoted(`${name}: ${value}`)}`);
  if (body !== undefined) lines.push("-H 'Content-Type: application/json'", `-d ${shellQuoted(JSON.stringify(body))}`);
  return lines.join(' \\\n  ');
}

/** The path of an integration's execute endpoint (below /api/v1). */
export const executePath = (integrationId) => `/integrations/${encodeURIComponent(integrationId)}/execute`;
