import type { CountingGraphql } from './counting-graphql.ts';
import { sendCall } from './counting-graphql.ts';
import type { Json, ServerProcess } from './processes.ts';

/**
 * A fault harness for storage outages (issue 29): callers send keyed writes (`sendCall(n)` with `Idempotency-Key:
 * k-n`) through several `interchange serve` processes while a fault is done to their storage, and each caller retries
 * what a careful client retries (409, 429, 503, a dropped connection) with the same key until it gets an answer that
 * ends the call. Afterwards it counts what matters: calls the upstream received more than once, processes that
 * exited, answers 500, and successful calls without an execution record.
 */
export interface FaultClient {
  key: string;
  tenant: string;
}

export interface FaultCounts {
  /** Every status the callers saw, with how often (`error` for a connection that failed). */
  statuses: Record<string, number>;
  /** Calls answered 200 by a run (not a replay): their `n` and the request id, which their execution record carries. */
  succeeded: Array<{ n: number; requestId: string }>;
  /** Async calls accepted (202, first or replayed): their `n` and execution id. */
  accepted: Array<{ n: number; executionId: string }>;
  /** Calls that never got an ending answer within the run. */
  unfinished: number[];
}

async function post(server: ServerProcess, client: FaultClient, path: string, body: unknown, headers: Record<string, string>) {
  const res = await fetch(`${server.url}${path}`, {
    method: 'POST',
    headers: { 'x-api-key': client.key, 'x-tenant-id': client.tenant, 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(60_000),
  });
  return { status: res.status, body: (await res.json()) as Json, replayed: res.headers.get('idempotent-replayed') === 'true' };
}

/** Statuses after which a careful caller sends the same request again, with the same key. */
const retried = new Set([409, 429, 503, 0]);

/**
 * `callers` loops, each sending its own calls `first + i`, `first + i + callers`, … until `calls` were started (bounded
 * in count) or `stopAfterMs` passed (bounded in time); each call goes to the servers in turn and is retried (at most
 * `attempts` times, 100 ms apart) while its answer says to come back.
 */
export async function keyedSendLoad(options: {
  servers: ServerProcess[];
  client: FaultClient;
  integration: string;
  first: number;
  calls: number;
  callers: number;
  stopAfterMs: number;
  attempts?: number;
  /** Every `asyncEvery`-th call is sent async (`Prefer: respond-async`); 0: none. */
  asyncEvery?: number;
}): Promise<FaultCounts> {
  const { servers, client, integration, first, calls, callers, stopAfterMs, attempts = 600, asyncEvery = 0 } = options;
  const counts: FaultCounts = { statuses: {}, succeeded: [], accepted: [], unfinished: [] };
  const stopAt = performance.now() + stopAfterMs;
  let next = 0;
  let turn = 0;
  const caller = async () => {
    while (next < calls && performance.now() < stopAt) {
      const n = first + next++;
      let status = 0;
      for (let attempt = 0; attempt < attempts; attempt++) {
        const server = servers[turn++ % servers.length];
        try {
          const requestId = `r-${n}-${attempt}`;
          const async = asyncEvery > 0 && n % asyncEvery === 0;
          const res = await post(server, client, `/api/v1/integrations/${integration}/execute`, sendCall(n), {
            'idempotency-key': `k-${n}`,
            'x-request-id': requestId,
            ...(async && { prefer: 'respond-async' }),
          });
          status = res.status;
          if (res.status === 200 && !res.replayed) counts.succeeded.push({ n, requestId });
          if (res.status === 202 && !counts.accepted.some((a) => a.n === n)) {
            counts.accepted.push({ n, executionId: res.body.data.execution_id });
          }
        } catch {
          status = 0;
        }
        const seen = status === 0 ? 'error' : String(status);
        counts.statuses[seen] = (counts.statuses[seen] ?? 0) + 1;
        if (!retried.has(status)) break;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      if (retried.has(status)) counts.unfinished.push(n);
    }
  };
  await Promise.all(Array.from({ length: callers }, caller));
  return counts;
}

/** The calls `first…first+calls-1` that the upstream received more than once. */
export function sentTwice(upstream: CountingGraphql, first: number, calls: number): number[] {
  const twice: number[] = [];
  for (let n = first; n < first + calls; n++) if (upstream.seen(n) > 1) twice.push(n);
  return twice;
}

/** How many of the calls `first…first+calls-1` the upstream has received so far. */
export function sentSoFar(upstream: CountingGraphql, first: number, calls: number): number {
  let sent = 0;
  for (let n = first; n < first + calls; n++) if (upstream.seen(n) > 0) sent += 1;
  return sent;
}
