import type { ValidationIssue } from '../core/errors.ts';
import { basicScheme } from './basic.ts';
import { bearerScheme } from './bearer.ts';
import { headerScheme } from './header.ts';
import { oauth2Scheme } from './oauth2-scheme.ts';
import type { CredentialScheme } from './scheme.ts';

/** Every scheme of `config.auth`, by its `type`: the one registration a new scheme adds. */
export const credentialSchemes: ReadonlyMap<string, CredentialScheme> = new Map(
  [basicScheme, bearerScheme, headerScheme, oauth2Scheme].map((scheme) => [scheme.type, scheme]),
);

/**
 * `config.auth` as JSON schema, the same for every connector: an object with a known `type` and only fields some
 * scheme has; which fields a type requires and allows is `authProblems`' to say, with messages naming the type.
 */
export const authSchema = {
  type: ['object', 'null'],
  required: ['type'],
  additionalProperties: false,
  properties: {
    type: { type: 'string', enum: [...credentialSchemes.keys()] },
    // Each field may be null: a PATCH removes it (a required one is then missing, which authProblems says).
    ...Object.fromEntries(
      [...credentialSchemes.values()].flatMap((scheme) =>
        Object.entries(scheme.properties).map(([field, schema]) => [field, nullable(schema)]),
      ),
    ),
  },
} as const;

/** A field's schema that also takes null (its enum too, when it has one). */
export function nullable(schema: object): object {
  const { type, enum: values, ...rest } = schema as { type?: string | string[]; enum?: unknown[] };
  const types = type === undefined ? undefined : [...(Array.isArray(type) ? type : [type]), 'null'];
  return { ...rest, ...(types && { type: types }), ...(values && { enum: [...values, null] }) };
}

/** Every `auth.<field>` that some scheme keeps secret. */
export const authSecretPaths: readonly string[] = [
  ...new Set([...credentialSchemes.values()].flatMap((scheme) => scheme.secretFields.map((field) => `auth.${field}`))),
];

/**
 * What `config.auth` (schema-valid, secrets as written or `_set` when stored) lacks or has too much of for its type.
 * `stored` lists the secret fields kept from before, which count as given.
 */
export function authProblems(auth: Readonly<Record<string, unknown>>, stored: ReadonlySet<string>): ValidationIssue[] {
  const scheme = credentialSchemes.get(String(auth.type));
  if (!scheme) return [];
  const issues: ValidationIssue[] = [];
  for (const field of scheme.required) {
    if (auth[field] === undefined && !stored.has(field)) {
      issues.push({ path: `config.auth.${field}`, message: `is required for auth type ${scheme.type}` });
    }
  }
  for (const field of Object.keys(auth)) {
    if (field !== 'type' && !Object.hasOwn(scheme.properties, field)) {
      issues.push({ path: `config.auth.${field}`, message: `is not a field of auth type ${scheme.type}` });
    }
  }
  return [...issues, ...(scheme.problems?.(auth) ?? [])];
}

/** The headers `auth` (secrets decrypted) adds to a request; none without one. */
export function authHeaders(auth: unknown): Record<string, string> {
  if (typeof auth !== 'object' || auth === null) return {};
  const fields = auth as Record<string, unknown>;
  const scheme = credentialSchemes.get(String(fields.type));
  return scheme ? scheme.headers(fields) : {};
}
