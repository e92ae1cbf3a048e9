import { hash } from 'node:crypto';
import { crc32 } from 'node:zlib';
import { randomString, toBase62 } from '../core/ids.ts';
import type { TenantType } from '../storage/tenants.ts';

export const livePrefix = 'ix_live_';
export const testPrefix = 'ix_test_';
export const legacyPrefixes = ['ix_prod_', 'ix_dev_'] as const;

const randomLength = 40;
const checksumLength = 6;
const currentKeyPattern = /^ix_(live|test)_[0-9A-Za-z]{38,}$/;
const legacyKeyPattern = /^ix_(prod|dev)_[0-9A-Za-z_-]{16,200}$/;

/** The prefix a new key gets: `ix_test_` for sandbox tenants, `ix_live_` for every other type. */
export function prefixFor(type: TenantType): string {
  return type === 'sandbox' ? testPrefix : livePrefix;
}

function checksum(body: string): string {
  return toBase62(crc32(body), checksumLength);
}

/** A new key: prefix, 40 base62 characters from a CSPRNG, and a 6-character CRC32 checksum. */
export function generateKey(prefix: string): string {
  const body = prefix + randomString(randomLength);
  return body + checksum(body);
}

export type KeyShape = 'current' | 'legacy' | 'malformed';

/** Classifies a presented key without touching storage: a bad checksum is `malformed`. */
export function keyShape(key: string): KeyShape {
  if (currentKeyPattern.test(key)) {
    const body = key.slice(0, -checksumLength);
    return checksum(body) === key.slice(-checksumLength) ? 'current' : 'malformed';
  }
  return legacyKeyPattern.test(key) ? 'legacy' : 'malformed';
}

/** True for anything that looks like one of our keys, valid or not (to catch keys sent as Bearer tokens). */
export function looksLikeApiKey(value: string): boolean {
  return /^ix_[a-z]+_/.test(value);
}

export function isLegacyKey(key: string): boolean {
  return legacyKeyPattern.test(key);
}

/** SHA-256 of the whole key: keys carry 238 bits of entropy, so a fast hash is right. */
export function hashKey(key: string): string {
  return hash('sha256', key, 'hex');
}

/** The parts of a key that may be shown after creation. */
export function displayParts(key: string): { prefix: string; start: string; last4: string } {
  const prefix = key.slice(0, key.indexOf('_', 3) + 1);
  return { prefix, start: key.slice(0, 12), last4: key.slice(-4) };
}
