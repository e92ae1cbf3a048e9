import assert from 'node:assert/strict';
import type { IncomingHttpHeaders } from 'node:http';
import { after, before, describe, type TestContext, test } from 'node:test';
import type { Page } from 'playwright-core';
import { accessTokenOf, type ConsoleBrowser, cli, openConsoleBrowser, untilPage } from '../support/console-browser.ts';
import { type ServerProcess, startServer, tempDatabase } from '../support/processes.ts';
import { httpUpstream, type RawUpstream } from '../support/raw-upstream.ts';

/**
 * The Webhooks screen in a real browser (test/support/console-browser.ts): the endpoints listed, one added with its signing
 * secret shown once, a test event sent and its delivery listed with its payload and the receiver's answer, resent,
 * edited, its secret rotated (the new one shown once), disabled and enabled, a retried attempt's "next attempt", one
 * deleted after confirming; what a viewer (webhooks.read) may not do, and what a developer may. Written before the
 * webhooks API was merged: on a build without it, the walks that need it are skipped, saying so, and the first test
 * checks that the screen shows the failed load as an error.
 */

const email = 'ida@example.com';
const devEmail = 'dev@example.com';
const password = 'webhooks console password';

/** One request the receiver got. */
interface Got {
  path: string;
  headers: IncomingHttpHeaders;
}
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
  /** The signing secret shown when the endpoint was added. */
  let firstSecret = '';
  /** Every request the receiver got, in order. */
  const received: Got[] = [];
  const endpoint = () => `${receiver.url}/hooks/billing`;
  const to = (path: string) => received.filter((r) => r.path === path);
  const api = (method: string, path: string, payload?: object) =>
    fetch(`${origin}/api/v1${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, 'x-tenant-id': 'acme', 'content-type': 'application/json' },
      body: payload && JSON.stringify(payload),
    });
  const panelOf = (url: string) => page.getByRole('region', { name: `Deliveries to ${url}` });
  const without = (t: TestContext) => {
    if (hasApi) return false;
    t.skip(skipWithoutApi);
    return true;
  };

  before(async () => {
    receiver = await httpUpstream((req, res) => {
      received.push({ path: String(req.url), headers: req.headers });
      // An endpoint that fails, to be retried; the others answer with a body, kept with the attempt.
      if (req.url === '/hooks/failing') res.writeHead(500, { 'content-type': 'text/plain' }).end('upstream down');
      else res.writeHead(200, { 'content-type': 'application/json' }).end('{"received":true}');
    });
    const env = { ...db.env, IX_WEBHOOK_ALLOW_PRIVATE: 'true' };
    await cli(['tenants', 'create', 'acme', '--name', 'Acme Corp'], env);
    await cli(['tenants', 'create', 'beta', '--name', 'Beta Labs'], env);
    await cli(['users', 'create', email, '--name', 'Ida', '--password-stdin'], env, `${password}\n`);
    await cli(['users', 'grant', email, '--tenant', 'acme', '--role', 'owner'], env);
    await cli(['users', 'grant', email, '--tenant', 'beta', '--role', 'viewer'], env);
    await cli(['users', 'create', devEmail, '--name', 'Dev', '--password-stdin'], env, `${password}\n`);
    await cli(['users', 'grant', devEmail, '--tenant', 'acme', '--role', 'developer'], env);
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
    firstSecret = secret;
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
    assert.match(String(received[0].headers['webhook-signature']), /^v1,/);
    const panel = panelOf(endpoint());
    await panel.getByRole('row').filter({ hasText: '200' }).first().waitFor();
    await ui.shot('w4-webhook-deliveries');
    ui.assertClean();
  });

  test('a delivery in detail: the event as sent and the receiver’s answer', async (t) => {
    if (without(t)) return;
    const eventId = String(received[0].headers['webhook-id']);
    const panel = panelOf(endpoint());
    await panel.getByRole('button', { name: `Details of attempt 1 of ${eventId}` }).click();
    const dialog = page.getByRole('dialog', { name: 'Delivery attempt' });
    const payload = dialog.getByLabel('Payload');
    await payload.waitFor();
    assert.match(await payload.innerText(), /"type": "webhook\.test"/);
    assert.equal(await dialog.getByLabel('Response body').innerText(), '{"received":true}');
    assert.match(await dialog.innerText(), /HTTP 200/);
    await ui.shot('w6-webhook-delivery-detail');
    await dialog.getByRole('button', { name: 'Close', exact: true }).first().click();
    await dialog.waitFor({ state: 'detached' });
    ui.assertClean();
  });

  test('resend a delivery: the same event arrives again, as a new attempt', async (t) => {
    if (without(t)) return;
    const eventId = String(received[0].headers['webhook-id']);
    const panel = panelOf(endpoint());
    await panel.getByRole('button', { name: `Resend ${eventId} (attempt 1)` }).click();
    await untilPage('the event is sent again', async () => to('/hooks/billing').length >= 2);
    assert.equal(to('/hooks/billing')[1].headers['webhook-id'], eventId);
    await panel.getByRole('button', { name: `Details of attempt 2 of ${eventId}` }).waitFor();
    await ui.shot('w7-webhook-resent');
    // From the detail as well.
    await panel.getByRole('button', { name: `Details of attempt 2 of ${eventId}` }).click();
    const dialog = page.getByRole('dialog', { name: 'Delivery attempt' });
    await dialog.getByRole('button', { name: 'Resend event' }).click();
    await dialog.waitFor({ state: 'detached' });
    await untilPage('the event is sent a third time', async () => to('/hooks/billing').length >= 3);
    await panel.getByRole('button', { name: `Details of attempt 3 of ${eventId}` }).waitFor();
    ui.assertClean();
  });

  test('edit an endpoint: its events and description', async (t) => {
    if (without(t)) return;
    await ui
      .row(new RegExp(endpoint()))
      .getByRole('button', { name: `Edit ${endpoint()}` })
      .click();
    const dialog = page.getByRole('dialog', { name: 'Edit the webhook endpoint' });
    assert.equal(await dialog.getByLabel('Endpoint URL').inputValue(), endpoint());
    assert.equal(await dialog.getByRole('checkbox', { name: 'execution.failed' }).isChecked(), true);
    await dialog.getByRole('checkbox', { name: 'execution.canceled' }).uncheck();
    await dialog.getByLabel('Description (optional)').fill('billing service (EU)');
    await ui.shot('w8-webhook-edit');
    await dialog.getByRole('button', { name: 'Save changes' }).click();
    await dialog.waitFor({ state: 'detached' });
    const row = ui.row(new RegExp(endpoint()));
    await row.getByText('billing service (EU)').waitFor();
    assert.doesNotMatch(await row.innerText(), /execution\.canceled/);
    const hook = ((await (await api('GET', '/webhooks')).json()) as { data: Array<{ events: string[] }> }).data[0];
    assert.deepEqual(hook.events, ['execution.failed']);
    ui.assertClean();
  });

  test('rotate the signing secret: the new one is shown once, and both sign for a while', async (t) => {
    if (without(t)) return;
    const row = ui.row(new RegExp(endpoint()));
    await row.getByRole('button', { name: `Rotate the signing secret of ${endpoint()}` }).click();
    const confirm = page.getByRole('dialog', { name: 'Rotate the signing secret?' });
    await confirm.getByText('also signs them for 24 hours').waitFor();
    await confirm.getByRole('button', { name: 'Rotate secret' }).click();
    const shown = page.getByRole('dialog', { name: 'New signing secret' });
    const secret = await shown.getByLabel('Signing secret').inputValue();
    assert.match(secret, /^whsec_[A-Za-z0-9+/]{43}=$/);
    assert.notEqual(secret, firstSecret);
    await shown.getByRole('button', { name: 'Copy' }).click();
    await shown.getByText('Copied to the clipboard.').waitFor();
    await ui.shot('w9-webhook-secret-rotated');
    await shown.getByRole('button', { name: 'I have stored it' }).click();
    await shown.waitFor({ state: 'detached' });
    assert.equal(await ui.pageHolds(secret), false, 'the new secret is gone once the dialog closed');
    const before = to('/hooks/billing').length;
    await row.getByRole('button', { name: `Send a test event to ${endpoint()}` }).click();
    await untilPage('the next delivery', async () => to('/hooks/billing').length > before);
    assert.equal(String(to('/hooks/billing').at(-1)?.headers['webhook-signature']).split(' ').length, 2);
    ui.assertClean();
  });

  test('a retried attempt reads "Retried", not a time in the past; the retry reads when it is due', async (t) => {
    if (without(t)) return;
    const failing = `${receiver.url}/hooks/failing`;
    const created = await api('POST', '/webhooks', { url: failing, events: ['*'] });
    assert.equal(created.status, 201);
    const { id } = ((await created.json()) as { data: { id: string } }).data;
    await page.reload();
    await ui
      .row(new RegExp(failing))
      .getByRole('button', { name: `Send a test event to ${failing}` })
      .click();
    const panel = panelOf(failing);
    // The first retry comes about 5 seconds later; the next would be in 5 minutes.
    await panel.getByRole('row').filter({ hasText: 'Retried' }).waitFor();
    const retry = panel.getByRole('row').filter({ has: page.getByRole('button', { name: /^Details of attempt 2 / }) });
    assert.match(await retry.innerText(), /in 5 minutes/);
    assert.match(await panel.getByRole('row').filter({ hasText: 'Retried' }).innerText(), /500/);
    await ui.shot('w10-webhook-retried');
    assert.equal((await api('DELETE', `/webhooks/${id}`)).status, 200);
    await page.reload();
    await ui.row(new RegExp(endpoint())).waitFor();
    ui.assertClean();
  });

  test('disable an endpoint (after confirming) and enable it again', async (t) => {
    if (without(t)) return;
    const row = ui.row(new RegExp(endpoint()));
    await row.getByRole('button', { name: `Deliveries to ${endpoint()}` }).click();
    await row.getByRole('button', { name: `Disable ${endpoint()}` }).click();
    const confirm = page.getByRole('dialog', { name: 'Disable this webhook endpoint?' });
    await confirm.getByText('its waiting retries are dropped').waitFor();
    await confirm.getByRole('button', { name: 'Disable endpoint' }).click();
    await confirm.waitFor({ state: 'detached' });
    await row.getByText('Disabled', { exact: true }).waitFor();
    assert.equal(await row.getByRole('button', { name: /^Send a test event/ }).count(), 0);
    const panel = panelOf(endpoint());
    await panel.getByText('enable it to resend an event').waitFor();
    assert.equal(await panel.getByRole('button', { name: /^Resend/ }).count(), 0);
    await ui.shot('w11-webhook-disabled');
    await row.getByRole('button', { name: `Enable ${endpoint()}` }).click();
    await row.getByText('Active', { exact: true }).waitFor();
    await panel
      .getByRole('button', { name: /^Resend/ })
      .first()
      .waitFor();
    await panel.getByRole('button', { name: 'Close' }).click();
    await panel.waitFor({ state: 'detached' });
    ui.assertClean();
  });

  test('a viewer sees endpoints, their deliveries and their details, but can change nothing', async (t) => {
    if (without(t)) return;
    const beta = (path: string, body?: object) =>
      fetch(`${origin}/api/v1${path}`, {
        method: 'POST',
        headers: { 'x-api-key': betaKey, 'x-tenant-id': 'beta', 'content-type': 'application/json' },
        body: JSON.stringify(body ?? {}),
      });
    await page.getByLabel('Tenant').selectOption('beta');
    await page.getByText('No webhook endpoints yet').waitFor();
    assert.equal(await page.getByRole('button', { name: /Add (endpoint|your first endpoint)/ }).count(), 0);
    await ui.shot('w12-webhooks-viewer-empty');

    const res = await beta('/webhooks', { url: `${receiver.url}/hooks/beta`, events: ['*'] });
    assert.equal(res.status, 201);
    const { id } = ((await res.json()) as { data: { id: string } }).data;
    assert.equal((await beta(`/webhooks/${id}/test`)).status, 200);
    await page.reload();
    const row = ui.row(/hooks\/beta/);
    await row.getByRole('button', { name: /^Deliveries to/ }).click();
    const panel = page.getByRole('region', { name: /^Deliveries to/ });
    await panel.getByRole('button', { name: /^Details of attempt 1/ }).waitFor();
    for (const name of [/^Edit/, /^Disable/, /^Enable/, /^Rotate/, /^Send a test event/, /^Delete/]) {
      assert.equal(await row.getByRole('button', { name }).count(), 0, String(name));
    }
    assert.equal(await page.getByRole('button', { name: 'Add endpoint' }).count(), 0);
    assert.equal(await panel.getByRole('button', { name: /^Resend/ }).count(), 0);
    await ui.shot('w13-webhooks-viewer');
    await panel.getByRole('button', { name: /^Details of attempt 1/ }).click();
    const dialog = page.getByRole('dialog', { name: 'Delivery attempt' });
    await dialog.getByLabel('Response body').waitFor();
    assert.equal(await dialog.getByRole('button', { name: 'Resend event' }).count(), 0);
    await dialog.getByRole('button', { name: 'Close', exact: true }).first().click();
    await page.getByLabel('Tenant').selectOption('acme');
    await ui.row(new RegExp(endpoint())).waitFor();
    ui.assertClean();
  });

  test('a developer may change webhooks: every change control is there', async (t) => {
    if (without(t)) return;
    const dev = await openConsoleBrowser(origin);
    try {
      await dev.signIn(devEmail, password);
      await dev.nav('Webhooks').click();
      const row = dev.row(new RegExp(endpoint()));
      for (const verb of ['Edit', 'Disable', 'Delete'])
        await row.getByRole('button', { name: `${verb} ${endpoint()}` }).waitFor();
      await row.getByRole('button', { name: `Rotate the signing secret of ${endpoint()}` }).waitFor();
      await row.getByRole('button', { name: `Deliveries to ${endpoint()}` }).click();
      const panel = dev.page.getByRole('region', { name: `Deliveries to ${endpoint()}` });
      await panel
        .getByRole('button', { name: /^Resend/ })
        .first()
        .waitFor();
      await dev.page.getByRole('button', { name: 'Add endpoint' }).waitFor();
      await dev.shot('w14-webhooks-developer');
      dev.assertClean();
    } finally {
      await dev.close();
    }
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
