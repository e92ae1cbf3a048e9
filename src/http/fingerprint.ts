import { createHash } from 'node:crypto';

/** JSON with object keys sorted at every depth, so that key order never changes a fingerprint. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`);
    return `{${entries.join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** What makes two execute requests "the same" for an Idempotency-Key: the integration and the body. */
export function requestFingerprint(integrationId: string, body: unknown): string {
  return createHash('sha256').update(integrationId).update('\u0000').update(canonicalJson(body)).digest('hex');
}
