import { RawJson } from '../transport/raw-json.ts';

/** What a secret becomes wherever upstream text would show it (docs/security.md#redaction). */
export const redactedMark = '[REDACTED]';

/** The shortest start of a secret that counts as showing it, when a cut leaves one at the end of a text. */
const minimumShownStart = 4;

/** Fields holding upstream text cut at a length: a cut may leave the start of a secret at their end. */
const cutFields = new Set(['body_excerpt', 'reason']);

/**
 * A reply with every occurrence of each secret replaced by `[REDACTED]` wherever upstream text can be (`data`,
 * `errors`, `error.message`, `error.details`, in string values and keys alike), and its serialized text. An upstream
 * that echoes the token it was sent (in an error body, a fault, a GraphQL error, its data) must not show it to a
 * caller who may only execute. Excerpts cut at a length (`body_excerpt`, `reason`, in a failure or a batch entry)
 * also lose a start of a secret (4 characters or more) that ends them. The envelope's own fields (`success`,
 * `error.code`, `request_id`) are ours and left as they are. The text is searched first, so a reply that holds no
 * secret and no excerpt, the common case, is serialized once and walked never.
 *
 * @example redactReply({ success: false, error: { code: 'x', message: 'bad token s3cr3t' } }, ['s3cr3t']).value.error.message
 * // 'bad token [REDACTED]'
 */
export function redactReply<T extends object>(reply: T, secrets: readonly string[]): { value: T; text: string } {
  const text = JSON.stringify(reply);
  // Longest first, so that a secret holding another one is replaced whole.
  const known = secrets.filter((secret) => secret !== '').sort((a, b) => b.length - a.length);
  const shown = known.some((secret) => text.includes(JSON.stringify(secret).slice(1, -1)));
  const excerpted = known.length > 0 && [...cutFields].some((field) => text.includes(`"${field}"`));
  if (!shown && !excerpted) return { value: reply, text };

  const value = { ...reply } as Record<string, unknown>;
  for (const field of ['data', 'errors'] as const) {
    if (field in value) value[field] = redactValue(value[field], known);
  }
  const error = value.error;
  if (isRecord(error)) {
    const { message, details, ...rest } = error;
    value.error = {
      ...rest,
      ...(message !== undefined && { message: redactValue(message, known) }),
      ...(details !== undefined && { details: redactValue(details, known) }),
    };
  }
  return { value: value as T, text: JSON.stringify(value) };
}

/** `text` with each secret replaced; with `cutTail`, also a start of one that ends the text (an excerpt's cut). */
function redactString(text: string, secrets: readonly string[], cutTail = false): string {
  let result = text;
  for (const secret of secrets) if (result.includes(secret)) result = result.split(secret).join(redactedMark);
  if (!cutTail) return result;
  for (const secret of secrets) {
    for (let length = Math.min(secret.length - 1, result.length); length >= minimumShownStart; length--) {
      if (result.endsWith(secret.slice(0, length))) return result.slice(0, -length) + redactedMark;
    }
  }
  return result;
}

/**
 * Upstream answers are at most 256 levels deep (docs/limits.md#upstreams), so recursion is bounded. A RawJson was
 * redacted by the worker that wrote it, and is kept as it is.
 */
function redactValue(value: unknown, secrets: readonly string[], key?: string): unknown {
  if (typeof value === 'string') return redactString(value, secrets, key !== undefined && cutFields.has(key));
  if (Array.isArray(value)) return value.map((item) => redactValue(item, secrets));
  if (!isRecord(value) || value instanceof RawJson) return value;
  // Object.fromEntries defines own properties: a key named __proto__ stays a plain key.
  return Object.fromEntries(
    Object.entries(value).map(([name, item]) => [redactString(name, secrets), redactValue(item, secrets, name)]),
  );
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
