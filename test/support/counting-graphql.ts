import type { ServerResponse } from 'node:http';
import { httpUpstream, type RawUpstream } from './raw-upstream.ts';

/**
 * A GraphQL-shaped upstream that counts, per call, what reached it: each request carries `variables.n`, and `seen(n)`
 * says how many times the upstream received call `n`. A document holding `hold` is not answered until `release()`
 * (a slow ERP method, kept running while the test kills the process that called it); everything else is answered at
 * once: a mutation with `{data: {done: n}}`, a query with one record. Raw node:http, because holding a request open on
 * purpose is a fault no real GraphQL server produces.
 */
export interface CountingGraphql {
  url: string;
  /** How many requests for call `n` arrived. */
  seen(n: number): number;
  /** Requests held open now. */
  readonly holding: number;
  /** Every call's `n`, in the order the requests arrived. */
  readonly arrivals: readonly number[];
  /** Answers the request held longest (one slow call ends). */
  releaseOldest(): void;
  /** Answers every held request, and every later one at once. */
  release(): void;
  close(): Promise<void>;
}

export async function countingGraphql(): Promise<CountingGraphql> {
  const counts = new Map<number, number>();
  const held: Array<() => void> = [];
  let released = false;
  const arrivals: number[] = [];
  const answer = (res: ServerResponse, document: string, n: number) => {
    if (res.destroyed) return;
    const data = document.trimStart().startsWith('mutation') ? { done: n } : { items: [{ n }] };
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ data }));
  };
  const upstream: RawUpstream = await httpUpstream((_req, res, body) => {
    const { query, variables } = JSON.parse(body) as { query: string; variables?: { n?: number } };
    const n = Number(variables?.n ?? -1);
    counts.set(n, (counts.get(n) ?? 0) + 1);
    arrivals.push(n);
    if (query.includes('hold') && !released) held.push(() => answer(res, query, n));
    else answer(res, query, n);
  });
  return {
    url: `${upstream.url}/graphql`,
    seen: (n) => counts.get(n) ?? 0,
    get holding() {
      return held.length;
    },
    arrivals,
    releaseOldest() {
      held.shift()?.();
    },
    release() {
      released = true;
      for (const reply of held.splice(0)) reply();
    },
    close: () => upstream.close(),
  };
}

/** A send of call `n` (held open when `hold`), as an execute body. */
export function sendCall(n: number, hold = false) {
  return { operation: 'send', mutation: `mutation Do($n: Int) { ${hold ? 'hold' : 'done'}(n: $n) }`, variables: { n } };
}

/** A receive of call `n` (held open when `hold`), as an execute body. */
export function receiveCall(n: number, hold = false) {
  return {
    operation: 'receive',
    query: `query Read($n: Int) { items(n: $n, ${hold ? 'hold' : 'now'}: true) { n } }`,
    variables: { n },
  };
}
