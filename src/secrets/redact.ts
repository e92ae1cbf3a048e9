/** What a secret becomes wherever upstream text would show it (API.md section 4). */
export const redactedMark = '[REDACTED]';

/**
 * A reply with every occurrence of each secret replaced by `[REDACTED]` wherever upstream text can be (`data`,
 * `errors`, `error.message`, `error.details`, in string values and keys alike), and its serialized text. An upstream
 * that echoes the token it was sent (in an error body, a fault, a GraphQL error, its data) must not show it to a
 * caller who may only execute. The envelope's own fields (`success`, `error.code`, `request_id`) are ours and left
 * as they are. The text is searched first, so a reply that holds no secret, the common case, is serialized once
 * and walked never.
 *
 * @example redactReply({ success: false, error: { code: 'x', message: 'bad token s3cr3t' } }, ['s3cr3t']).value.error.message
 * // 'bad token [REDACTED]'
 */
export function redactReply<T extends object>(reply: T, secrets: readonly string[]): { value: T; text: string } {
  const text = JSON.stringify(reply);
  // Longest first, so that a secret holding another one is replaced whole.
  const present = secrets
    .filter((secret) => secret !== '' && text.includes(JSON.stringify(secret).slice(1, -1)))
    .sort((a, b) => b.length - a.length);
  if (present.length === 0) return { value: reply, text };
  const value = { ...reply } as Record<string, unknown>;
  for (const field of ['data', 'errors'] as const) {
    if (field in value) value[field] = redactValue(value[field], present);
  }
  if (typeof value.error === 'object' && value.error !== null) {
    const { message, details, ...rest } = value.error as Record<string, unknown>;
    value.error = {
      ...rest,
      ...(message !== undefined && { message: redactValue(message, present) }),
      ...(details !== undefined && { details: redactValue(details, present) }),
    };
  }
  return { value: value as T, text: JSON.stringify(value) };
}

function redactString(text: string, secrets: readonly string[]): string {
  let result = text;
  for (const secret of secrets) if (result.includes(secret)) result = result.split(secret).join(redactedMark);
  return result;
}

/** Upstream answers are at most 256 levels deep (API.md section 10), so recursion is bounded. */
function redactValue(value: unknown, secrets: readonly string[]): unknown {
  if (typeof value === 'string') return redactString(value, secrets);
  if (Array.isArray(value)) return value.map((item) => redactValue(item, secrets));
  if (typeof value !== 'object' || value === null) return value;
  // Object.fromEntries defines own properties: a key named __proto__ stays a plain key.
  return Object.fromEntries(Object.entries(value).map(([key, item]) => [redactString(key, secrets), redactValue(item, secrets)]));
}
