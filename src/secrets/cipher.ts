import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

const version = 'v1';

/**
 * AES-256-GCM with a random 96-bit IV. `context` is authenticated (not stored): a ciphertext moved
 * to another tenant, integration or field fails to decrypt instead of leaking there.
 */
export function encryptSecret(key: Buffer, plaintext: string, context: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(Buffer.from(context, 'utf8'));
  const sealed = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return `${version}:${Buffer.concat([iv, cipher.getAuthTag(), sealed]).toString('base64')}`;
}

export function decryptSecret(key: Buffer, stored: string, context: string): string {
  if (!stored.startsWith(`${version}:`)) throw new Error('unknown secret format');
  const raw = Buffer.from(stored.slice(version.length + 1), 'base64');
  const decipher = createDecipheriv('aes-256-gcm', key, raw.subarray(0, 12));
  decipher.setAAD(Buffer.from(context, 'utf8'));
  decipher.setAuthTag(raw.subarray(12, 28));
  return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8');
}
