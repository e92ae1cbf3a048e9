import type { ValidationIssue } from '../core/errors.ts';

/**
 * One way of signing in to an upstream (`config.auth.type`, docs/security.md#upstream-credentials): the fields it
 * takes, which of them are secrets, and what it adds to a request. Each scheme is a file of its own in this folder,
 * registered once in schemes.ts; adding one touches its file, its fields and that registration.
 */
export interface CredentialScheme {
  /** `config.auth.type` */
  readonly type: string;
  /** JSON-schema properties of its fields beside `type` (secrets included). */
  readonly properties: Readonly<Record<string, object>>;
  readonly required: readonly string[];
  /** Fields that are secrets: stored encrypted, never shown (`<field>_set`), redacted, sent again on a move. */
  readonly secretFields: readonly string[];
  /** What a schema cannot say about the fields (a header name the transport owns), paths under `config.auth.`. */
  problems?(auth: Readonly<Record<string, unknown>>): ValidationIssue[];
  /** The headers a request carries, from the fields with their secrets decrypted. */
  headers(auth: Readonly<Record<string, unknown>>): Record<string, string>;
}

/** No CR, LF or NUL: a value that cannot split a header block. */
export const headerValue = { type: 'string', minLength: 1, maxLength: 16_384, pattern: '^[^\\r\\n\\u0000]*$' } as const;
