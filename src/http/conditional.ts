import { ApiError, validationFailed } from '../core/errors.ts';

/**
 * Conditional writes (RFC 9110 §13; docs/api.md#conditional-requests): `If-None-Match: *` creates only, `If-Match`
 * refuses a write to anything but the version the caller read. An object's ETag names its version and its creation, so
 * an object deleted and created again never has the ETag of the one before.
 */
export interface Versioned {
  version: number;
  created_at: string;
}

/** The strong ETag of a version of an object: `"3.mi2k0pqz"` (version 3 of the object created at that time). */
export function etagOf(object: Versioned): string {
  return `"${object.version}.${Date.parse(object.created_at).toString(36)}"`;
}

/** A header's entity tags: `*`, or the tags listed (each `"…"` or `W/"…"`). */
type TagList = '*' | string[];

/** The longest If-Match / If-None-Match read; longer is refused (docs/limits.md). */
const maxTags = 100;
const tagPattern = /^\s*(W\/)?"[\x21\x23-\x7e\x80-\xff]*"\s*$/;

function tagsOf(header: string, name: string): TagList {
  if (header.trim() === '*') return '*';
  const tags = header.split(',');
  if (tags.length > maxTags || !tags.every((tag) => tagPattern.test(tag))) {
    throw validationFailed(
      [{ path: name, message: `must be * or a list of at most ${maxTags} entity tags such as "3.mi2k0pqz"` }],
      `${name} must be * or a list of entity tags, as the ETag header gives them.`,
    );
  }
  return tags.map((tag) => tag.trim());
}

const opaque = (tag: string) => tag.replace(/^W\//, '');

/**
 * Checks a write's preconditions against the object as it is now (`current`, undefined when there is none), in RFC
 * 9110's order: `If-Match` (strong comparison; `*` needs an object), then `If-None-Match` (weak comparison; `*` needs
 * none). Throws `412 precondition_failed` when one fails; nothing is written then.
 */
export function checkPreconditions(
  headers: { 'if-match'?: string | string[]; 'if-none-match'?: string | string[] },
  current: Versioned | undefined,
): void {
  const etag = current && etagOf(current);
  const ifMatch = joined(headers['if-match']);
  if (ifMatch !== undefined) {
    const tags = tagsOf(ifMatch, 'If-Match');
    const matches = tags === '*' ? etag !== undefined : etag !== undefined && tags.includes(etag);
    if (!matches) {
      throw new ApiError(
        'precondition_failed',
        etag === undefined
          ? 'If-Match names a version, but the object does not exist (any more); nothing was changed.'
          : `If-Match does not name the current version (${etag}): the object was changed since it was read; nothing was changed.`,
        { header: 'If-Match', ...(etag && { etag }) },
      );
    }
  }
  const ifNoneMatch = joined(headers['if-none-match']);
  if (ifNoneMatch !== undefined && etag !== undefined) {
    const tags = tagsOf(ifNoneMatch, 'If-None-Match');
    if (tags === '*' || tags.some((tag) => opaque(tag) === etag)) {
      throw new ApiError(
        'precondition_failed',
        tags === '*'
          ? 'It already exists and If-None-Match: * creates only; nothing was changed.'
          : `If-None-Match names the current version (${etag}); nothing was changed.`,
        { header: 'If-None-Match', etag },
      );
    }
  } else if (ifNoneMatch !== undefined) {
    tagsOf(ifNoneMatch, 'If-None-Match');
  }
}

/** A header sent several times is one list (RFC 9110 §5.3). */
function joined(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value.join(',') : value;
}
