import { isJsonObject } from '../core/json-object.ts';
import { RawJson } from '../core/raw-json.ts';
import type { SecretMatcher } from './secret-matcher.ts';

/** Fields holding upstream text cut at a length: a cut may leave the start of a secret at their end. */
const cutFields = new Set(['body_excerpt', 'reason']);

/**
 * A reply with every form of each secret (secret-forms.ts: the secret in any case or spread out, URL-, JSON- or
 * XML-encoded, in base64) replaced by `[REDACTED]` wherever upstream text can be (`data`, `errors`, `error.message`,
 * `error.details`, in string values and keys alike), and its serialized text. An upstream that echoes the token it was
 * sent (in an error body, a fault, a GraphQL error, its data), as it was sent or transformed, must not show it to a
 * caller who may only execute. Excerpts cut at a length (`body_excerpt`, `reason`, in a failure or a batch entry)
 * also lose a start of a form (4 characters or more) that ends them. The envelope's own fields (`success`,
 * `error.code`, `request_id`) are ours and left as they are. The text is searched first, so a reply that holds no
 * secret and no excerpt, the common case, is serialized once and walked never.
 *
 * @example redactReply({ success: false, error: { code: 'x', message: 'bad token S3CR3T-T0KEN' } }, new SecretMatcher(['s3cr3t-t0ken'])).value.error.message
 * // 'bad token [REDACTED]'
 */
export function redactReply<T extends object>(reply: T, secrets: SecretMatcher): { value: T; text: string } {
  const text = JSON.stringify(reply);
  if (secrets.empty) return { value: reply, text };
  const excerpted = [...cutFields].some((field) => text.includes(`"${field}"`));
  if (!excerpted && !secrets.mayShowIn(text)) return { value: reply, text };

  const value = { ...reply } as Record<string, unknown>;
  for (const field of ['data', 'errors'] as const) {
    if (field in value) value[field] = redactValue(value[field], secrets);
  }
  const error = value.error;
  if (isJsonObject(error)) {
    const { message, details, ...rest } = error;
    value.error = {
      ...rest,
      ...(message !== undefined && { message: redactValue(message, secrets) }),
      ...(details !== undefined && { details: redactValue(details, secrets) }),
    };
  }
  return { value: value as T, text: JSON.stringify(value) };
}

/** `text` with each secret's forms replaced; with `cutTail`, also a start of one that ends the text (an excerpt's cut). */
function redactString(text: string, secrets: SecretMatcher, cutTail = false): string {
  const result = secrets.redact(text);
  return cutTail ? secrets.redactCutTail(result) : result;
}

/**
 * Upstream answers are at most 256 levels deep (docs/limits.md#upstreams), so recursion is bounded. A RawJson was
 * redacted by the worker that wrote it, and is kept as it is.
 */
function redactValue(value: unknown, secrets: SecretMatcher, key?: string): unknown {
  if (typeof value === 'string') return redactString(value, secrets, key !== undefined && cutFields.has(key));
  if (Array.isArray(value)) return value.map((item) => redactValue(item, secrets));
  if (!isJsonObject(value) || value instanceof RawJson) return value;
  // Object.fromEntries defines own properties: a key named __proto__ stays a plain key.
  return Object.fromEntries(
    Object.entries(value).map(([name, item]) => [redactString(name, secrets), redactValue(item, secrets, name)]),
  );
}
