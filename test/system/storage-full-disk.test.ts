import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { closeSync, mkdirSync, openSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, type TestContext, test } from 'node:test';
import { sql } from 'kysely';
import { cliJson } from '../support/cli.ts';
import { type CountingGraphql, countingGraphql, sendCall } from '../support/counting-graphql.ts';
import { type Auth, body, type Harness, harness } from '../support/harness.ts';
import { type Json, killAll, type ServerProcess, startServer } from '../support/processes.ts';
import { until } from '../support/until.ts';

/**
 * SQLite on a disk that fills (issue 29): every call answered 200 was sent once and is recorded once space returns;
 * every other call was refused before it was sent, with 503 service_unavailable (reason storage), never 500. Twice:
 * in-process, the database capped by `max_page_count` (SQLite's own "database or disk is full"); and, where root may
 * mount one, a real `interchange serve` on a small tmpfs filled to the last byte.
 */

after(killAll);

interface Seen {
  n: number;
  status: number;
  code?: string;
  reason?: string;
  requestId: string;
}

/** Sends calls `first…first+count-1` one after another (keyed every other one); returns what each got. */
async function sendAll(
  send: (n: number, headers: Record<string, string>) => Promise<{ status: number; body: Json }>,
  first: number,
  count: number,
): Promise<Seen[]> {
  const seen: Seen[] = [];
  for (let n = first; n < first + count; n++) {
    const requestId = `full-${n}`;
    const headers: Record<string, string> = { 'x-request-id': requestId, ...(n % 2 === 0 && { 'idempotency-key': `full-${n}` }) };
    const res = await send(n, headers);
    seen.push({ n, status: res.status, code: res.body.error?.code, reason: res.body.error?.details?.reason, requestId });
  }
  return seen;
}

/** What must hold of calls made while the disk was full. */
function assertSentOnlyWhenAnswered(seen: Seen[], upstream: CountingGraphql, t: TestContext): void {
  const statuses = Object.groupBy(seen, (call) => String(call.status));
  t.diagnostic(`statuses: ${JSON.stringify(Object.fromEntries(Object.entries(statuses).map(([s, c]) => [s, c?.length])))}`);
  for (const call of seen) {
    assert.ok([200, 503].includes(call.status), `call ${call.n}: ${JSON.stringify(call)}`);
    if (call.status === 503) assert.deepEqual([call.code, call.reason], ['service_unavailable', 'storage'], `call ${call.n}`);
    assert.equal(upstream.seen(call.n), call.status === 200 ? 1 : 0, `call ${call.n} (${call.status}) at the upstream`);
  }
  assert.ok(
    seen.some((call) => call.status === 503),
    `a full disk refuses calls: ${JSON.stringify(seen.map((c) => c.status))}`,
  );
}

describe('SQLite with max_page_count reached (in-process)', () => {
  let h: Harness;
  let auth: Auth;
  let upstream: CountingGraphql;

  after(async () => {
    await h?.close();
    await upstream?.close();
  });

  test('calls answered 200 are recorded once there is room; the others were never sent', async (t) => {
    h = await harness();
    upstream = await countingGraphql();
    await h.tenant('acme');
    auth = await h.auth('acme', ['*']);
    const put = await h.call(auth, {
      method: 'PUT',
      url: '/api/v1/integrations/erp',
      payload: { connector: 'graphql-1.0.0', config: { base_url: upstream.url, validate_schema: false } },
    });
    assert.ok(put.statusCode < 300, put.body);
    const send = async (n: number, headers: Record<string, string>) => {
      const res = await h.call(auth, { method: 'POST', url: '/api/v1/integrations/erp/execute', payload: sendCall(n), headers });
      return { status: res.statusCode, body: body(res) };
    };
    assert.equal((await send(1, {})).status, 200);
    await h.app.executionLog.flush();

    // The file may not grow by a page: the app's own connection (SQLite's limit is per connection).
    const { rows } = await sql<{ page_count: number }>`pragma page_count`.execute(h.storage.db);
    await sql.raw(`pragma max_page_count = ${rows[0].page_count}`).execute(h.storage.db);
    const seen = await sendAll(send, 100, 60);
    assertSentOnlyWhenAnswered(seen, upstream, t);
    const ready = await h.call(null, { method: 'GET', url: '/readyz' });
    assert.equal(ready.statusCode, 503, 'not ready while records are held');

    await sql.raw('pragma max_page_count = 1073741823').execute(h.storage.db);
    await until(async () => (await h.call(null, { method: 'GET', url: '/readyz' })).statusCode === 200, 'ready again');
    const answered = seen.filter((call) => call.status === 200).map((call) => call.requestId);
    const recorded = await h.storage.db
      .selectFrom('executions')
      .select('request_id')
      .where('request_id', 'in', answered.length > 0 ? answered : ['-'])
      .execute();
    assert.equal(recorded.length, answered.length, 'every call answered 200 is recorded');
    assert.equal((await send(500, {})).status, 200, 'calls go through again');
  });
});

