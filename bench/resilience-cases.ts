/**
 * `node bench/resilience-cases.ts`: what Interchange does against upstreams that fail (docs/resilience.md), case by
 * case, as a Markdown table: the answer, the attempts it reports, the requests the upstream read whole and the time the
 * call took. One `interchange serve` in its own process on a temp SQLite file, GraphQL integrations with the default
 * retry settings (3 attempts, 200 ms first ceiling, 10 s longest) unless a case says otherwise, and upstreams that play
 * a script per connection (test/support/scripted-upstream.ts). Not a speed measure: the times show the waits.
 */
import { cliJson } from '../test/support/cli.ts';
import { type ServerProcess, startServer, tempDatabase } from '../test/support/processes.ts';
import { failNThenSucceed, ok, reservedPort, type Script, scriptedUpstream } from '../test/support/scripted-upstream.ts';

interface Case {
  name: string;
  operation: 'receive' | 'send';
  script?: Script;
  /** Extra config of the integration. */
  config?: Record<string, unknown>;
  /** Runs the case itself (for the ones that need more than one call); returns what the row shows. */
  run?: (ctx: Ctx) => Promise<Row>;
}

interface Ctx {
  server: ServerProcess;
  headers: Record<string, string>;
}

interface Row {
  answer: string;
  attempts: string;
  seen: number;
  ms: number;
}

const payloads = {
  receive: { operation: 'receive', query: '{ ok }' },
  send: { operation: 'send', mutation: 'mutation { write }' },
};

let serial = 0;

async function put(ctx: Ctx, url: string, config: Record<string, unknown> = {}): Promise<string> {
  const id = `case-${++serial}`;
  const res = await fetch(`${ctx.server.url}/api/v1/integrations/${id}`, {
    method: 'PUT',
    headers: { ...ctx.headers, 'content-type': 'application/json' },
    body: JSON.stringify({ connector: 'graphql-1.0.0', config: { base_url: url, ...config } }),
  });
  if (res.status !== 201) throw new Error(`PUT ${id}: ${res.status} ${await res.text()}`);
  return id;
}

async function execute(ctx: Ctx, id: string, operation: 'receive' | 'send') {
  const started = performance.now();
  const res = await fetch(`${ctx.server.url}/api/v1/integrations/${id}/execute`, {
    method: 'POST',
    headers: { ...ctx.headers, 'content-type': 'application/json' },
    body: JSON.stringify(payloads[operation]),
  });
  const body = (await res.json()) as { error?: { code: string; details?: { attempts?: number } } };
  const ms = performance.now() - started;
  const retryAfter = res.headers.get('retry-after');
  const answer = `${res.status}${body.error ? ` ${body.error.code}` : ''}${retryAfter ? ` (Retry-After: ${retryAfter})` : ''}`;
  return { answer, attempts: body.error?.details?.attempts, ms, id };
}

/** The attempts an execution's record holds (a success carries none in its answer). */
async function recordedAttempts(ctx: Ctx, id: string): Promise<number> {
  const res = await fetch(`${ctx.server.url}/api/v1/executions?integration_id=${id}&limit=1`, { headers: ctx.headers });
  const body = (await res.json()) as { data: Array<{ attempts: number }> };
  return body.data[0].attempts;
}

