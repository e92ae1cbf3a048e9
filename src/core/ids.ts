import { randomFillSync } from 'node:crypto';

const base62Alphabet = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const base36Alphabet = '0123456789abcdefghijklmnopqrstuvwxyz';

/**
 * CSPRNG bytes drawn from a pool filled 4 KiB at a time: a call to the system's generator for each id was 7 % of an
 * execute's CPU (crypto.randomUUID pools its entropy the same way). Each byte is handed out once.
 */
const pool = Buffer.alloc(4096);
let poolOffset = pool.length;

function randomByte(): number {
  if (poolOffset === pool.length) {
    randomFillSync(pool);
    poolOffset = 0;
  }
  return pool[poolOffset++];
}

/** `length` characters drawn uniformly from `alphabet` with a CSPRNG (rejection sampling, no modulo bias). */
export function randomString(length: number, alphabet = base62Alphabet): string {
  const limit = 256 - (256 % alphabet.length);
  let out = '';
  while (out.length < length) {
    const byte = randomByte();
    if (byte < limit) out += alphabet[byte % alphabet.length];
  }
  return out;
}

/** Encodes a non-negative integer in base 62, left-padded to `width`. */
export function toBase62(value: number, width: number): string {
  let out = '';
  let rest = value;
  do {
    out = base62Alphabet[rest % 62] + out;
    rest = Math.floor(rest / 62);
  } while (rest > 0);
  return out.padStart(width, '0');
}

/**
 * A prefixed id that sorts by creation time (`key_…`, `ent_…`): lower-case base36 so that
 * SQLite and PostgreSQL collations order it alike.
 */
export function newId(prefix: string, now = Date.now()): string {
  const time = now.toString(36).padStart(9, '0');
  return `${prefix}_${time}${randomString(16, base36Alphabet)}`;
}

/** The last timestamp made, and its millisecond: calls within one millisecond (every execute makes two) share it. */
let lastIsoMs = Number.NaN;
let lastIso = '';

/** RFC 3339 UTC timestamp. */
export function nowIso(): string {
  const now = Date.now();
  if (now !== lastIsoMs) {
    lastIsoMs = now;
    lastIso = new Date(now).toISOString();
  }
  return lastIso;
}
