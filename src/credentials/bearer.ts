import type { CredentialScheme } from './scheme.ts';

/** A bearer token (RFC 6750): `Authorization: Bearer <token>`; visible ASCII only, as the RFC's b64token allows. */
export const bearerScheme: CredentialScheme = {
  type: 'bearer',
  properties: { token: { type: 'string', minLength: 1, maxLength: 16_384, pattern: '^[\\x21-\\x7e]+$' } },
  required: ['token'],
  secretFields: ['token'],
  headers: (auth) => ({ authorization: `Bearer ${String(auth.token)}` }),
};
