import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import { after, before, describe, test } from 'node:test';
import type { Page, Request, Route } from 'playwright-core';
import { accessTokenOf, type ConsoleBrowser, cli, openConsoleBrowser, untilPage } from '../support/console-browser.ts';
import { type Env, type ServerProcess, startServer, tempDatabase } from '../support/processes.ts';
import { httpUpstream, type RawUpstream } from '../support/raw-upstream.ts';

/**
 * Async executions in the console, in a real browser: the executions screen follows queued and running executions by
 * itself, cancels a queued one, and says so when a worker took it first; the detail shows an async one's result; try it
 * out runs one asynchronously. The server serves HTTP only (IX_WORKER=false), so what is queued stays queued until the
 * test starts a second instance on the same database that works the queue.
 */

const email = 'lin@example.com';
const password = 'a long enough console password';

/** A GraphQL upstream that answers `{ ping }` at once and holds a query naming `slow` until `release()`. */
async function gatedUpstream(): Promise<RawUpstream & { held: () => number; release(): void }> {
  const waiting: ServerResponse[] = [];
  const answer = (res: ServerResponse, data: object) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ data }));
  };
  const upstream = await httpUpstream((_req, res, body) => {
    if (body.includes('slow')) waiting.push(res);
    else answer(res, { ping: 'pong' });
  });
  return Object.assign(upstream, {
    held: () => waiting.length,
    release: () => {
      for (const res of waiting.splice(0)) answer(res, { slow: 'done at last' });
    },
  });
}

