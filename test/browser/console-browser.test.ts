import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { BrowserContext, Page } from 'playwright-core';
import { artifacts, type ConsoleBrowser, cli, openConsoleBrowser, untilPage } from '../support/console-browser.ts';
import { type GraphqlServer, startGraphqlServer } from '../support/graphql-server.ts';
import { type PhpSoapServer, startPhpSoapServer } from '../support/php-soap-server.ts';
import { type Env, type ServerProcess, startServer, tempDatabase } from '../support/processes.ts';

/**
 * The console walked as a person would, in a real browser (test/support/console-browser.ts), against a real server and a
 * real GraphQL upstream. Any console error, page error, failed request, 5xx or request to another host fails the walk;
 * each step leaves a screenshot in test-artifacts/console/.
 */

const email = 'ada@example.com';
const password = 'correct horse battery staple';
const upstreamToken = 'upstream-token-7f3a9c';
const soapToken = 'soap-token-51be0d';

describe('the console in a real browser', () => {
  const db = tempDatabase();
  let env: Env;
  let server: ServerProcess;
  let upstream: GraphqlServer;
  let soap: PhpSoapServer;
  let ui: ConsoleBrowser;
  let context: BrowserContext;
  let page: Page;
  let origin: string;
  let expected: Set<string>;

  const shot = (step: string) => ui.shot(step);
  const assertClean = () => ui.assertClean();
  const pageHolds = (text: string) => ui.pageHolds(text);
  const row = (name: string | RegExp) => ui.row(name);
  const nav = (name: string) => ui.nav(name);

  before(async () => {
    upstream = await startGraphqlServer({ token: upstreamToken });
    soap = await startPhpSoapServer({ requireToken: soapToken });
    env = { ...db.env };
    await cli(['tenants', 'create', 'acme', '--name', 'Acme Corp'], env);
    await cli(['tenants', 'create', 'beta', '--name', 'Beta Labs', '--type', 'sandbox'], env);
    await cli(['users', 'create', email, '--name', 'Ada Lovelace', '--password-stdin'], env, `${password}\n`);
    await cli(['users', 'grant', email, '--tenant', 'acme', '--role', 'owner'], env);
    await cli(['users', 'grant', email, '--tenant', 'beta', '--role', 'viewer'], env);
    server = await startServer(env);
    origin = server.url;

    ui = await openConsoleBrowser(origin, { clipboard: true });
    ({ context, page, expected } = ui);
  });

  after(async () => {
    await ui?.close();
    await server?.stop();
    await upstream?.close();
    await soap?.close();
    db.cleanup();
  });

  test('serves the page with a strict CSP and no inline script but the hashed import map', async () => {
    const response = await page.goto(`${origin}/console`);
    assert.ok(response);
    const csp = response.headers()['content-security-policy'];
    assert.match(csp, /default-src 'self'/);
    assert.match(csp, /script-src 'self' 'sha256-[A-Za-z0-9+/]+=*'(;|$)/);
    assert.match(csp, /frame-ancestors 'none'/);
    assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval/);
    assert.equal(response.headers()['x-content-type-options'], 'nosniff');
    assert.equal(response.headers()['referrer-policy'], 'no-referrer');
    const inline = await page.evaluate(() =>
      [...document.querySelectorAll('script:not([src])')].map((s) => s.getAttribute('type')),
    );
    assert.deepEqual(inline, ['importmap']);
    await page.getByRole('heading', { name: 'Sign in to the console' }).waitFor();
    assert.equal(await page.locator('[style]').count(), 0, 'no inline styles');
    assertClean();
  });

  test('sign in: a wrong password is refused with a message, the right one opens the console', async () => {
    expected.add('401 /api/v1/auth/sign-in');
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill('not the password at all');
    await page.getByRole('button', { name: 'Sign in' }).click();
    const alert = page.getByRole('alert');
    await alert.getByText('Could not sign you in').waitFor();
    assert.match(await alert.innerText(), /invalid_credentials/);
    await shot('01-sign-in-error');
    expected.delete('401 /api/v1/auth/sign-in');

    await page.getByLabel('Password').fill(password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Home', exact: true }).waitFor();
    assert.match(new URL(page.url()).pathname, /^\/console\/t\/acme\/home$/);
    assert.equal(await page.getByLabel('Tenant').inputValue(), 'acme');
    await nav('API keys').click();
    await page.getByText('No API keys yet').waitFor();
    await shot('02-keys-empty');
    assertClean();
  });

  let secret = '';
  test('create a key: its secret is shown once, copied, and nowhere after the dialog closes, reload included', async () => {
    await page.getByRole('button', { name: 'Create key' }).click();
    const dialog = page.getByRole('dialog', { name: 'Create an API key' });
    await dialog.getByLabel('Name').fill('crm sync');
    await dialog.getByRole('checkbox', { name: 'executions.read' }).check();
    await dialog.getByLabel('Rate limit per minute').fill('120');
    await shot('03-key-create-form');
    await dialog.getByRole('button', { name: 'Create key' }).click();

    const shown = page.getByRole('dialog', { name: 'Key “crm sync” created' });
    await shown.getByText('Copy this key now').waitFor();
    secret = await shown.getByLabel('Secret key').inputValue();
    assert.match(secret, /^ix_live_[A-Za-z0-9]{38,}$/);
    await shown.getByRole('button', { name: 'Copy' }).click();
    await shown.getByText('Copied to the clipboard.').waitFor();
    assert.equal(await page.evaluate(() => navigator.clipboard.readText()), secret);
    await shot('04-key-secret-once');
    await shown.getByRole('button', { name: 'I have stored it' }).click();
    await shown.waitFor({ state: 'detached' });

    const created = row('crm sync');
    await created.getByText('Active').waitFor();
    assert.match(await created.innerText(), new RegExp(`${secret.slice(0, 12)}…${secret.slice(-4)}`));
    assert.match(await created.innerText(), /integrations\.execute[\s\S]*executions\.read/);
    assert.match(await created.innerText(), /120\/min/);
    assert.equal(await pageHolds(secret), false, 'the secret is gone once the dialog closed');

    // The key works, and its use shows in the console.
    const me = await fetch(`${origin}/api/v1/me`, { headers: { 'x-api-key': secret, 'x-tenant-id': 'acme' } });
    assert.equal(me.status, 200);
    await page.reload();
    await row('crm sync').waitFor();
    assert.equal(await pageHolds(secret), false, 'nor after a reload');
    await shot('05-keys-list');
    assertClean();
  });

  test('the daily usage of a key as a chart', async () => {
    await untilPage('the key shows it was used', async () => {
      await page.reload();
      await row('crm sync').waitFor();
      // The cells after the name: key, scopes, last used.
      return (await row('crm sync').getByRole('cell').nth(2).innerText()) !== 'never';
    });
    await row('crm sync').getByRole('button', { name: 'Usage of crm sync' }).click();
    const dialog = page.getByRole('dialog', { name: 'Usage of “crm sync”' });
    const chart = dialog.getByRole('img', { name: /1 request and 0 errors over 30 days/ });
    await chart.waitFor();
    assert.equal(await chart.locator('rect.chart__bar').count(), 30);
    await shot('06-key-usage');
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'detached' });
    assertClean();
  });

  test('rotate a key with a chosen overlap: a new secret once, the old key in its overlap', async () => {
    await row('crm sync').getByRole('button', { name: 'Rotate crm sync' }).click();
    const dialog = page.getByRole('dialog', { name: 'Rotate “crm sync”' });
    await dialog.getByLabel('Overlap (seconds)').fill('600');
    await dialog.getByText('The old key stops working after 10 minutes.').waitFor();
    await shot('07-key-rotate');
    await dialog.getByRole('button', { name: 'Rotate key' }).click();
    const shown = page.getByRole('dialog', { name: 'Key “crm sync” rotated' });
    const rotated = await shown.getByLabel('Secret key').inputValue();
    assert.match(rotated, /^ix_live_/);
    assert.notEqual(rotated, secret);
    await shown.getByRole('button', { name: 'I have stored it' }).click();
    await shown.waitFor({ state: 'detached' });
    await untilPage('both keys are listed', async () => (await row('crm sync').count()) === 2);
    await row('crm sync').filter({ hasText: 'Rotating' }).waitFor();
    await row('crm sync').filter({ hasText: 'Active' }).waitFor();
    assert.equal(await pageHolds(rotated), false);
    const old = await fetch(`${origin}/api/v1/me`, { headers: { 'x-api-key': secret, 'x-tenant-id': 'acme' } });
    assert.equal(old.status, 200, 'the old key works during the overlap');
    assertClean();
  });

  test('revoke a key, after confirming', async () => {
    await page.getByRole('button', { name: 'Create key' }).click();
    const form = page.getByRole('dialog', { name: 'Create an API key' });
    await form.getByLabel('Name').fill('old export job');
    await form.getByRole('button', { name: 'Create key' }).click();
    const shown = page.getByRole('dialog', { name: 'Key “old export job” created' });
    const doomed = await shown.getByLabel('Secret key').inputValue();
    await shown.getByRole('button', { name: 'Close' }).click();
    await shown.waitFor({ state: 'detached' });

    await row('old export job').getByRole('button', { name: 'Revoke old export job' }).click();
    const confirm = page.getByRole('dialog', { name: 'Revoke “old export job”?' });
    await confirm.getByText('This cannot be undone.').waitFor();
    await shot('08-key-revoke-confirm');
    await confirm.getByRole('button', { name: 'Revoke key' }).click();
    await confirm.waitFor({ state: 'detached' });
    await row('old export job').getByText('Revoked').waitFor();
    assert.equal(await row('old export job').getByRole('button', { name: 'Rotate old export job' }).count(), 0);
    const refused = await fetch(`${origin}/api/v1/me`, { headers: { 'x-api-key': doomed, 'x-tenant-id': 'acme' } });
    assert.equal(refused.status, 401);
    await shot('09-keys-after-revoke');
    assertClean();
  });

  test('create a GraphQL integration: its token is write-only; run its test', async () => {
    await nav('Integrations').click();
    await page.getByText('No integrations yet').waitFor();
    await page.getByRole('link', { name: 'New integration' }).click();
    await page.getByRole('heading', { name: 'New integration' }).waitFor();
    await page.getByLabel('ID', { exact: true }).fill('people');
    await page.getByLabel('Name', { exact: true }).fill('People directory');
    await page.getByRole('radio', { name: 'GraphQL' }).check();
    await page.getByLabel('Base URL').fill(upstream.origin);
    const auth = page.getByRole('group', { name: 'Authentication', exact: true });
    await auth.getByLabel('Scheme').selectOption({ label: 'Bearer token' });
    await auth.getByLabel('Token').fill(upstreamToken);
    await page.getByLabel('Timeout (seconds)').fill('20');
    await shot('10-integration-new');
    await page.getByRole('button', { name: 'Create integration' }).click();

    await page.getByRole('heading', { name: 'People directory' }).waitFor();
    assert.match(new URL(page.url()).pathname, /^\/console\/t\/acme\/integrations\/people$/);
    await auth.getByText('set', { exact: true }).waitFor();
    assert.equal(await auth.getByLabel('Token').inputValue(), '', 'a secret is never prefilled');
    assert.equal(await pageHolds(upstreamToken), false, 'the token is never shown');
    assert.equal(await page.getByLabel('Base URL').inputValue(), upstream.origin);

    await page.getByRole('button', { name: 'Run test' }).click();
    await page.getByText('GraphQL connection test succeeded').waitFor();
    assert.match(await page.getByLabel('Test details').innerText(), /"query_type": "Query"/);
    await shot('11-integration-test');

    // An edit keeps the token unless it is replaced.
    await page.getByLabel('Timeout (seconds)').fill('25');
    await page.getByRole('button', { name: 'Save changes' }).click();
    await page.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
    await page.getByRole('button', { name: 'Run test' }).click();
    await page.getByText('GraphQL connection test succeeded').waitFor();
    await nav('Integrations').click();
    await row(/People directory/)
      .getByText('GraphQL')
      .waitFor();
    await shot('12-integrations-list');
    assertClean();
  });

  test('create a SOAP integration from a WSDL: the test lists its services, ports and operation signatures', async () => {
    await page.getByRole('link', { name: 'New integration' }).click();
    await page.getByLabel('ID', { exact: true }).fill('calculator');
    await page.getByLabel('Name', { exact: true }).fill('Calculator');
    await page.getByRole('radio', { name: 'SOAP' }).check();
    await page.getByLabel('Endpoint URL').fill(soap.url('/calculator?wsdl'));
    const auth = page.getByRole('group', { name: 'Authentication', exact: true });
    await auth.getByLabel('Scheme').selectOption({ label: 'Header' });
    await auth.getByLabel('Header name').fill('X-Auth-Token');
    await auth.getByLabel('Header value').fill(soapToken);
    await page.getByRole('button', { name: 'Create integration' }).click();
    // Exact: the operations' headings (CalculatorService.…) may be listed by then.
    await page.getByRole('heading', { name: 'Calculator', exact: true }).waitFor();
    await auth.getByText('set', { exact: true }).waitFor();
    assert.equal(await pageHolds(soapToken), false, 'the auth value is never shown');

    await page.getByRole('button', { name: 'Run test' }).click();
    await page.getByText('SOAP connection test succeeded').waitFor();
    const wsdl = page.getByRole('region', { name: 'Connection test' });
    await wsdl
      .getByRole('heading', { name: /^Service / })
      .first()
      .waitFor();
    await wsdl
      .getByRole('heading', { name: /^Port .*SOAP 1\.1/ })
      .first()
      .waitFor();
    const add = wsdl
      .locator('summary')
      .filter({ hasText: /^Add\(/ })
      .first();
    assert.match(await add.innerText(), /^Add\(.+\)( → \S+)?$/);
    await add.click();
    await wsdl.locator('details[open] .params li').first().waitFor();
    await shot('12b-soap-wsdl-operations');
    await nav('Integrations').click();
    await row(/Calculator/)
      .getByText('SOAP')
      .waitFor();
    assertClean();
  });

  test('"New integration" with a taken id is refused and replaces nothing; a save over someone’s change is refused too', async () => {
    const path = '/api/v1/integrations/people';
    expected.add(`412 ${path}`);
    await nav('Integrations').click();
    await page.getByRole('link', { name: 'New integration' }).click();
    await page.getByLabel('ID', { exact: true }).fill('people');
    await page.getByLabel('Name', { exact: true }).fill('Not the people directory');
    await page.getByRole('radio', { name: 'SOAP' }).check();
    await page.getByLabel('Endpoint URL').fill(soap.url('/calculator?wsdl'));
    await page.getByRole('button', { name: 'Create integration' }).click();
    const notSaved = page.getByRole('alert').filter({ hasText: 'Not saved' });
    await notSaved.getByText('An integration with the id “people” already exists; nothing was changed.').waitFor();
    assert.match(await notSaved.innerText(), /precondition_failed/);
    await shot('12c-integration-id-taken');
    // The integration is as it was: GraphQL, its name and its token.
    await nav('Integrations').click();
    await row(/People directory/)
      .getByText('GraphQL')
      .waitFor();

    // Two tabs on one integration: the second saves first, so the first tab's save is refused, not written over it.
    await row(/People directory/)
      .getByRole('link')
      .first()
      .click();
    await page.getByRole('heading', { name: 'People directory' }).waitFor();
    const other = await context.newPage();
    await other.goto(page.url());
    await other.getByLabel('Timeout (seconds)').fill('40');
    await other.getByRole('button', { name: 'Save changes' }).click();
    await other.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
    await other.close();
    await page.getByLabel('Timeout (seconds)').fill('15');
    await page.getByRole('button', { name: 'Save changes' }).click();
    await notSaved.getByText('Someone changed or deleted this integration after you opened it').waitFor();
    await shot('12d-integration-stale-save');
    await page.getByRole('button', { name: 'Reload the current version' }).click();
    await untilPage(
      'the other tab’s change shown',
      async () => (await page.getByLabel('Timeout (seconds)').inputValue()) === '40',
    );
    assert.equal(await notSaved.count(), 0, 'the refusal is gone with the reload');
    await page.getByLabel('Timeout (seconds)').fill('15');
    await page.getByRole('button', { name: 'Save changes' }).click();
    await page.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
    expected.delete(`412 ${path}`);
    assertClean();
  });

  test('try it out: run a receive, then a request that fails', async () => {
    await nav('Try it out').click();
    await page.getByRole('heading', { name: 'Try it out' }).waitFor();
    await page.getByLabel('Integration').selectOption('people');
    await page.getByLabel('Operation').selectOption('receive');
    const query =
      'query($after: String) { users(first: 5, after: $after) { totalCount edges { node { id name } } pageInfo { hasNextPage endCursor } } }';
    await page.getByLabel('Body (JSON)').fill(JSON.stringify({ query, paginate: { max_pages: 2 } }, null, 2));
    await page.getByRole('button', { name: 'Run', exact: true }).click();
    const response = page.getByRole('region', { name: 'Response' });
    await response.getByText('HTTP 200').waitFor();
    await response.getByLabel('Server-Timing').getByText('upstream').waitFor();
    const body = JSON.parse(await response.getByLabel('Response body').innerText());
    assert.equal(body.success, true);
    assert.equal(body.data.message_count, 10);
    assert.equal(body.data.data[0].name, 'User 1');
    await shot('13-try-it-out');

    expected.add('400 /api/v1/integrations/people/execute');
    await page.getByLabel('Body (JSON)').fill(JSON.stringify({ query: '{ users( }' }));
    await page.getByRole('button', { name: 'Run', exact: true }).click();
    await response.getByText('HTTP 400').waitFor();
    await response.getByText('validation_failed', { exact: true }).waitFor();
    await shot('14-try-it-out-failure');

    // A body that is not JSON never leaves the page.
    await page.getByLabel('Body (JSON)').fill('{ not json');
    await page.getByRole('button', { name: 'Run', exact: true }).click();
    await page.locator('.field__error').filter({ hasText: /JSON/ }).waitFor();
    assertClean();
  });

  test('executions: filter the list, open a failure and read its error', async () => {
    await nav('Executions').click();
    await page.getByRole('heading', { name: 'Executions' }).waitFor();
    const table = page.getByRole('table');
    await untilPage(
      'the three tests and the two executes are listed',
      async () => (await table.getByRole('row').count()) === 1 + 5,
    );
    await page.getByLabel('Status').selectOption('failed');
    await untilPage('only the failure is listed', async () => (await table.getByRole('row').count()) === 2);
    await page.getByLabel('Integration').selectOption('people');
    await page.getByLabel('Started').selectOption('1h');
    await untilPage('the filters are in the address', async () => page.url().includes('status=failed'));
    const failed = table.getByRole('row').nth(1);
    assert.match(await failed.innerText(), /people[\s\S]*failed[\s\S]*400[\s\S]*validation_failed/);
    await shot('15-executions-filtered');

    await failed.getByRole('link').click();
    await page.getByRole('heading', { name: 'Execution', exact: true }).waitFor();
    const error = page.getByRole('region', { name: 'Error' });
    await error.getByText('validation_failed').waitFor();
    assert.match(await page.getByLabel('Error details').innerText(), /"issues"/);
    assert.match(await page.locator('.details').first().innerText(), /Caller\s+Ada Lovelace\s+usr_/);
    await shot('16-execution-detail');

    // The filter survives going back.
    await page.goBack();
    await untilPage('the failed filter is back', async () => (await page.getByLabel('Status').inputValue()) === 'failed');
    await page.getByLabel('Status').selectOption('succeeded');
    await untilPage('the successes are listed', async () => (await table.getByRole('row').count()) === 1 + 3);
    assertClean();
  });

  test('a reload keeps the session (the refresh cookie), and the tenant can be switched', async () => {
    await page.reload();
    await page.getByRole('heading', { name: 'Executions' }).waitFor();
    assert.equal(await page.getByRole('heading', { name: 'Sign in to the console' }).count(), 0);
    const cookies = await context.cookies(`${origin}/api/v1/auth/refresh`);
    const refresh = cookies.find((c) => c.name === 'ix_refresh');
    assert.ok(refresh, 'the refresh cookie');
    assert.equal(refresh.httpOnly, true);
    assert.equal(refresh.sameSite, 'Strict');
    assert.equal(refresh.path, '/api/v1/auth');
    assert.equal(await page.evaluate(() => document.cookie.includes('ix_refresh')), false);
    await shot('17-after-reload');

    await page.getByLabel('Tenant').selectOption('beta');
    await untilPage('the beta tenant is open', async () => new URL(page.url()).pathname === '/console/t/beta/executions');
    await nav('API keys').click();
    await page.getByText('No API keys yet').waitFor();
    assert.equal(await page.getByRole('button', { name: 'Create key' }).count(), 0, 'a viewer cannot create keys');
    await page.getByLabel('Tenant').selectOption('acme');
    await row('crm sync').first().waitFor();
    assertClean();
  });

  test('a 390 px wide screen', async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    await page.reload();
    await row('crm sync').first().waitFor();
    assert.ok(await page.evaluate(() => document.documentElement.scrollWidth <= 390), 'no sideways scrolling');
    await page.screenshot({ path: `${artifacts}/18-mobile-390.png` });
    await nav('Try it out').click();
    await page.getByRole('button', { name: 'Run', exact: true }).waitFor();
    assert.ok(await page.evaluate(() => document.documentElement.scrollWidth <= 390), 'no sideways scrolling');
    await page.screenshot({ path: `${artifacts}/19-mobile-390-try.png` });
    await page.setViewportSize({ width: 1440, height: 900 });
    assertClean();
  });

  test('sign out ends the session: a reload asks to sign in again', async () => {
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { name: 'Sign in to the console' }).waitFor();
    await page.reload();
    await page.getByRole('heading', { name: 'Sign in to the console' }).waitFor();
    assert.equal(
      (await context.cookies(origin)).find((c) => c.name === 'ix_refresh'),
      undefined,
    );
    await shot('20-signed-out');
    assertClean();
  });
});
