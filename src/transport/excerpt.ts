/** How much of an upstream body an error shows (docs/errors.md#upstream_http_error: `body_excerpt` ≤ 1 KiB). */
export const bodyExcerptBytes = 1024;

/**
 * At most `maxBytes` bytes of the body as text, cut on a UTF-8 character boundary.
 *
 * @example bodyExcerpt(Buffer.from('x'.repeat(5000))).length // 1024
 */
export function bodyExcerpt(body: Buffer, maxBytes: number = bodyExcerptBytes): string {
  let end = Math.min(body.length, maxBytes);
  // Step back over continuation bytes (10xxxxxx) so a multi-byte character is not split.
  while (end > 0 && end < body.length && (body[end] & 0xc0) === 0x80) end--;
  let text = body.subarray(0, end).toString('utf8');
  // Bytes that are not UTF-8 decode to U+FFFD (3 bytes each): trim until the text fits again.
  while (Buffer.byteLength(text) > maxBytes) text = text.slice(0, -1);
  return /[\ud800-\udbff]$/.test(text) ? text.slice(0, -1) : text;
}
