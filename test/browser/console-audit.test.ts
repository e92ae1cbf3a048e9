import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { accessTokenOf, type ConsoleBrowser, cli, openConsoleBrowser, untilPage } from '../support/console-browser.ts';
import { type Env, killAll, type ServerProcess, startServer, tempDatabase } from '../support/processes.ts';

/**
 * The console's Audit log screen (docs/audit.md, docs/people-and-console.md#the-console), in a real browser: an owner's
 * change made in the console appears with the owner as its actor, the filters narrow the log, and a developer or a
 * viewer has neither the screen in the navigation nor its events at its address.
 */

const password = 'a long enough console password';
const people = {
  owner: 'ada@example.com',
  admin: 'al@example.com',
  developer: 'dev@example.com',
  viewer: 'vi@example.com',
} as const;

describe('the audit log screen, per role', () => {
  const db = tempDatabase();
  let env: Env;
  let server: ServerProcess;
  let origin: string;
  let ui: ConsoleBrowser;

  before(async () => {
    env = db.env;
    await cli(['tenants', 'create', 'acme', '--name', 'Acme Corp'], env);
    for (const [role, email] of Object.entries(people)) {
      const name = email.split('@')[0].toUpperCase();
      await cli(['users', 'create', email, '--name', name, '--password-stdin'], env, `${password}\n`);
      await cli(['users', 'grant', email, '--tenant', 'acme', '--role', role], env);
    }
    server = await startServer(env);
    origin = server.url;
    // A change by a key, so the log has more than one actor.
    const token = await accessTokenOf(origin, people.admin, password);
    const res = await fetch(`${origin}/api/v1/integrations/crm`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${token}`, 'x-tenant-id': 'acme', 'content-type': 'application/json' },
      body: JSON.stringify({ connector: 'graphql-1.0.0', name: 'CRM', config: { base_url: 'https://crm.example.com/graphql' } }),
    });
    assert.equal(res.status, 201, await res.text());
  });
  after(async () => {
    await ui?.close();
    await killAll();
    db.cleanup();
  });

  test('owner: a key made in the console is in the log, by the owner, with the fields it set; filters narrow it', async () => {
    ui = await openConsoleBrowser(origin);
    const { page } = ui;
    await ui.signIn(people.owner, password);
    await ui.nav('API keys').click();
    await page.getByRole('button', { name: 'Create key' }).click();
    const form = page.getByRole('dialog', { name: 'Create an API key' });
    await form.getByLabel('Name').fill('audit me');
    await form.getByRole('button', { name: 'Create key' }).click();
    await page.getByRole('button', { name: 'I have stored it' }).click();

    await ui.nav('Audit log').click();
    await page.getByRole('heading', { name: 'Audit log', exact: true }).waitFor();
    const created = ui.row('api_key.created');
    await created.first().waitFor();
    assert.equal(await created.count(), 1);
    const text = await created.innerText();
    assert.match(text, /ADA/);
    assert.match(text, /Person\s+usr_/);
    assert.match(text, /name\s+scopes\s+expires_at\s+rate_limit_per_minute/);
    assert.match(text, /\d{1,2}:\d\d:\d\d/, 'the time shows its seconds');
    assert.match(text, /127\.0\.0\.1/);
    // Sign-ins and the CLI's set-up are there too, each once per event.
    await ui.row('integration.created').waitFor();
    assert.match(await ui.row('integration.created').innerText(), /AL/);
    assert.ok((await ui.row('member.added').count()) >= 4);
    await ui.shot('audit-owner');

    await page.getByLabel('Action').selectOption('integration.created');
    await page.getByRole('button', { name: 'Apply' }).click();
    await untilPage('only integration.created rows', async () => (await page.getByRole('row').count()) === 2);
    assert.match(page.url(), /action=integration\.created/);
    await ui.shot('audit-owner-filtered');

    await page.getByRole('button', { name: 'Clear' }).click();
    await ui.row('api_key.created').waitFor();
    await ui.row('integration.created').getByRole('button', { name: 'Only changes to crm' }).click();
    await untilPage('only the crm row', async () => (await page.getByRole('row').count()) === 2);
    assert.equal(await page.getByLabel('Target ID').inputValue(), 'crm');

    const since = new Date(Date.now() + 3_600_000).toISOString();
    await page.goto(`${origin}/console/t/acme/audit?since=${encodeURIComponent(since)}`);
    await page.getByText('No events match these filters').waitFor();
    ui.assertClean();
    await ui.close();
  });

  test('admin: the screen is there (audit.read through *)', async () => {
    ui = await openConsoleBrowser(origin);
    await ui.signIn(people.admin, password);
    await ui.nav('Audit log').click();
    await ui.row('integration.created').waitFor();
    await ui.shot('audit-admin');
    ui.assertClean();
    await ui.close();
  });

  for (const role of ['developer', 'viewer'] as const) {
    test(`${role}: no Audit log in the navigation, and its address shows no event`, async () => {
      ui = await openConsoleBrowser(origin);
      const { page } = ui;
      await ui.signIn(people[role], password);
      assert.equal(await ui.nav('Audit log').count(), 0);
      await page.goto(`${origin}/console/t/acme/audit`);
      await page.getByText('Not available to your role').waitFor();
      assert.equal(await page.getByRole('table').count(), 0);
      assert.ok(!(await ui.pageHolds('api_key.created')));
      await ui.shot(`audit-${role}`);
      ui.assertClean();
      await ui.close();
    });
  }
});
