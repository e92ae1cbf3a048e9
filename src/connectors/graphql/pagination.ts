import { validationFailed } from '../../core/errors.ts';
import { type RawJson, rawJsonArray } from '../../core/raw-json.ts';
import { hasVariable, type ParsedOperation } from './document.ts';
import { type PageInfo, type RecordsPage, recordCount } from './records.ts';

/** The cursor variable when the request names none (docs/execute.md#pagination). */
export const defaultCursorVariable = 'after';
export const defaultMaxPages = 10;
export const maxMaxPages = 100;

/** Why the loop ended: the upstream said so, the cap was reached, or the upstream misbehaved. */
export type PaginationStop = 'last_page' | 'no_page_info' | 'no_cursor' | 'repeated_cursor' | 'page_cap';

export interface PaginatedRecords {
  /** The records of every page: objects, or JSON text when a page was read by a worker thread. */
  records: unknown[] | RawJson;
  count: number;
  /** The first page's `totalCount`, else the number of records over all pages. */
  totalSize: number;
  pages: number;
  /** Partial-success `errors` of every page, in page order. */
  errors: unknown[];
  stoppedBy: PaginationStop;
}

/** Records as JSON array members (`{…},{…}`, already redacted): how pages read here join pages read as text. */
export type MembersText = (records: unknown[]) => Buffer;

const plainMembers: MembersText = (records) => Buffer.from(JSON.stringify(records).slice(1, -1));

/** The pages' records as one array: objects when every page was read here, else one RawJson of them all. */
function joinPages(pages: RecordsPage['records'][], membersText: MembersText): unknown[] | RawJson {
  if (pages.every((page) => Array.isArray(page))) {
    const records: unknown[] = [];
    // One by one: spreading a page of 150,000 records into push() overflows the call stack.
    for (const page of pages) for (const record of page) records.push(record);
    return records;
  }
  return rawJsonArray(pages.map((page) => (Array.isArray(page) ? membersText(page) : page.text.subarray(1, -1))));
}

/**
 * Follows Relay `pageInfo { hasNextPage endCursor }` (docs/execute.md#pagination), concatenating the
 * records of every page. `fetchPage(null)` asks for the first page (the caller's variables as
 * given); `fetchPage(cursor)` for the page after `cursor`. It stops at the last page, at
 * `maxPages`, and also when a page has no `pageInfo`, no `endCursor`, or a cursor already
 * followed (a broken upstream must not loop forever). An error from any page (e.g.
 * `graphql_errors`) ends the whole call: records from earlier pages are not returned half-way.
 * Pages read by a worker thread come as text; when there is one, the pages read here join it as text too
 * (`membersText`, which must redact what it writes).
 *
 * @example await paginate(async (after) => pageOfAnswer(await fetchUsers({ after })), { maxPages: 10 })
 */
export async function paginate(
  fetchPage: (after: string | null) => Promise<RecordsPage>,
  options: { maxPages: number; membersText?: MembersText },
): Promise<PaginatedRecords> {
  const { maxPages } = options;
  if (!Number.isSafeInteger(maxPages) || maxPages < 1) {
    throw new RangeError(`maxPages must be a positive integer, not ${maxPages}.`);
  }
  const pageRecords: RecordsPage['records'][] = [];
  const errors: unknown[] = [];
  const followed = new Set<string>();
  let count = 0;
  let totalCount: number | undefined;
  let after: string | null = null;
  for (let pages = 1; ; pages++) {
    const page = await fetchPage(after);
    pageRecords.push(page.records);
    count += recordCount(page.records);
    if (page.errors !== undefined) for (const error of page.errors) errors.push(error);
    if (pages === 1) totalCount = page.totalCount;
    const stoppedBy = stopReason(page.pageInfo, followed, pages, maxPages);
    if (stoppedBy !== undefined) {
      const records = joinPages(pageRecords, options.membersText ?? plainMembers);
      return { records, count, totalSize: totalCount ?? count, pages, errors, stoppedBy };
    }
    after = page.pageInfo!.endCursor!;
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