describe('async executions in the console', () => {
  const db = tempDatabase();
  let env: Env;
  let server: ServerProcess;
  let worker: ServerProcess | undefined;
  let upstream: Awaited<ReturnType<typeof gatedUpstream>>;
  let ui: ConsoleBrowser;
  let page: Page;
  let origin: string;
  let token = '';
  let betaKey = '';

  const row = (id: string) => ui.row(new RegExp(id));
  const call = async (path: string, init: { method?: string; body?: object; headers?: Record<string, string> } = {}) => {
    const response = await fetch(`${origin}/api/v1${path}`, {
      method: init.method ?? 'GET',
      headers: {
        authorization: `Bearer ${token}`,
        'x-tenant-id': 'acme',
        ...(init.body ? { 'content-type': 'application/json' } : {}),
        ...init.headers,
      },
      body: init.body ? JSON.stringify(init.body) : undefined,
    });
    return { status: response.status, body: (await response.json()) as { data: Record<string, unknown> } };
  };
  /** Queues a receive of `query` on the `upstream` integration (a tenant's key may stand in for the person). */
  const queue = async (query: string, headers: Record<string, string> = {}) => {
    const res = await call('/integrations/upstream/execute', {
      method: 'POST',
      headers: { prefer: 'respond-async', ...headers },
      body: { operation: 'receive', query },
    });
    assert.equal(res.status, 202, JSON.stringify(res.body));
    return String(res.body.data.execution_id);
  };
  const statusOf = async (id: string) => String((await call(`/executions/${id}`)).body.data.status);

  before(async () => {
    upstream = await gatedUpstream();
    env = { ...db.env, IX_WORKER: 'false' };
    await cli(['tenants', 'create', 'acme', '--name', 'Acme Corp'], env);
    await cli(['tenants', 'create', 'beta', '--name', 'Beta Labs'], env);
    await cli(['users', 'create', email, '--name', 'Lin', '--password-stdin'], env, `${password}\n`);
    await cli(['users', 'grant', email, '--tenant', 'acme', '--role', 'owner'], env);
    await cli(['users', 'grant', email, '--tenant', 'beta', '--role', 'viewer'], env);
    betaKey = JSON.parse(await cli(['keys', 'create', '--tenant', 'beta', '--scopes', 'integrations.*', '--json'], env)).key;
    server = await startServer(env);
    origin = server.url;
    token = await accessTokenOf(origin, email, password);
    for (const [tenant, auth] of [
      ['acme', { authorization: `Bearer ${token}` }],
      ['beta', { 'x-api-key': betaKey }],
    ] as const) {
      const res = await fetch(`${origin}/api/v1/integrations/upstream`, {
        method: 'PUT',
        headers: { ...auth, 'x-tenant-id': tenant, 'content-type': 'application/json' },
        body: JSON.stringify({ connector: 'graphql-1.0.0', config: { base_url: upstream.url } }),
      });
      assert.equal(res.status, 201, await res.text());
    }
    ui = await openConsoleBrowser(origin);
    page = ui.page;
    await ui.signIn(email, password);
  });

  after(async () => {
    upstream?.release();
    await ui?.close();
    await worker?.stop();
    await server?.stop();
    await upstream?.close();
    db.cleanup();
  });

  let canceled = '';
  test('a queued async execution appears by itself, with its mode and status; a viewer gets no Cancel', async () => {
    await ui.nav('Executions').click();
    await page.getByText('No executions match').waitFor();
    canceled = await queue('{ slow }');
    // No reload, no Refresh: the open screen reads the list again by itself.
    await row(canceled).waitFor();
    assert.match(await row(canceled).innerText(), /upstream[\s\S]*receive[\s\S]*async[\s\S]*queued/);
    await row(canceled)
      .getByRole('button', { name: `Cancel execution ${canceled}` })
      .waitFor();
    await ui.shot('e1-executions-queued');

    const res = await fetch(`${origin}/api/v1/integrations/upstream/execute`, {
      method: 'POST',
      headers: { 'x-api-key': betaKey, 'x-tenant-id': 'beta', 'content-type': 'application/json', prefer: 'respond-async' },
      body: JSON.stringify({ operation: 'receive', query: '{ ping }' }),
    });
    assert.equal(res.status, 202);
    const inBeta = String(((await res.json()) as { data: { execution_id: string } }).data.execution_id);
    await page.getByLabel('Tenant').selectOption('beta');
    await row(inBeta).getByText('queued').waitFor();
    assert.equal(await page.getByRole('button', { name: /^Cancel execution/ }).count(), 0, 'a viewer cannot cancel');
    await page.getByLabel('Tenant').selectOption('acme');
    await row(canceled).waitFor();
    ui.assertClean();
  });

  test('cancel a queued execution: the row says canceled, and so does the API', async () => {
    await row(canceled)
      .getByRole('button', { name: `Cancel execution ${canceled}` })
      .click();
    await row(canceled).getByText('canceled').waitFor();
    assert.equal(await row(canceled).getByRole('button').count(), 0, 'nothing left to cancel');
    assert.equal(await statusOf(canceled), 'canceled');
    await page
      .getByRole('status')
      .filter({ hasText: `Canceled the execution ${canceled}.` })
      .waitFor();
    await ui.shot('e2-executions-canceled');
    ui.assertClean();
  });

  let raced = '';
  test('a cancel that a worker beat shows the conflict, not a crash; the row then follows the worker', async () => {
    raced = await queue('{ slow }');
    await row(raced)
      .getByRole('button', { name: `Cancel execution ${raced}` })
      .waitFor();

    // Keep the screen's view of the list as it is (reads of it wait here) while a worker takes the execution.
    const held: Route[] = [];
    const isList = (url: URL) => url.pathname === '/api/v1/executions';
    const hold = (route: Route) => {
      held.push(route);
    };
    await page.route(isList, hold);
    worker = await startServer({ ...db.env, IX_WORKER: 'true' });
    await untilPage('the worker calls the upstream', async () => upstream.held() === 1);
    assert.equal(await statusOf(raced), 'running');

    ui.expected.add(`409 /api/v1/executions/${raced}/cancel`);
    await row(raced)
      .getByRole('button', { name: `Cancel execution ${raced}` })
      .click();
    const alert = page.getByRole('alert').filter({ hasText: `Could not cancel ${raced}` });
    await alert.getByText('conflict').waitFor();
    await ui.shot('e3-executions-cancel-conflict');

    await page.unroute(isList, hold);
    for (const route of held.splice(0)) await route.fallback();
    await row(raced).getByText('running').waitFor();
    assert.equal(await row(raced).getByRole('button').count(), 0, 'a running execution has no Cancel');
    ui.assertClean();
  });

  test('the detail of an async execution follows it to its end and shows its result', async () => {
    await row(raced).getByRole('link').click();
    await page.getByRole('heading', { name: 'Execution', exact: true }).waitFor();
    await page.getByRole('heading', { name: 'Running' }).waitFor();
    const summary = page.locator('.details').first();
    // Its tries of the upstream (retries included) are counted when it ends.
    assert.match(await summary.innerText(), /Mode\s+async[\s\S]*Status\s+running[\s\S]*Attempts\s+—/);
    await ui.shot('e4-execution-running');

    upstream.release();
    await page.getByRole('heading', { name: 'Succeeded' }).waitFor();
    const result = page.getByRole('region', { name: 'Result' });
    const body = JSON.parse(await result.getByLabel('Result body').innerText());
    assert.equal(body.success, true);
    assert.match(JSON.stringify(body.data), /done at last/);
    assert.match(await summary.innerText(), /Status\s+succeeded[\s\S]*Attempts\s+1[\s\S]*HTTP status\s+200/);
    await ui.shot('e5-execution-result');
    ui.assertClean();
  });

  test('leaving the screen stops its polling', async () => {
    await ui.nav('Executions').click();
    await row(raced).getByText('succeeded').waitFor();
    const reads: string[] = [];
    const count = (request: Request) => {
      if (new URL(request.url()).pathname.startsWith('/api/v1/executions')) reads.push(request.url());
    };
    await ui.nav('API keys').click();
    await page.getByRole('heading', { name: 'API keys' }).waitFor();
    page.on('request', count);
    // Three polling periods (2 s each) and then some: an interval left running would have read the list by now.
    await new Promise((resolve) => setTimeout(resolve, 7000));
    page.off('request', count);
    assert.deepEqual(reads, []);
    ui.assertClean();
  });

  test('try it out: "Run asynchronously" answers 202 and links to the execution', async () => {
    await ui.nav('Try it out').click();
    await page.getByLabel('Integration').selectOption('upstream');
    await page.getByLabel('Operation').selectOption('receive');
    await page.getByLabel('Body (JSON)').fill(JSON.stringify({ query: '{ ping }' }));
    await page.getByRole('checkbox', { name: /Run asynchronously/ }).check();
    await page.getByRole('button', { name: 'Run', exact: true }).click();
    const response = page.getByRole('region', { name: 'Response' });
    await response.getByText('HTTP 202').waitFor();
    const link = response.getByRole('link', { name: /^execution exe_/ });
    const id = (await link.innerText()).replace('execution ', '').trim();
    await ui.shot('e6-try-it-out-async');
    await link.click();
    await page.getByRole('heading', { name: 'Succeeded' }).waitFor();
    assert.match(new URL(page.url()).pathname, new RegExp(`/executions/${id}$`));
    assert.match(await page.getByRole('region', { name: 'Result' }).innerText(), /pong/);
    ui.assertClean();
  });
});
