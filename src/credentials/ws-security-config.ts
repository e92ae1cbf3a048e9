import { describeTls } from './tls.ts';

/**
 * `config.ws_security` as JSON schema (SOAP only; docs/security.md#ws-security): the parts of a `wsse:Security` header
 * block. What a schema cannot say (the PEMs readable, the key matching its certificate and its algorithm, `sign`
 * naming only configured parts) is ws-security-problems.ts', at PUT/PATCH.
 */
export const wsSecuritySchema = {
  type: ['object', 'null'],
  additionalProperties: false,
  properties: {
    username_token: {
      type: ['object', 'null'],
      additionalProperties: false,
      required: ['username'],
      properties: {
        username: { type: 'string', minLength: 1, maxLength: 1024 },
        password: { type: 'string', minLength: 1, maxLength: 4096 },
        password_type: { type: 'string', enum: ['text', 'digest'] },
        nonce: { type: 'boolean' },
        created: { type: 'boolean' },
      },
    },
    timestamp: {
      type: ['object', 'null'],
      additionalProperties: false,
      properties: { ttl_seconds: { type: 'integer', minimum: 1, maximum: 86_400 } },
    },
    signature: {
      type: ['object', 'null'],
      additionalProperties: false,
      required: ['certificate'],
      properties: {
        certificate: { type: 'string', minLength: 1, maxLength: 262_144 },
        private_key: { type: 'string', minLength: 1, maxLength: 65_536 },
        private_key_password: { type: 'string', minLength: 1, maxLength: 1024 },
        signature_algorithm: { type: 'string', enum: ['rsa-sha256', 'rsa-sha1', 'ecdsa-sha256'] },
        digest_algorithm: { type: 'string', enum: ['sha256', 'sha1'] },
        sign: {
          type: 'array',
          minItems: 1,
          maxItems: 3,
          uniqueItems: true,
          items: { type: 'string', enum: ['body', 'timestamp', 'username_token'] },
        },
        key_reference: { type: 'string', enum: ['binary_security_token', 'issuer_serial', 'subject_key_identifier'] },
      },
    },
  },
} as const;

/** The secrets of `config.ws_security`: the UsernameToken's password, the signing key and its password. */
export const wsSecuritySecretPaths: readonly string[] = [
  'ws_security.username_token.password',
  'ws_security.signature.private_key',
  'ws_security.signature.private_key_password',
];

/** The signing certificate as answers show it: its facts (those `config.tls` shows), never its PEM. */
export function signatureCertificateView(pem: unknown): unknown {
  return typeof pem === 'string' ? (describeTls({ client_certificate: pem }).client_certificate ?? null) : pem;
}