/** Mounts a tmpfs of `sizeKb` at a new folder; undefined where this process may not (not root, no mount). */
function mountTmpfs(sizeKb: number): { dir: string; unmount(): void } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const dir = join(tmpdir(), `ix-full-${process.pid}`);
  mkdirSync(dir, { recursive: true });
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${sizeKb}k`, 'tmpfs', dir], { stdio: 'pipe' });
  } catch {
    rmSync(dir, { recursive: true, force: true });
    return undefined;
  }
  return {
    dir,
    unmount: () => {
      execFileSync('umount', ['-l', dir], { stdio: 'pipe' });
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Writes a filler file until the filesystem has no byte left; returns its path. */
function fill(dir: string): string {
  const path = join(dir, 'filler');
  const fd = openSync(path, 'w');
  const chunk = Buffer.alloc(4096);
  try {
    for (;;) writeSync(fd, chunk);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOSPC') throw error;
  } finally {
    closeSync(fd);
  }
  return path;
}

describe('interchange serve on a tmpfs that fills', () => {
  const mounted = mountTmpfs(8 * 1024);
  let server: ServerProcess | undefined;
  let upstream: CountingGraphql | undefined;

  after(async () => {
    await server?.stop();
    await upstream?.close();
    mounted?.unmount();
  });

  test('no exit, no 500; calls answered 200 are recorded once there is room; the others were never sent', {
    skip: mounted ? false : 'needs root and mount (a tmpfs): the in-process test above caps the database instead',
  }, async (t) => {
    assert.ok(mounted);
    const env = { DATABASE_URL: `sqlite:${join(mounted.dir, 'ix.db')}` };
    await cliJson(['tenants', 'create', 'acme'], env);
    const key = (await cliJson(['keys', 'create', '--tenant', 'acme', '--scopes', '*'], env)).key as string;
    server = await startServer(env);
    upstream = await countingGraphql();
    const running = server;
    const call = async (method: string, path: string, payload?: unknown, headers: Record<string, string> = {}) => {
      const res = await fetch(`${running.url}${path}`, {
        method,
        headers: { 'x-api-key': key, 'x-tenant-id': 'acme', 'content-type': 'application/json', ...headers },
        body: payload === undefined ? undefined : JSON.stringify(payload),
      });
      return { status: res.status, body: (await res.json()) as Json };
    };
    const put = await call('PUT', '/api/v1/integrations/erp', {
      connector: 'graphql-1.0.0',
      config: { base_url: upstream.url, validate_schema: false },
    });
    assert.ok(put.status < 300, JSON.stringify(put.body));
    assert.equal((await call('POST', '/api/v1/integrations/erp/execute', sendCall(1))).status, 200);

    const filler = fill(mounted.dir);
    const counting = upstream;
    const seen = await sendAll((n, headers) => call('POST', '/api/v1/integrations/erp/execute', sendCall(n), headers), 100, 60);
    assertSentOnlyWhenAnswered(seen, counting, t);
    assert.equal(running.child.exitCode, null, `the server exited:\n${running.stderr()}`);

    rmSync(filler);
    await until(async () => (await fetch(`${running.url}/readyz`)).status === 200, 'ready again once there is room');
    const answered = seen.filter((c) => c.status === 200);
    const listed = await call('GET', '/api/v1/executions?limit=100');
    const recorded = new Set(listed.body.data.map((e: Json) => e.request_id));
    for (const c of answered) assert.ok(recorded.has(c.requestId), `call ${c.n}, answered 200, is recorded`);
    // Calls go through again. Polled, not asserted once: in one full run on the loaded machine the first call after
    // /readyz answered 200 was still a 503 (storage found away again for a probe); such a call sends nothing, as above.
    let n = 500;
    await until(
      async () => (await call('POST', '/api/v1/integrations/erp/execute', sendCall(n++))).status === 200,
      'calls go through again',
    );
  });
});
