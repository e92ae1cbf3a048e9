/**
 * Whether a value is an object with named members (not null, not an array): a JSON object as parsed, an element's
 * content in a call's params, a parsed element with attributes or children. One check for all of them.
 */
export function isJsonObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
