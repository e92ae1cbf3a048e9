import { randomBytes, type ScryptOptions, scrypt, timingSafeEqual } from 'node:crypto';

/** The shortest password accepted (docs/people-and-console.md#users). */
export const minPasswordLength = 12;
/** The longest: hashing cost grows with the input, and no one types more. */
export const maxPasswordLength = 1024;

// OWASP's scrypt setting N=2^15, r=8, p=3: 32 MiB per hash, about 0.1 s on one core. Stored with each hash, so it
// can be raised later without invalidating the hashes made before.
const cost = { N: 2 ** 15, r: 8, p: 3 };
const saltBytes = 16;
const hashBytes = 32;

function derive(password: string, salt: Buffer, params: { N: number; r: number; p: number }): Promise<Buffer> {
  const options: ScryptOptions = { ...params, maxmem: 256 * params.N * params.r };
  return new Promise((resolve, reject) => {
    scrypt(password.normalize('NFC'), salt, hashBytes, options, (error, key) => (error ? reject(error) : resolve(key)));
  });
}

/** Why a password cannot be used, or undefined when it can. */
export function passwordProblem(password: string): string | undefined {
  if (password.length < minPasswordLength) return `must be at least ${minPasswordLength} characters`;
  if (password.length > maxPasswordLength) return `must be at most ${maxPasswordLength} characters`;
  return undefined;
}

/**
 * A memory-hard hash of the password with a random salt of its own: `scrypt$N$r$p$<salt>$<hash>` (base64url).
 *
 * @example
 * const stored = await hashPassword('correct horse battery staple');
 * await verifyPassword('correct horse battery staple', stored); // true
 */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(saltBytes);
  const hash = await derive(password, salt, cost);
  return ['scrypt', cost.N, cost.r, cost.p, salt.toString('base64url'), hash.toString('base64url')].join('$');
}

/** True when `password` matches `stored`; compared in constant time. A malformed `stored` never matches. */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [scheme, n, r, p, salt, hash] = stored.split('$');
  if (scheme !== 'scrypt' || hash === undefined) return false;
  const expected = Buffer.from(hash, 'base64url');
  const actual = await derive(password, Buffer.from(salt, 'base64url'), {
    N: Number(n),
    r: Number(r),
    p: Number(p),
  });
  return expected.length === actual.length && timingSafeEqual(expected, actual);
}

// The hash of a random password no one knows, made with `cost`: verifying against it costs what a real check costs.
const dummyHash = 'scrypt$32768$8$3$EfEe3H_FL1fbQ_G_sE39cA$PnMl4vVspp4LgmIOhiCzJsDqobzQKXzxHjJfJ6LN17Q';

/**
 * Spends what verifying a real password costs, for a sign-in with an unknown email: its answer then comes in the same
 * time as a wrong password's, and says nothing of which emails exist.
 */
export async function verifyDummyPassword(password: string): Promise<false> {
  await verifyPassword(password, dummyHash);
  return false;
}
