import secureJson from 'secure-json-parse';
import { ApiError, type ValidationIssue, validationFailed } from '../core/errors.ts';

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** A NUL or a lone surrogate: in a `u` regex a surrogate range matches only unpaired halves. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding the NUL is the point.
const forbiddenCharacter = /[\u0000\ud800-\udfff]/u;

interface Place {
  key: string | number;
  parent: Place | undefined;
}

function pathOf(place: Place | undefined): string {
  const segments: Array<string | number> = [];
  for (let at = place; at; at = at.parent) segments.push(at.key);
  return segments.length === 0 ? '(root)' : segments.reverse().join('.');
}

/**
 * Parses a JSON request body (docs/api.md#bodies, docs/limits.md#requests), refusing before anything recurses over it:
 * - bytes that are not UTF-8: `validation_failed` (strings must be valid Unicode);
 * - not JSON: `invalid_json`; `__proto__` and `constructor.prototype` keys: `invalid_json` (secure-json-parse);
 * - nesting deeper than `maxDepth` (the body itself is level 1): `validation_failed`, the issue at the deepest
 *   path kept (the first container past the limit);
 * - a string or key holding a NUL or a lone surrogate: `validation_failed` naming each (PostgreSQL cannot store
 *   a NUL, and neither database keeps a lone surrogate as sent: both would change the caller's data).
 * Both V8's JSON.parse and this walk are iterative, so no depth overflows the stack.
 *
 * @example parseJsonBody(Buffer.from('{"a":[1]}'), 64) // { a: [1] }
 * @throws ApiError `invalid_json` or `validation_failed`
 */
export function parseJsonBody(body: Buffer, maxDepth: number): unknown {
  let text: string;
  try {
    text = utf8.decode(body);
  } catch {
    // Decoding with replacement would change the caller's bytes (to U+FFFD) without a word.
    throw validationFailed([{ path: '(root)', message: 'the body is not valid UTF-8' }], 'The request body is not valid UTF-8.');
  }
  let value: unknown;
  try {
    value = secureJson.parse(text, undefined, { protoAction: 'error', constructorAction: 'error' });
  } catch {
    throw new ApiError('invalid_json');
  }
  const issues: ValidationIssue[] = [];
  const pending: Array<{ value: unknown; depth: number; place: Place | undefined }> = [{ value, depth: 1, place: undefined }];
  while (pending.length > 0) {
    const { value: node, depth, place } = pending.pop() as (typeof pending)[number];
    if (typeof node === 'string') {
      if (forbiddenCharacter.test(node)) issues.push({ path: pathOf(place), message: unicodeMessage });
      continue;
    }
    if (typeof node !== 'object' || node === null) continue;
    if (depth > maxDepth) {
      throw validationFailed(
        [{ path: pathOf(place), message: `is nested deeper than ${maxDepth} levels, the most a request body may be` }],
        `The request body is nested deeper than ${maxDepth} levels.`,
      );
    }
    if (Array.isArray(node)) {
      for (let i = node.length - 1; i >= 0; i--)
        pending.push({ value: node[i], depth: depth + 1, place: { key: i, parent: place } });
      continue;
    }
    const entries = Object.entries(node);
    for (let i = entries.length - 1; i >= 0; i--) {
      const [key, child] = entries[i];
      const childPlace = { key, parent: place };
      if (forbiddenCharacter.test(key)) issues.push({ path: pathOf(childPlace), message: `its name ${unicodeMessage}` });
      pending.push({ value: child, depth: depth + 1, place: childPlace });
    }
  }
  if (issues.length > 0) throw validationFailed(issues);
  return value;
}

const unicodeMessage = 'holds a NUL (\\u0000) or a lone surrogate; strings must be valid Unicode without NUL';
