import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Locator, Page } from 'playwright-core';
import { accessTokenOf, type ConsoleBrowser, cli, openConsoleBrowser } from '../support/console-browser.ts';
import { type GraphqlServer, startGraphqlServer } from '../support/graphql-server.ts';
import { type ServerProcess, startServer, tempDatabase } from '../support/processes.ts';
import { TestPki } from '../support/test-pki.ts';

/**
 * The integration form's credential sections (issue 19), walked in a real browser as console-browser.test.ts walks the
 * rest: Authentication with each scheme, TLS with its certificates' facts, SOAP's WS-Security. What the form saved is
 * read back through the API; no secret may be in the page once saved, and a secret left empty is not sent.
 */

const email = 'grace@example.com';
const password = 'another correct horse staple';
const basicPassword = 'basic-pass-93c1e7';
const bearerToken = 'bearer-token-4d2f8a';
const wsPassword = 'wsse-pass-b71c05';
const secrets = [basicPassword, bearerToken, wsPassword];

describe('the console’s credential sections in a real browser', () => {
  const db = tempDatabase();
  const pki = new TestPki();
  let server: ServerProcess;
  let upstream: GraphqlServer;
  let ui: ConsoleBrowser;
  let page: Page;
  let origin: string;
  let accessToken = '';
  /** The bodies of the console's writes to an integration, in order. */
  const writes: { method: string; path: string; body: Record<string, unknown> }[] = [];

  const shot = (step: string) => ui.shot(step);
  const assertClean = () => ui.assertClean();
  const section = (name: string): Locator => page.getByRole('group', { name, exact: true });
  const pageHolds = (text: string) => ui.pageHolds(text);
  const stored = async (id: string) => {
    const response = await fetch(`${origin}/api/v1/integrations/${id}`, {
      headers: { authorization: `Bearer ${accessToken}`, 'x-tenant-id': 'acme' },
    });
    assert.equal(response.status, 200);
    return ((await response.json()) as { data: { config: Record<string, unknown> } }).data.config;
  };
  const save = async () => {
    await page.getByRole('button', { name: 'Save changes' }).click();
    await page.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
  };

  before(async () => {
    upstream = await startGraphqlServer({ token: bearerToken });
    const env = { ...db.env };
    await cli(['tenants', 'create', 'acme', '--name', 'Acme Corp'], env);
    await cli(['users', 'create', email, '--name', 'Grace Hopper', '--password-stdin'], env, `${password}\n`);
    await cli(['users', 'grant', email, '--tenant', 'acme', '--role', 'owner'], env);
    server = await startServer(env);
    origin = server.url;

    ui = await openConsoleBrowser(origin);
    page = ui.page;
    page.on('request', (request) => {
      const path = new URL(request.url()).pathname;
      if (/^\/api\/v1\/integrations\/[^/]+$/.test(path) && ['PUT', 'PATCH'].includes(request.method())) {
        writes.push({ method: request.method(), path, body: request.postDataJSON() });
      }
    });

    await ui.signIn(email, password);
    accessToken = await accessTokenOf(origin, email, password);
  });

  after(async () => {
    await ui?.close();
    await server?.stop();
    await upstream?.close();
    pki.remove();
    db.cleanup();
  });

  test('create a GraphQL integration with Basic auth: the API holds the password, the page does not', async () => {
    await page.goto(`${origin}/console/t/acme/new-integration`);
    await page.getByRole('heading', { name: 'New integration' }).waitFor();
    await page.getByLabel('ID', { exact: true }).fill('crm');
    await page.getByLabel('Name', { exact: true }).fill('CRM');
    await page.getByLabel('Base URL').fill(upstream.origin);
    const auth = section('Authentication');
    await auth.getByLabel('Scheme').selectOption({ label: 'Basic' });
    await auth.getByLabel('Username').fill('ada');
    await auth.getByLabel('Password', { exact: true }).fill(basicPassword);
    assert.equal(await auth.getByLabel('Password', { exact: true }).getAttribute('type'), 'password');
    await shot('c1-auth-basic-new');
    await page.getByRole('button', { name: 'Create integration' }).click();

    await page.getByRole('heading', { name: 'CRM' }).waitFor();
    assert.deepEqual((await stored('crm')).auth, { type: 'basic', username: 'ada', password_set: true });
    await auth.getByText('leave empty to keep it').waitFor();
    assert.equal(await auth.getByLabel('Password', { exact: true }).inputValue(), '', 'never prefilled');
    assert.equal(await auth.getByLabel('Username').inputValue(), 'ada');
    assert.equal(await pageHolds(basicPassword), false);
    assertClean();
  });

  test('edit only the username: the password is not sent, and kept', async () => {
    const auth = section('Authentication');
    await auth.getByLabel('Username').fill('ada.lovelace');
    await save();
    const patch = writes.at(-1);
    assert.equal(patch?.method, 'PATCH');
    assert.deepEqual(patch?.body.config && (patch.body.config as Record<string, unknown>).auth, {
      type: 'basic',
      username: 'ada.lovelace',
    });
    assert.deepEqual((await stored('crm')).auth, { type: 'basic', username: 'ada.lovelace', password_set: true });
    assertClean();
  });

  test('switch to a bearer token: the old scheme goes, the token works upstream', async () => {
    const auth = section('Authentication');
    await auth.getByLabel('Scheme').selectOption({ label: 'Bearer token' });
    assert.equal(await auth.getByText('leave empty to keep it').count(), 0, 'a new scheme has no stored secret');
    await auth.getByLabel('Token').fill(bearerToken);
    await save();
    assert.deepEqual((await stored('crm')).auth, { type: 'bearer', token_set: true });
    await page.getByRole('button', { name: 'Run test' }).click();
    await page.getByText('GraphQL connection test succeeded').waitFor();
    assert.equal(upstream.requests.at(-1)?.headers.authorization, `Bearer ${bearerToken}`);
    assert.equal(await pageHolds(bearerToken), false);
    assertClean();
  });

  test('TLS: a CA bundle pasted as PEM is shown by its facts, never as PEM', async () => {
    const ca = pki.ca('console-ca', 'Console Test Root');
    const tls = section('TLS');
    await tls.getByRole('checkbox', { name: 'Custom TLS settings for this integration' }).check();
    await tls.getByLabel('CA bundle', { exact: true }).fill(ca.cert);
    await tls.getByLabel('Minimum version').selectOption('TLSv1.3');
    await save();

    const config = await stored('crm');
    const view = config.tls as { ca: { subject: string; fingerprint_sha256: string }[]; min_version: string };
    assert.equal(view.min_version, 'TLSv1.3');
    assert.match(view.ca[0].subject, /CN=Console Test Root/);
    const facts = tls.getByRole('list', { name: 'Stored CA certificates' });
    await facts
      .getByText(/CN=Console Test Root/)
      .first()
      .waitFor();
    assert.match(await facts.innerText(), new RegExp(view.ca[0].fingerprint_sha256));
    assert.equal(await tls.getByLabel('CA bundle', { exact: true }).inputValue(), '');
    assert.equal(await pageHolds('BEGIN CERTIFICATE-----\nMII'), false, 'no PEM in the page');
    await tls.getByLabel('Client key', { exact: true }).waitFor();
    await shot('c2-graphql-auth-tls');
    assertClean();
  });

  test('a certificate that expires within 30 days: marked in the facts, and a warning in the test result', async () => {
    const soon = pki.sign('console-ca', 'console-soon', { cn: 'Soon Expiring', usage: 'serverAuth', days: 10 });
    const tls = section('TLS');
    await tls.getByLabel('CA bundle', { exact: true }).fill(`${pki.ca('console-ca-2', 'Second Root').cert}${soon.cert}`);
    await save();
    const facts = tls.getByRole('list', { name: 'Stored CA certificates' });
    await facts.getByText(/CN=Soon Expiring/).waitFor();
    assert.equal(await facts.getByRole('listitem').count(), 2);
    assert.equal(await facts.getByText('expires soon').count(), 1);

    await page.getByRole('button', { name: 'Run test' }).click();
    await page.getByText('GraphQL connection test succeeded').waitFor();
    const warning = page.getByRole('region', { name: 'Connection test' }).locator('.notice--warning');
    assert.match(await warning.innerText(), /Warning[\s\S]*config\.tls\.ca certificate CN=Soon Expiring.*expires on/);
    await shot('c2b-tls-warning');
    assertClean();
  });

  test('a SOAP integration with a WS-Security UsernameToken', async () => {
    await page.goto(`${origin}/console/t/acme/new-integration`);
    await page.getByLabel('ID', { exact: true }).fill('ledger');
    await page.getByRole('radio', { name: 'SOAP' }).check();
    await page.getByLabel('Endpoint URL').fill('https://soap.example.test/ledger');
    const wss = section('WS-Security');
    await wss.getByRole('checkbox', { name: 'UsernameToken' }).check();
    await wss.getByLabel('Username', { exact: true }).fill('ledger-client');
    await wss.getByLabel('Password', { exact: true }).fill(wsPassword);
    await wss.getByLabel('Password type').selectOption('digest');
    await wss.getByRole('checkbox', { name: 'Timestamp' }).check();
    await wss.getByRole('checkbox', { name: 'Signature' }).check();
    await shot('c3-soap-ws-security-new');
    await wss.getByRole('checkbox', { name: 'Signature' }).uncheck();
    await page.getByRole('button', { name: 'Create integration' }).click();
    await page.getByRole('heading', { name: 'ledger' }).waitFor();

    const config = await stored('ledger');
    assert.deepEqual(config.ws_security, {
      username_token: { username: 'ledger-client', password_type: 'digest', password_set: true },
      timestamp: { ttl_seconds: 300 },
    });
    await wss.getByText('leave empty to keep it').waitFor();
    assert.equal(await wss.getByRole('checkbox', { name: 'UsernameToken' }).isChecked(), true);
    assertClean();
  });

  test('a WS-Security signature: the certificate shown by its facts, the key write-only', async () => {
    const signer = pki.sign('console-ca', 'console-signer', { cn: 'Ledger Signer', usage: 'clientAuth' });
    const wss = section('WS-Security');
    await wss.getByRole('checkbox', { name: 'Signature' }).check();
    await wss.getByLabel('Signing certificate', { exact: true }).fill(signer.cert);
    await wss.getByLabel('Signing key', { exact: true }).fill(signer.key);
    await wss.getByLabel('Signature algorithm').selectOption('ecdsa-sha256');
    await wss.getByLabel('Key reference').selectOption('issuer_serial');
    await save();
    const signature = ((await stored('ledger')).ws_security as { signature: Record<string, unknown> }).signature;
    assert.equal(signature.private_key_set, true);
    assert.equal(signature.key_reference, 'issuer_serial');
    assert.match((signature.certificate as { subject: string }).subject, /CN=Ledger Signer/);
    await wss
      .getByRole('list', { name: 'Stored signing certificate' })
      .getByText(/CN=Ledger Signer/)
      .waitFor();
    assert.equal(await wss.getByLabel('Signing key', { exact: true }).inputValue(), '');
    assert.equal(await pageHolds(signer.key.split('\n')[1]), false, 'the key is not in the page');
    assertClean();
  });

  test('an integration on the older token field moves to auth when its section changes', async () => {
    const put = await fetch(`${origin}/api/v1/integrations/legacy`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${accessToken}`, 'x-tenant-id': 'acme', 'content-type': 'application/json' },
      body: JSON.stringify({ connector: 'graphql-1.0.0', config: { base_url: upstream.origin, token: bearerToken } }),
    });
    assert.equal(put.status, 201);
    await page.goto(`${origin}/console/t/acme/integrations/legacy`);
    const auth = section('Authentication');
    assert.equal(await auth.getByLabel('Scheme').inputValue(), 'bearer');
    await auth.getByText('Kept in the older token field: a change here moves it to auth').waitFor();
    // An edit elsewhere leaves the older field as it is.
    await page.getByLabel('Timeout (seconds)').fill('15');
    await save();
    const sent = writes.at(-1)?.body.config as Record<string, unknown>;
    assert.equal(sent.timeout_seconds, 15);
    assert.equal('auth' in sent || 'token' in sent, false, 'an untouched section sends nothing');
    assert.equal((await stored('legacy')).token_set, true);

    await auth.getByLabel('Token').fill(bearerToken);
    await save();
    const config = await stored('legacy');
    assert.equal(config.token_set, false);
    assert.deepEqual(config.auth, { type: 'bearer', token_set: true });
    await page.getByRole('button', { name: 'Run test' }).click();
    await page.getByText('GraphQL connection test succeeded').waitFor();
    assertClean();
  });

  test('every control of the form has a label, and no spellchecker reads a key or a PEM', async () => {
    await page.goto(`${origin}/console/t/acme/integrations/ledger`);
    const wss = section('WS-Security');
    await wss.getByRole('checkbox', { name: 'Signature' }).check();
    await section('TLS').getByRole('checkbox', { name: 'Custom TLS settings for this integration' }).check();
    await section('Authentication').getByLabel('Scheme').selectOption({ label: 'OAuth2 client credentials' });
    const unlabelled = await page.evaluate(() =>
      [...document.querySelectorAll('form input, form select, form textarea')]
        .filter((c) => (c as HTMLInputElement).labels?.length === 0)
        .map((c) => c.outerHTML),
    );
    assert.deepEqual(unlabelled, []);
    const spellchecked = await page.evaluate(() =>
      [...document.querySelectorAll('form textarea, form input[type=password]')]
        .filter((c) => (c as HTMLElement).spellcheck)
        .map((c) => c.id),
    );
    assert.deepEqual(spellchecked, []);
    // Keyboard: the scheme select and the fields it reveals are reached with Tab.
    await section('Authentication').getByLabel('Scheme').focus();
    await page.keyboard.press('Tab');
    assert.equal(
      await page.evaluate(() => document.activeElement?.id),
      await section('Authentication').getByLabel('Token URL').getAttribute('id'),
    );
    await shot('c4-soap-all-sections');
    assertClean();
  });

  test('a 390 px wide screen: the sections, the certificate facts and their fingerprints fit', async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    for (const id of ['crm', 'ledger']) {
      await page.goto(`${origin}/console/t/acme/integrations/${id}`);
      await page.getByRole('list', { name: id === 'crm' ? 'Stored CA certificates' : 'Stored signing certificate' }).waitFor();
      assert.ok(await page.evaluate(() => document.documentElement.scrollWidth <= 390), `${id}: no sideways scrolling`);
    }
    await shot('c5-mobile-390');
    await page.setViewportSize({ width: 1440, height: 900 });
    assertClean();
  });

  test('no secret is in the page after saving, on either integration', async () => {
    for (const id of ['ledger', 'crm', 'legacy']) {
      await page.goto(`${origin}/console/t/acme/integrations/${id}`);
      await section('Authentication').waitFor();
      const content = await page.content();
      for (const secret of secrets) assert.equal(content.includes(secret), false, `${id} page holds a secret`);
      for (const secret of secrets) assert.equal(await pageHolds(secret), false);
    }
    assertClean();
  });
});
