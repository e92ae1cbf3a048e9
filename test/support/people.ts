import { randomBytes, scryptSync } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { LightMyRequestResponse } from 'fastify';
import { cliSource } from '../../src/audit/audit-log.ts';
import { SigningKeys } from '../../src/auth/signing-keys.ts';
import { grantRole } from '../../src/auth/user-service.ts';
import { newId, nowIso } from '../../src/core/ids.ts';
import { insertUser } from '../../src/storage/users.ts';
import { body, type Harness } from './harness.ts';

export const password = 'correct horse battery staple';

/**
 * `secret` as passwords.ts stores it (`scrypt$N$r$p$salt$hash`), but at N=2^10, r=8, p=1: about 2 ms where the
 * production cost (N=2^15, p=3) takes about 0.2 s. A sign-in verifies at the cost the stored hash names, so fixture
 * users sign in a hundred times faster; that cost was most of the people suites' time. hashPassword's own cost is
 * pinned in people-sessions.test.ts, and users made through the CLI or createUser keep it.
 */
export function cheapHash(secret: string): string {
  const salt = randomBytes(16);
  const hash = scryptSync(secret.normalize('NFC'), salt, 32, { N: 1024, r: 8, p: 1 });
  return ['scrypt', 1024, 8, 1, salt.toString('base64url'), hash.toString('base64url')].join('$');
}

/** Stores a user with `password` (cheapHash) and, when given, a role in each tenant; returns the user's id. */
export async function person(h: Harness, email: string, roles: Record<string, string> = {}): Promise<string> {
  const id = newId('usr');
  const user = { id, email, name: email.split('@')[0], created_at: nowIso(), password_hash: cheapHash(password) };
  if (!(await insertUser(h.storage.db, user))) throw new Error(`a user ${email} exists already`);
  for (const [tenant, role] of Object.entries(roles)) await grantRole(h.storage.db, email, tenant, role, cliSource());
  return id;
}

export function signIn(
  h: Harness,
  email: string,
  secret = password,
  extra: { remoteAddress?: string; headers?: Record<string, string> } = {},
): Promise<LightMyRequestResponse> {
  return h.app.inject({
    method: 'POST',
    url: '/api/v1/auth/sign-in',
    payload: { email, password: secret },
    ...extra,
  });
}

/** Signs in and returns the session's tokens. */
export async function tokensOf(h: Harness, email: string): Promise<{ access: string; refresh: string }> {
  const res = await signIn(h, email);
  if (res.statusCode !== 200) throw new Error(`sign-in of ${email}: ${res.statusCode} ${res.body}`);
  const data = body(res).data;
  return { access: data.access_token, refresh: data.refresh_token };
}

/** `app.inject` as a person: the access token as Bearer, with the tenant header. */
export function asPerson(h: Harness, token: string, tenant: string, options: { method: string; url: string; payload?: object }) {
  return h.app.inject({
    ...options,
    method: options.method as 'GET',
    headers: { authorization: `Bearer ${token}`, 'x-tenant-id': tenant },
  });
}

/** The harness's master key: IX_MASTER_KEY (PostgreSQL), or the master.key file made beside the SQLite database. */
export function masterKeyOf(h: Harness): Buffer {
  return Buffer.from(h.config.masterKey ?? readFileSync(join(h.dir, 'master.key'), 'utf8'), 'base64');
}

/** The signing keys as another instance (or an operator's script) on the same storage sees them. */
export function signingKeysOf(h: Harness): SigningKeys {
  return new SigningKeys(h.storage.db, masterKeyOf(h));
}
