import type { CredentialScheme } from './scheme.ts';

/**
 * OAuth2 client credentials (RFC 6749 §4.4): an access token got from `token_url` with the client's id and secret, sent
 * as `Authorization: Bearer <access token>`. It has no static header: the token is fetched, kept and renewed by an
 * OAuth2ClientCredentials (oauth2.ts) per integration, which upstream-credentials.ts asks on every request.
 */
export const oauth2Scheme: CredentialScheme = {
  type: 'oauth2_client_credentials',
  properties: {
    token_url: { type: 'string', maxLength: 2048, pattern: '^[Hh][Tt][Tt][Pp][Ss]?://[^\\s]+$' },
    client_id: { type: 'string', minLength: 1, maxLength: 1024, pattern: '^[^\\u0000-\\u001f\\u007f]*$' },
    client_secret: { type: 'string', minLength: 1, maxLength: 4096, pattern: '^[^\\u0000-\\u001f\\u007f]*$' },
    scope: {
      type: 'string',
      minLength: 1,
      maxLength: 2048,
      pattern: '^[\\x21\\x23-\\x5b\\x5d-\\x7e]+( [\\x21\\x23-\\x5b\\x5d-\\x7e]+)*$',
    },
    audience: { type: 'string', minLength: 1, maxLength: 2048, pattern: '^[^\\u0000-\\u001f\\u007f]*$' },
    client_authentication: { type: 'string', enum: ['client_secret_basic', 'client_secret_post'] },
  },
  required: ['token_url', 'client_id', 'client_secret'],
  secretFields: ['client_secret'],
  headers: () => ({}),
};
