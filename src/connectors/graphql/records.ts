import { validationFailed } from '../../core/errors.ts';
import { isJsonObject } from '../../core/json-object.ts';

export interface PageInfo {
  hasNextPage: boolean;
  endCursor: string | null;
}

export interface ExtractedRecords {
  records: unknown[];
  /** The connection's `totalCount` (or `total_count`) when it has one, else the number of records. */
  totalSize: number;
  /** The connection's own count, when it declared one (pagination keeps the first page's). */
  totalCount?: number;
  /** A Relay connection's `pageInfo`, when it was selected with a boolean `hasNextPage`. */
  pageInfo?: PageInfo;
}

/** Records a worker thread has read and serialized: their JSON text (an array), and how many there are. */
export interface RecordsText {
  text: Buffer;
  count: number;
}

/** One answer's records as a receive uses them, as objects (read here) or as text (read by a worker thread). */
export interface RecordsPage {
  records: unknown[] | RecordsText;
  totalSize: number;
  totalCount?: number;
  pageInfo?: PageInfo;
  /** Partial-success `errors` that came with the page. */
  errors?: unknown[];
}

/** How many records a page holds. */
export function recordCount(records: RecordsPage['records']): number {
  return Array.isArray(records) ? records.length : records.count;
}

/**
 * The page of records of an answer read on this thread.
 *
 * @example pageOfAnswer({ data: { users: [{ id: '1' }] } }).records // [{ id: '1' }]
 */
export function pageOfAnswer(answer: { data: unknown; errors?: unknown[] }, recordsPath?: string): RecordsPage {
  const extracted = extractRecords(answer.data, recordsPath);
  return answer.errors === undefined ? extracted : { ...extracted, errors: answer.errors };
}

/**
 * The records of a `receive` answer (docs/execute.md#graphql-receive). The value they come from is the one at
 * `recordsPath` (a dot path into `data`) when given, otherwise the single root field's value;
 * with several root fields, the whole `data` object is the one record. From that value: an
 * array → itself; an object with an `edges` array → each edge's `node`; an object with a
 * `nodes` array → `nodes`; null → `[]`; anything else → `[value]`.
 *
 * Decisions where the contract is silent:
 * - A `recordsPath` that reaches null part-way (`viewer.repos` with `viewer: null`) gives `[]`,
 *   as null does. One that names a key the answer does not have, or walks into a scalar, is
 *   `validation_failed` on `records_path`: GraphQL always answers every selected field, so a
 *   missing key means the path does not match the query, and `[]` would hide the mistake.
 * - A numeric segment indexes an array (`items.0`); past the end counts as null.
 * - Several root fields: the `data` object itself is the record (the edges/nodes rules are not
 *   applied to the root). No root field at all (every field skipped) gives `[]`.
 * - `totalCount` and `pageInfo` are read only from a connection (an object with `edges` or
 *   `nodes`); `totalCount` counts when it is a non-negative integer. A null edge gives a null record.
 *
 * @example extractRecords({ users: { edges: [{ node: { id: '1' } }], totalCount: 9 } }) // { records: [{ id: '1' }], totalSize: 9, totalCount: 9 }
 * @throws ApiError `validation_failed` on `records_path` when the path is malformed or does not match the answer.
 */
export function extractRecords(data: unknown, recordsPath?: string): ExtractedRecords {
  if (recordsPath !== undefined) return recordsFrom(valueAtPath(data, parseRecordsPath(recordsPath)));
  if (!isJsonObject(data)) return recordsFrom(data);
  const rootFields = Object.keys(data);
  if (rootFields.length > 1) return { records: [data], totalSize: 1 };
  return recordsFrom(rootFields.length === 1 ? data[rootFields[0]] : null);
}

/**
 * The number of root fields with a non-null value: `send`'s `message_count`.
 *
 * @example countNonNullRootFields({ a: { id: 1 }, b: null }) // 1
 */
export function countNonNullRootFields(data: unknown): number {
  if (!isJsonObject(data)) return 0;
  return Object.values(data).filter((value) => value !== null && value !== undefined).length;
}

/**
 * The segments of a `records_path`; checkable before the request goes out.
 *
 * @example parseRecordsPath('viewer.repositories') // ['viewer', 'repositories']
 * @throws ApiError `validation_failed` on `records_path` for an empty path or an empty segment.
 */
export function parseRecordsPath(recordsPath: string): string[] {
  const segments = recordsPath.split('.');
  if (segments.some((segment) => segment === '')) {
    throw invalidPath(`"${recordsPath}" is not a dot path (e.g. "viewer.repositories"); it has an empty segment.`);
  }
  return segments;
}

function valueAtPath(data: unknown, segments: string[]): unknown {
  let value = data;
  for (const [index, segment] of segments.entries()) {
    if (value === null || value === undefined) return null;
    const walked = segments.slice(0, index).join('.') || 'data';
    if (Array.isArray(value)) {
      if (!/^(0|[1-9]\d*)$/.test(segment)) {
        throw invalidPath(`"${walked}" is a list; the next segment must be an index, not "${segment}".`);
      }
      value = value[Number(segment)];
    } else if (isJsonObject(value)) {
      // Own keys only: `__proto__` or `constructor` must not reach the prototype.
      if (!Object.hasOwn(value, segment)) {
        throw invalidPath(`the response has no "${segment}" under "${walked}"; the path must follow the query's fields.`);
      }
      value = value[segment];
    } else {
      throw invalidPath(`"${walked}" is a ${typeof value}, so it has no "${segment}".`);
    }
  }
  return value;
}

function recordsFrom(value: unknown): ExtractedRecords {
  if (value === null || value === undefined) return { records: [], totalSize: 0 };
  if (Array.isArray(value)) return { records: value, totalSize: value.length };
  if (!isJsonObject(value)) return { records: [value], totalSize: 1 };
  let records: unknown[];
  if (Array.isArray(value.edges)) records = value.edges.map((edge) => (isJsonObject(edge) ? (edge.node ?? null) : null));
  else if (Array.isArray(value.nodes)) records = value.nodes;
  else return { records: [value], totalSize: 1 };
  const totalCount = countOf(value);
  const pageInfo = pageInfoOf(value.pageInfo);
  return {
    records,
    totalSize: totalCount ?? records.length,
    ...(totalCount === undefined ? {} : { totalCount }),
    ...(pageInfo === undefined ? {} : { pageInfo }),
  };
}

function countOf(connection: Record<string, unknown>): number | undefined {
  for (const key of ['totalCount', 'total_count']) {
    const count = connection[key];
    if (typeof count === 'number' && Number.isSafeInteger(count) && count >= 0) return count;
  }
  return undefined;
}

function pageInfoOf(value: unknown): PageInfo | undefined {
  if (!isJsonObject(value) || typeof value.hasNextPage !== 'boolean') return undefined;
  return { hasNextPage: value.hasNextPage, endCursor: typeof value.endCursor === 'string' ? value.endCursor : null };
}

function invalidPath(message: string) {
  return validationFailed([{ path: 'records_path', message }]);
}
