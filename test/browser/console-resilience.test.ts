import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Locator, Page } from 'playwright-core';
import { type ConsoleBrowser, openConsoleBrowser, serveWithOwner } from '../support/console-browser.ts';
import { type ServerProcess, tempDatabase } from '../support/processes.ts';
import { ok, type ScriptedUpstream, scriptedUpstream } from '../support/scripted-upstream.ts';

/**
 * The integration page's "When the upstream fails" section (docs/resilience.md) in a real browser: the circuit
 * breaker's state as the API reports it, the retry settings in force, and edits of them read back through the API.
 */

const email = 'ada@example.com';
const password = 'a long enough console password';

describe('the console shows and edits how an integration meets a failing upstream', () => {
  const db = tempDatabase();
  let server: ServerProcess;
  let upstream: ScriptedUpstream;
  let failing = true;
  let ui: ConsoleBrowser;
  let page: Page;
  let origin: string;
  let accessToken = '';
  const patches: Record<string, unknown>[] = [];

  const section = (): Locator => page.getByRole('group', { name: 'When the upstream fails', exact: true });
  const api = async (method: string, path: string, payload?: unknown) => {
    const response = await fetch(`${origin}/api/v1${path}`, {
      method,
      headers: {
        authorization: `Bearer ${accessToken}`,
        'x-tenant-id': 'acme',
        ...(payload !== undefined && { 'content-type': 'application/json' }),
      },
      body: payload === undefined ? undefined : JSON.stringify(payload),
    });
    return { status: response.status, body: (await response.json()) as { data: Record<string, unknown> } };
  };

  before(async () => {
    upstream = await scriptedUpstream(() => (failing ? 'unavailable' : ok));
    ({ server, origin, accessToken } = await serveWithOwner({ ...db.env }, email, password));
    const put = await api('PUT', '/integrations/billing', {
      name: 'Billing',
      connector: 'graphql-1.0.0',
      config: { base_url: upstream.url, retry: { max_attempts: 1 } },
    });
    assert.equal(put.status, 201, JSON.stringify(put.body));

    ui = await openConsoleBrowser(origin);
    page = ui.page;
    page.on('request', (request) => {
      if (request.method() === 'PATCH' && new URL(request.url()).pathname === '/api/v1/integrations/billing') {
        patches.push(request.postDataJSON());
      }
    });
    await ui.signIn(email, password);
  });

  after(async () => {
    await ui?.close();
    await server?.stop();
    await upstream?.close();
    db.cleanup();
  });

  test('the retry settings in force, defaults filled in, and a closed breaker', async () => {
    await page.goto(`${origin}/console/t/acme/integrations/billing`);
    await page.getByRole('heading', { name: 'Billing' }).waitFor();
    const s = section();
    assert.equal(await s.getByLabel('Attempts').inputValue(), '1');
    assert.equal(await s.getByLabel('First wait (ms)').inputValue(), '200');
    assert.equal(await s.getByLabel('Longest wait (ms)').inputValue(), '10000');
    assert.equal(await s.getByLabel('Calls at once').inputValue(), '');
    assert.equal(await s.locator('[data-circuit]').getAttribute('data-circuit'), 'closed');
    await s.getByText('Closed', { exact: true }).waitFor();
    await ui.shot('r1-resilience-closed');
    ui.assertClean();
  });

  test('after five failed calls the page shows the breaker open', async () => {
    for (let i = 0; i < 5; i++) {
      const res = await api('POST', '/integrations/billing/execute', { operation: 'receive', query: '{ ok }' });
      assert.equal(res.status, 502);
    }
    await page.reload();
    await section().getByText('Open', { exact: true }).waitFor();
    assert.equal(await section().locator('[data-circuit]').getAttribute('data-circuit'), 'open');
    await section().getByText('upstream_circuit_open', { exact: false }).waitFor();
    await ui.shot('r2-resilience-open');
    ui.assertClean();
  });

  test('a wait ceiling below the first wait is caught in the form and nothing is sent', async () => {
    const s = section();
    await s.getByLabel('First wait (ms)').fill('500');
    await s.getByLabel('Longest wait (ms)').fill('100');
    await page.getByRole('button', { name: 'Save changes' }).click();
    await section().getByText('must be at least the first wait').waitFor();
    assert.equal(patches.length, 0);
    ui.assertClean();
  });

  test('saving new settings sends retry whole and the cap; the change closes the breaker', async () => {
    failing = false;
    const s = section();
    await s.getByLabel('Attempts').fill('4');
    await s.getByLabel('Longest wait (ms)').fill('2000');
    await s.getByLabel('Calls at once').fill('2');
    await page.getByRole('button', { name: 'Save changes' }).click();
    await page.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
    const sent = patches.at(-1)?.config as Record<string, unknown> | undefined;
    assert.deepEqual(sent?.retry, { max_attempts: 4, base_delay_ms: 500, max_delay_ms: 2000 });
    assert.equal(sent?.max_concurrency, 2);
    const stored = (await api('GET', '/integrations/billing')).body.data;
    assert.deepEqual((stored.config as Record<string, unknown>).retry, {
      max_attempts: 4,
      base_delay_ms: 500,
      max_delay_ms: 2000,
    });
    assert.equal((stored.config as Record<string, unknown>).max_concurrency, 2);
    assert.equal(stored.circuit, 'closed');
    await section().getByText('Closed', { exact: true }).waitFor();

    // Emptying the cap removes it.
    await section().getByLabel('Calls at once').fill('');
    await page.getByRole('button', { name: 'Save changes' }).click();
    await page.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
    assert.equal((patches.at(-1)?.config as Record<string, unknown> | undefined)?.max_concurrency, null);
    const after = (await api('GET', '/integrations/billing')).body.data.config as Record<string, unknown>;
    assert.equal(after.max_concurrency, null);
    await ui.shot('r3-resilience-saved');
    ui.assertClean();
  });
});
