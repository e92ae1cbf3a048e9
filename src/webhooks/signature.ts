import { createHmac, randomBytes } from 'node:crypto';

const secretPrefix = 'whsec_';

/** A new endpoint secret: `whsec_` and the base64 of 32 random bytes (the Standard Webhooks form). */
export function newWebhookSecret(): string {
  return `${secretPrefix}${randomBytes(32).toString('base64')}`;
}

/** The key a secret signs with: the bytes its base64 part decodes to. */
function keyOf(secret: string): Buffer {
  return Buffer.from(secret.startsWith(secretPrefix) ? secret.slice(secretPrefix.length) : secret, 'base64');
}

/**
 * The `webhook-signature` header of the Standard Webhooks specification: `v1,<base64 HMAC-SHA256 of
 * "{id}.{timestamp}.{body}">` for each secret, space-separated (two while a rotated-out secret still signs).
 *
 * @example
 * signatureHeader([secret], 'evt_01…', 1732500000, '{"type":"webhook.test",…}'); // 'v1,K5oZfzN95Z9…='
 */
export function signatureHeader(secrets: readonly string[], id: string, timestampSeconds: number, body: string): string {
  const signed = `${id}.${timestampSeconds}.${body}`;
  return secrets.map((secret) => `v1,${createHmac('sha256', keyOf(secret)).update(signed, 'utf8').digest('base64')}`).join(' ');
}
