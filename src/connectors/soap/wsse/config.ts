import { describeTls } from '../../../egress/tls.ts';
import type { DigestAlgorithmName, KeyReference, SignatureAlgorithmName } from './algorithms.ts';

/**
 * `config.ws_security` (issue 19), in its own snake_case so that the stored config is passed as it is. Each part
 * is optional; together they make one `wsse:Security` header block (OASIS WS-Security 1.0/1.1).
 */
export interface WsSecurityOptions {
  /** UsernameToken Profile 1.1. A fresh nonce and the current time on every request. */
  username_token?: {
    username: string;
    /** A secret. */
    password: string;
    /** `digest` sends Base64(SHA-1(nonce + created + password)) (§3.1); default `text`. */
    password_type?: 'text' | 'digest';
    /** Send a wsse:Nonce; default true with `digest`, false with `text`. */
    nonce?: boolean;
    /** Send a wsu:Created; default true with `digest`, false with `text`. */
    created?: boolean;
  };
  /** A wsu:Timestamp: Created now, Expires `ttl_seconds` later (default 300). */
  timestamp?: { ttl_seconds?: number };
  /** An XML-DSig Signature with exclusive C14N over the parts in `sign`. */
  signature?: {
    /** PEM X.509. */
    certificate: string;
    /** PEM, RSA or EC, possibly encrypted (PKCS#8 or traditional). A secret. */
    private_key: string;
    /** A secret. */
    private_key_password?: string;
    /** Default `rsa-sha256`; `ecdsa-sha256` needs an EC key, the others an RSA key. */
    signature_algorithm?: SignatureAlgorithmName;
    /** Default `sha256`. */
    digest_algorithm?: DigestAlgorithmName;
    /**
     * The parts signed, each by its own wsu:Id. Default: the body, and the timestamp when there is one. Naming
     * `timestamp` or `username_token` needs that part configured.
     */
    sign?: ('body' | 'timestamp' | 'username_token')[];
    /** How KeyInfo points at the certificate; default `binary_security_token` (the certificate goes along). */
    key_reference?: KeyReference;
  };
}

/**
 * `config.ws_security` as JSON schema (SOAP only; docs/security.md#ws-security): the parts of a `wsse:Security` header
 * block. What a schema cannot say (the PEMs readable, the key matching its certificate and its algorithm, `sign`
 * naming only configured parts) is problems.ts', at PUT/PATCH.
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
