import { validationFailed } from '../../errors.ts';
import { hasVariable, type ParsedOperation } from './document.ts';
import { extractRecords, type PageInfo } from './records.ts';
import type { GraphqlAnswer } from './response.ts';

/** The cursor variable when the request names none (docs/execute.md#pagination). */
export const defaultCursorVariable = 'after';
export const defaultMaxPages = 10;
export const maxMaxPages = 100;

/** Why the loop ended: the upstream said so, the cap was reached, or the upstream misbehaved. */
export type PaginationStop = 'last_page' | 'no_page_info' | 'no_cursor' | 'repeated_cursor' | 'page_cap';

export interface PaginatedRecords {
  records: unknown[];
  /** The first page's `totalCount`, else the number of records over all pages. */
  totalSize: number;
  pages: number;
  /** Partial-success `errors` of every page, in page order. */
  errors: unknown[];
  /** The last page's data. */
  lastData: Record<string, unknown>;
  stoppedBy: PaginationStop;
}

/**
 * Follows Relay `pageInfo { hasNextPage endCursor }` (docs/execute.md#pagination), concatenating the
 * records of every page. `fetchPage(null)` asks for the first page (the caller's variables as
 * given); `fetchPage(cursor)` for the page after `cursor`. It stops at the last page, at
 * `maxPages`, and also when a page has no `pageInfo`, no `endCursor`, or a cursor already
 * followed (a broken upstream must not loop forever). An error from any page (e.g.
 * `graphql_errors`) ends the whole call: records from earlier pages are not returned half-way.
 *
 * @example await paginate((after) => fetchUsers({ after }), { maxPages: 10 })
 */
export async function paginate(
  fetchPage: (after: string | null) => Promise<GraphqlAnswer>,
  options: { recordsPath?: string; maxPages: number },
): Promise<PaginatedRecords> {
  const { maxPages, recordsPath } = options;
  if (!Number.isSafeInteger(maxPages) || maxPages < 1) {
    throw new RangeError(`maxPages must be a positive integer, not ${maxPages}.`);
  }
  const records: unknown[] = [];
  const errors: unknown[] = [];
  const followed = new Set<string>();
  let totalCount: number | undefined;
  let after: string | null = null;
  for (let pages = 1; ; pages++) {
    const page = await fetchPage(after);
    const extracted = extractRecords(page.data, recordsPath);
    // One by one: spreading a page of 150,000 records into push() overflows the call stack.
    for (const record of extracted.records) records.push(record);
    if (page.errors !== undefined) for (const error of page.errors) errors.push(error);
    if (pages === 1) totalCount = extracted.totalCount;
    const stoppedBy = stopReason(extracted.pageInfo, followed, pages, maxPages);
    if (stoppedBy !== undefined) {
      return { records, totalSize: totalCount ?? records.length, pages, errors, lastData: page.data, stoppedBy };
    }
    after = extracted.pageInfo!.endCursor!;
    followed.add(after);
  }
}

/**
 * Pagination needs the query to declare its cursor variable; checkable before any request.
 *
 * @throws ApiError `validation_failed` on `query` when `$cursorVariable` is not declared.
 */
export function assertCursorVariableDeclared(
  operation: Pick<ParsedOperation, 'variableNames'>,
  cursorVariable: string = defaultCursorVariable,
): void {
  if (hasVariable(operation, cursorVariable)) return;
  throw validationFailed([
    {
      path: 'query',
      message: `paginate needs the query to declare $${cursorVariable}, e.g. query ($${cursorVariable}: String) { items(first: 50, ${cursorVariable}: $${cursorVariable}) { … } }.`,
    },
  ]);
}

function stopReason(
  pageInfo: PageInfo | undefined,
  followed: Set<string>,
  pages: number,
  maxPages: number,
): PaginationStop | undefined {
  if (pageInfo === undefined) return 'no_page_info';
  if (!pageInfo.hasNextPage) return 'last_page';
  if (pageInfo.endCursor === null) return 'no_cursor';
  if (followed.has(pageInfo.endCursor)) return 'repeated_cursor';
  if (pages >= maxPages) return 'page_cap';
  return undefined;
}
