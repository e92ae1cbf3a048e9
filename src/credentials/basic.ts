import { type CredentialScheme, headerValue } from './scheme.ts';

/**
 * HTTP Basic (RFC 7617): `Authorization: Basic base64(username ":" password)`, both UTF-8 (the `charset="UTF-8"` the
 * RFC lets a server ask for, and what servers take in practice). A colon cannot be in the username: the server would
 * split there.
 */
export const basicScheme: CredentialScheme = {
  type: 'basic',
  properties: {
    username: { type: 'string', minLength: 1, maxLength: 1024, pattern: '^[^:\\u0000-\\u001f\\u007f]*$' },
    password: { ...headerValue, maxLength: 4096 },
  },
  required: ['username', 'password'],
  secretFields: ['password'],
  headers: (auth) => ({
    authorization: `Basic ${Buffer.from(`${String(auth.username)}:${String(auth.password)}`, 'utf8').toString('base64')}`,
  }),
};
