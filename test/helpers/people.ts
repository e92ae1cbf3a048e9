import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { LightMyRequestResponse } from 'fastify';
import { SigningKeys } from '../../src/auth/signing-keys.ts';
import { createUser, grantRole } from '../../src/auth/user-service.ts';
import { body, type Harness } from './harness.ts';

export const password = 'correct horse battery staple';

/** Creates a user with `password` and, when given, a role in a tenant; returns the user's id. */
export async function person(h: Harness, email: string, roles: Record<string, string> = {}): Promise<string> {
  const user = await createUser(h.storage.db, { email, name: email.split('@')[0], password });
  for (const [tenant, role] of Object.entries(roles)) await grantRole(h.storage.db, email, tenant, role);
  return user.id;
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