const cases: Case[] = [
  { name: 'receive: 503, 503, then 200', operation: 'receive', script: failNThenSucceed(2, 'unavailable') },
  { name: 'receive: 429 with Retry-After: 1, then 200', operation: 'receive', script: failNThenSucceed(1, 'throttled') },
  {
    name: 'receive: reset after reading, twice, then 200',
    operation: 'receive',
    script: failNThenSucceed(2, 'reset-after-read'),
  },
  {
    name: 'receive: no answer within timeout_seconds (1), then 200',
    operation: 'receive',
    script: failNThenSucceed(1, 'hang'),
    config: { timeout_seconds: 1 },
  },
  { name: 'receive: 503 every time', operation: 'receive', script: ['unavailable'] },
  { name: 'receive: 400 (not an outage)', operation: 'receive', script: [{ status: 400, body: 'bad request' }] },
  { name: 'send: 503, then 200', operation: 'send', script: failNThenSucceed(1, 'unavailable') },
  { name: 'send: 429 with Retry-After: 1, then 200', operation: 'send', script: failNThenSucceed(1, 'throttled') },
  { name: 'send: reset after reading, then 200', operation: 'send', script: failNThenSucceed(1, 'reset-after-read') },
  {
    name: 'send: no answer within timeout_seconds (1)',
    operation: 'send',
    script: ['hang'],
    config: { timeout_seconds: 1 },
  },
  {
    name: 'send: port refuses, opens 300 ms later',
    operation: 'send',
    run: async (ctx) => {
      const later = await reservedPort();
      const id = await put(ctx, later.url, { retry: { max_attempts: 10 } });
      const calling = execute(ctx, id, 'send');
      await new Promise((resolve) => setTimeout(resolve, 300));
      const upstream = await later.open([ok]);
      const done = await calling;
      const row = {
        answer: done.answer,
        attempts: String(await recordedAttempts(ctx, id)),
        seen: upstream.requests,
        ms: done.ms,
      };
      await upstream.close();
      return row;
    },
  },
  {
    name: 'breaker: 5 failed calls (max_attempts 1), then a 6th',
    operation: 'receive',
    run: async (ctx) => {
      const upstream = await scriptedUpstream(['unavailable']);
      const id = await put(ctx, upstream.url, { retry: { max_attempts: 1 } });
      for (let i = 0; i < 5; i++) await execute(ctx, id, 'receive');
      const sixth = await execute(ctx, id, 'receive');
      await upstream.close();
      return { answer: sixth.answer, attempts: String(sixth.attempts), seen: upstream.requests, ms: sixth.ms };
    },
  },
  {
    name: 'max_concurrency 1: a second call while the first hangs',
    operation: 'receive',
    run: async (ctx) => {
      const upstream = await scriptedUpstream(['hang']);
      const id = await put(ctx, upstream.url, { max_concurrency: 1, retry: { max_attempts: 1 } });
      const first = execute(ctx, id, 'receive');
      while (upstream.requests < 1) await new Promise((resolve) => setTimeout(resolve, 10));
      const second = await execute(ctx, id, 'receive');
      await upstream.close();
      await first;
      return { answer: second.answer, attempts: '–', seen: upstream.requests, ms: second.ms };
    },
  },
];

async function main(): Promise<void> {
  const db = tempDatabase();
  await cliJson(['tenants', 'create', 'acme'], db.env);
  const created = await cliJson(['keys', 'create', '--tenant', 'acme', '--scopes', '*', '--rate-limit', '100000'], db.env);
  const server = await startServer({ ...db.env, LOG_LEVEL: 'silent' });
  const ctx: Ctx = { server, headers: { 'x-api-key': created.key, 'x-tenant-id': 'acme' } };
  const lines = ['| case | answer | attempts | upstream read | time |', '|---|---|---|---|---|'];
  try {
    for (const c of cases) {
      let row: Row;
      if (c.run) row = await c.run(ctx);
      else {
        const upstream = await scriptedUpstream(c.script ?? [ok]);
        const id = await put(ctx, upstream.url, c.config);
        const done = await execute(ctx, id, c.operation);
        const attempts = done.attempts ?? (await recordedAttempts(ctx, id));
        row = { answer: done.answer, attempts: String(attempts), seen: upstream.requests, ms: done.ms };
        await upstream.close();
      }
      lines.push(`| ${c.name} | ${row.answer} | ${row.attempts} | ${row.seen} | ${Math.round(row.ms)} ms |`);
      console.error(lines.at(-1));
    }
  } finally {
    await server.stop();
    db.cleanup();
  }
  console.log(lines.join('\n'));
}

await main();
