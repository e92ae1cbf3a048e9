import { readFileSync } from 'node:fs';
import type { ServerResponse } from 'node:http';
import { httpUpstream, type RawUpstream } from './raw-upstream.ts';

/** One page of a Relay connection `items`, with `records` already serialized as JSON array members. */
function pageJson(records: string, hasNextPage: boolean, endCursor: string): string[] {
  return [
    `{"data":{"items":{"pageInfo":{"hasNextPage":${hasNextPage},"endCursor":${JSON.stringify(endCursor)}},"nodes":[`,
    records,
    ']}}}',
  ];
}

export interface PagedUpstream extends RawUpstream {
  /** Requests received, by URL path (an integration per path tells concurrent executes apart). */
  byPath: Map<string, number>;
}

/**
 * A GraphQL-ish upstream (node:http) whose every answer is a page of `items` about `pageBytes` long, saying there is
 * a next page with a fresh cursor: a receive with `paginate` follows it until something stops it. The page's
 * records are built once and written as they are, so the upstream itself stays small whatever it sends.
 */
export async function pagedUpstream(options: {
  pageBytes: number;
  /** Each answer is sent this long after its request arrived. */
  delayMs?: number;
  /** When false, the first page says it is the last. */
  hasNextPage?: boolean;
  /** The characters of each record's `pad` (default 1,000): smaller records, more of them per page. */
  padChars?: number;
}): Promise<PagedUpstream> {
  const record = (i: number) => `{"id":"r${i}","pad":"${'x'.repeat(options.padChars ?? 1000)}"}`;
  const count = Math.max(1, Math.floor(options.pageBytes / record(0).length));
  const records = Buffer.from(Array.from({ length: count }, (_, i) => record(i)).join(','));
  const byPath = new Map<string, number>();
  let served = 0;
  const upstream = await httpUpstream((req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    byPath.set(path, (byPath.get(path) ?? 0) + 1);
    const [head, , tail] = pageJson('', options.hasNextPage ?? true, `cursor-${++served}`);
    const answer = () => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write(head);
      res.write(records);
      res.end(tail);
    };
    if (options.delayMs) setTimeout(answer, options.delayMs);
    else answer();
  });
  return Object.assign(upstream, { byPath });
}

export interface HeldUpstream extends RawUpstream {
  /** Requests waiting for their answer. */
  held(): number;
  /** Answers every held request, and from now on answers at once. */
  release(): void;
}

/** An upstream that holds every request without answering until `release()`; then a one-item GraphQL answer. */
export async function heldUpstream(): Promise<HeldUpstream> {
  const waiting: ServerResponse[] = [];
  let released = false;
  const answer = (res: ServerResponse) =>
    res.writeHead(200, { 'content-type': 'application/json' }).end('{"data":{"items":[{"id":"1"}]}}');
  const upstream = await httpUpstream((_req, res) => {
    if (released) answer(res);
    else waiting.push(res);
  });
  return Object.assign(upstream, {
    held: () => waiting.length,
    release() {
      released = true;
      for (const res of waiting.splice(0)) answer(res);
    },
  });
}

/**
 * Resident memory of a process in bytes: now (VmRSS) and its peak since it started (VmHWM), from /proc; undefined
 * once the process has exited (a zombie has no VmRSS, a reaped process no /proc entry).
 */
export function residentMemory(pid: number): { rss: number; peak: number } | undefined {
  let status: string;
  try {
    status = readFileSync(`/proc/${pid}/status`, 'utf8');
  } catch {
    return undefined;
  }
  const kib = (field: string) => {
    const match = new RegExp(`^${field}:\\s+(\\d+) kB$`, 'm').exec(status);
    return match ? Number(match[1]) * 1024 : undefined;
  };
  const rss = kib('VmRSS');
  const peak = kib('VmHWM');
  return rss === undefined || peak === undefined ? undefined : { rss, peak };
}
