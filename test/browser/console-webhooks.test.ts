import assert from 'node:assert/strict';
import type { IncomingHttpHeaders } from 'node:http';
import { after, before, describe, type TestContext, test } from 'node:test';
import type { Page } from 'playwright-core';
import { accessTokenOf, type ConsoleBrowser, cli, openConsoleBrowser, untilPage } from '../support/console-browser.ts';
import { type ServerProcess, startServer, tempDatabase } from '../support/processes.ts';
import { httpUpstream, type RawUpstream } from '../support/raw-upstream.ts';

/**
 * The Webhooks screen in a real browser (test/support/console-browser.ts): the endpoints listed, one added with its signing
 * secret shown once, a test event sent and its delivery listed, one deleted after confirming, and what a viewer
 * (webhooks.read) may not do. Written before the webhooks API was merged: on a build without it, the walks that need it
 * are skipped, saying so, and the first test checks that the screen shows the failed load as an error.
 */

const email = 'ida@example.com';
const password = 'webhooks console password';
const skipWithoutApi = 'the webhooks API is not in this build: run this file again once it is';

describe('the Webhooks screen in a real browser', () => {
  const db = tempDatabase();
  let server: ServerProcess;
  let receiver: RawUpstream;
  let ui: ConsoleBrowser;
  let page: Page;
  let origin: string;
  let token = '';
  let betaKey = '';
  let hasApi = false;
  /** The headers of every request the receiver got, in order. */
  const received: IncomingHttpHeaders[] = [];
  const endpoint = () => `${receiver.url}/hooks/billing`;
  const without = (t: TestContext) => {
    if (hasApi) return false;
    t.skip(skipWithoutApi);
    return true;
  };

  before(async () => {
    receiver = await httpUpstream((req, res) => {
      received.push(req.headers);
      res.writeHead(204).end();
    });
    const env = { ...db.env, IX_WEBHOOK_ALLOW_PRIVATE: 'true' };
    await cli(['tenants', 'create', 'acme', '--name', 'Acme Corp'], env);
    await cli(['tenants', 'create', 'beta', '--name', 'Beta Labs'], env);
    await cli(['users', 'create', email, '--name', 'Ida', '--password-stdin'], env, `${password}\n`);
    await cli(['users', 'grant', email, '--tenant', 'acme', '--role', 'owner'], env);
    await cli(['users', 'grant', email, '--tenant', 'beta', '--role', 'viewer'], env);
    betaKey = JSON.parse(await cli(['keys', 'create', '--tenant', 'beta', '--scopes', '*', '--json'], env)).key;
    server = await startServer(env);
    origin = server.url;
    token = await accessTokenOf(origin, email, password);
    const document = (await (await fetch(`${origin}/api/v1/openapi.json`)).json()) as { paths: Record<string, unknown> };
    hasApi = '/api/v1/webhooks' in document.paths;
    ui = await openConsoleBrowser(origin, { clipboard: true });
    page = ui.page;
    await ui.signIn(email, password);
  });

  after(async () => {
    await ui?.close();
    await server?.stop();
    await receiver?.close();
    db.cleanup();
  });

  test('the screen is in the navigation, and a list that fails to load is an error notice, not a crash', async () => {
    const isList = (url: URL) => url.pathname === '/api/v1/webhooks';
    if (hasApi) {
      // The API is there: make the list fail as an overloaded instance would answer it.
      await page.route(isList, (route) =>
        route.fulfill({
          status: 429,
          contentType: 'application/json',
          headers: { 'retry-after': '1', 'x-request-id': 'req-webhooks-test' },
          body: JSON.stringify({
            success: false,
            error: { code: 'rate_limited', message: 'Too many requests.' },
            request_id: 'req-webhooks-test',
          }),
        }),
      );
      ui.expected.add('429 /api/v1/webhooks');
    } else {
      ui.expected.add('404 /api/v1/webhooks');
    }
    await ui.nav('Webhooks').click();
    await page.getByRole('heading', { name: 'Webhooks' }).waitFor();
    assert.match(new URL(page.url()).pathname, /^\/console\/t\/acme\/webhooks$/);
    const alert = page.getByRole('alert').filter({ hasText: 'Could not load the webhooks' });
    await alert.waitFor();
    assert.match(await alert.innerText(), hasApi ? /rate_limited/ : /not_found/);
    assert.match(await alert.innerText(), /Request ID/);
    assert.equal(await page.getByRole('table').count(), 0);
    await page.getByRole('button', { name: 'Add endpoint' }).waitFor();
    await ui.shot('w1-webhooks-load-error');
    if (hasApi) await page.unroute(isList);
    ui.assertClean();
  });

  test('add an endpoint for some events: its signing secret is shown once', async (t) => {
    if (without(t)) return;
    await page.reload();
    await page.getByText('No webhook endpoints yet').waitFor();
    await page.getByRole('button', { name: 'Add endpoint' }).click();
    const dialog = page.getByRole('dialog', { name: 'Add a webhook endpoint' });
    await dialog.getByLabel('Endpoint URL').fill(endpoint());
    await dialog.getByRole('checkbox', { name: /All events/ }).uncheck();
    await dialog.getByRole('checkbox', { name: 'execution.failed' }).check();
    await dialog.getByRole('checkbox', { name: 'execution.canceled' }).check();
    await dialog.getByLabel('Description (optional)').fill('billing service');
    await ui.shot('w2-webhook-create-form');
    await dialog.getByRole('button', { name: 'Add endpoint' }).click();

    const shown = page.getByRole('dialog', { name: 'Webhook endpoint added' });
    await shown.getByText('Copy this signing secret now').waitFor();
    const secret = await shown.getByLabel('Signing secret').inputValue();
    assert.match(secret, /^whsec_[A-Za-z0-9+/]{43}=$/);
    await shown.getByRole('button', { name: 'Copy' }).click();
    await shown.getByText('Copied to the clipboard.').waitFor();
    await ui.shot('w3-webhook-secret-once');
    await shown.getByRole('button', { name: 'I have stored it' }).click();
    await shown.waitFor({ state: 'detached' });

    const row = ui.row(new RegExp(endpoint()));
    await row.getByText('Active').waitFor();
    assert.match(await row.innerText(), /billing service[\s\S]*execution\.failed[\s\S]*execution\.canceled/);
    assert.equal(await ui.pageHolds(secret), false, 'the secret is gone once the dialog closed');
    ui.assertClean();
  });

  test('send a test event: it reaches the endpoint, signed, and its delivery is listed', async (t) => {
    if (without(t)) return;
    const row = ui.row(new RegExp(endpoint()));
    await row.getByRole('button', { name: `Send a test event to ${endpoint()}` }).click();
    await untilPage('the endpoint receives the test event', async () => received.length >= 1);
    assert.match(String(received[0]['webhook-signature']), /^v1,/);
    const panel = page.getByRole('region', { name: `Deliveries to ${endpoint()}` });
    await panel.getByRole('row').filter({ hasText: '204' }).first().waitFor();
    await ui.shot('w4-webhook-deliveries');
    await panel.getByRole('button', { name: 'Close' }).click();
    await panel.waitFor({ state: 'detached' });
    ui.assertClean();
  });

  test('a viewer sees endpoints and their deliveries, but cannot add, test or delete', async (t) => {
    if (without(t)) return;
    const res = await fetch(`${origin}/api/v1/webhooks`, {
      method: 'POST',
      headers: { 'x-api-key': betaKey, 'x-tenant-id': 'beta', 'content-type': 'application/json' },
      body: JSON.stringify({ url: `${receiver.url}/hooks/beta`, events: ['*'] }),
    });
    assert.equal(res.status, 201);
    await page.getByLabel('Tenant').selectOption('beta');
    const row = ui.row(/hooks\/beta/);
    await row.getByRole('button', { name: /^Deliveries to/ }).click();
    await page.getByRole('region', { name: /^Deliveries to/ }).waitFor();
    assert.equal(await page.getByRole('button', { name: 'Add endpoint' }).count(), 0);
    assert.equal(await row.getByRole('button', { name: /^Send a test event/ }).count(), 0);
    assert.equal(await row.getByRole('button', { name: /^Delete/ }).count(), 0);
    await page.getByLabel('Tenant').selectOption('acme');
    await ui.row(new RegExp(endpoint())).waitFor();
    ui.assertClean();
  });

  test('delete an endpoint, after confirming', async (t) => {
    if (without(t)) return;
    await ui
      .row(new RegExp(endpoint()))
      .getByRole('button', { name: `Delete ${endpoint()}` })
      .click();
    const confirm = page.getByRole('dialog', { name: 'Delete this webhook endpoint?' });
    await confirm.getByText('This cannot be undone.').waitFor();
    await ui.shot('w5-webhook-delete-confirm');
    await confirm.getByRole('button', { name: 'Delete endpoint' }).click();
    await confirm.waitFor({ state: 'detached' });
    await page.getByText('No webhook endpoints yet').waitFor();
    const list = await fetch(`${origin}/api/v1/webhooks`, {
      headers: { authorization: `Bearer ${token}`, 'x-tenant-id': 'acme' },
    });
    assert.deepEqual(((await list.json()) as { data: unknown[] }).data, []);
    ui.assertClean();
  });
});
