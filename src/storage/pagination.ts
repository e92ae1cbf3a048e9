import { ApiError } from '../core/errors.ts';

/** Opaque cursors: the last id of the page, base64url-encoded. */
export function encodeCursor(lastId: string): string {
  return Buffer.from(lastId, 'utf8').toString('base64url');
}

export function decodeCursor(cursor: string | undefined): string | undefined {
  if (cursor === undefined || cursor === '') return undefined;
  const decoded = Buffer.from(cursor, 'base64url').toString('utf8');
  // No id holds a control character (ids are checked against that), and PostgreSQL cannot even compare a NUL.
  // biome-ignore lint/suspicious/noControlCharactersInRegex: refusing control characters is the point.
  if (decoded === '' || encodeCursor(decoded) !== cursor || /[\u0000-\u001f\u007f]/.test(decoded)) {
    throw new ApiError('validation_failed', 'cursor: not a cursor this API returned.', {
      issues: [{ path: 'cursor', message: 'not a cursor this API returned' }],
    });
  }
  return decoded;
}

export interface Page<T> {
  items: T[];
  nextCursor: string | null;
}

/** Given `limit + 1` rows, returns `limit` of them and the cursor of the next page, if any. */
export function toPage<T>(rows: T[], limit: number, idOf: (row: T) => string): Page<T> {
  const items = rows.slice(0, limit);
  const more = rows.length > limit;
  return { items, nextCursor: more ? encodeCursor(idOf(items[items.length - 1])) : null };
}
