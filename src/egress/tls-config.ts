import { describeTls, type TlsConfig, type TlsView } from './tls.ts';

const pem = (maxLength: number) => ({ type: ['string', 'null'], minLength: 1, maxLength }) as const;

/**
 * `config.tls` as JSON schema, the same for both connectors (docs/security.md#tls): the PEMs as text (tls.ts reads
 * them at PUT/PATCH, where an unreadable one, a key that does not match, or an expired client certificate is a 400),
 * the SNI name and the lowest version. Verification has no switch: it cannot be turned off.
 */
export const tlsSchema = {
  type: ['object', 'null'],
  additionalProperties: false,
  // Each field may be null: a PATCH removes it (a secret: clears it).
  properties: {
    ca: pem(1_048_576),
    client_certificate: pem(262_144),
    client_key: pem(65_536),
    client_key_password: { type: ['string', 'null'], minLength: 1, maxLength: 1024 },
    server_name: { type: ['string', 'null'], minLength: 1, maxLength: 253 },
    min_version: { type: ['string', 'null'], enum: ['TLSv1.2', 'TLSv1.3', null] },
  },
} as const;

/** The secrets of `config.tls`: the client key and its password. */
export const tlsSecretPaths: readonly string[] = ['tls.client_key', 'tls.client_key_password'];

/**
 * `config.tls` as answers show it (tls.ts): each certificate's facts instead of its PEM, and whether the key and its
 * password are stored. `stored` tells which secrets are.
 */
export function tlsView(tls: Readonly<Record<string, unknown>>, stored: (path: string) => boolean): TlsView {
  // Presence is all describeTls reads of the secrets: a marker stands in for each stored one.
  return describeTls({
    ...(tls as TlsConfig),
    client_key: stored('tls.client_key') ? 'stored' : undefined,
    client_key_password: stored('tls.client_key_password') ? 'stored' : undefined,
  });
}
