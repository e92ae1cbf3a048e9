import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { accessTokenOf, type ConsoleBrowser, cli, openConsoleBrowser } from '../support/console-browser.ts';
import { type Env, killAll, type ServerProcess, startServer, tempDatabase } from '../support/processes.ts';

/**
 * The console's Members screen (docs/people-and-console.md#the-console) in a real browser, per role: an owner adds a
 * member by email, changes the role and removes them; an admin manages everyone but owners; a developer and a viewer
 * see the members and their own role, and no control that changes them. Each role's screen is photographed.
 */

const password = 'a long enough console password';
const people = {
  owner: 'ada@example.com',
  admin: 'al@example.com',
  developer: 'dev@example.com',
  viewer: 'vi@example.com',
} as const;
/** An account with no tenant yet: the owner adds it. */
const newcomer = 'nell@example.com';

describe('the Members screen, per role', () => {
  const db = tempDatabase();
  let env: Env;
  let server: ServerProcess;
  let origin: string;
  let ui: ConsoleBrowser;
  let page: Page;

  /** The tenant's members as the API lists them, `email: role`. */
  async function membersNow(): Promise<Record<string, string>> {
    const token = await accessTokenOf(origin, people.owner, password);
    const res = await fetch(`${origin}/api/v1/members`, { headers: { authorization: `Bearer ${token}`, 'x-tenant-id': 'acme' } });
    const { data } = (await res.json()) as { data: Array<{ user: { email: string }; role: string }> };
    return Object.fromEntries(data.map((m) => [m.user.email, m.role]));
  }

  async function openAs(email: string): Promise<void> {
    await ui.signIn(email, password);
    await ui.nav('Members').click();
    await page.getByRole('heading', { name: 'Members', level: 1 }).waitFor();
    await ui.row(/ada@example\.com/).waitFor();
  }

  async function signOut(): Promise<void> {
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('Email').waitFor();
  }

  before(async () => {
    env = db.env;
    await cli(['tenants', 'create', 'acme', '--name', 'Acme Corp'], env);
    for (const [role, email] of Object.entries(people)) {
      const name = email.split('@')[0].replace(/^./, (c) => c.toUpperCase());
      await cli(['users', 'create', email, '--name', name, '--password-stdin'], env, `${password}\n`);
      await cli(['users', 'grant', email, '--tenant', 'acme', '--role', role], env);
    }
    await cli(['users', 'create', newcomer, '--name', 'Nell', '--password-stdin'], env, `${password}\n`);
    server = await startServer(env);
    origin = server.url;
    ui = await openConsoleBrowser(origin);
    page = ui.page;
  });
  after(async () => {
    await ui?.close();
    await killAll();
    db.cleanup();
  });

  test('owner: every member with their role; add one by email, change the role, remove them', async () => {
    await openAs(people.owner);
    assert.match(await page.locator('.page-header').innerText(), /Your role here is owner/);
    for (const [role, email] of Object.entries(people))
      assert.match(await ui.row(new RegExp(email)).innerText(), new RegExp(role));
    assert.match(await ui.row(/ada@example\.com/).innerText(), /\(you\)[\s\S]*the only owner/);
    // The last owner is neither demoted nor removed: nothing offered on that row.
    assert.equal(
      await ui
        .row(/ada@example\.com/)
        .getByRole('button')
        .count(),
      0,
    );
    await ui.shot('m1-members-owner');

    // An email with no account: the API's answer, in the dialog.
    ui.expected.add('404 /api/v1/members');
    await page.getByRole('button', { name: 'Add member' }).click();
    const add = page.getByRole('dialog', { name: 'Add a member' });
    await add.getByLabel('Email').fill('nobody@example.com');
    await add.getByRole('button', { name: 'Add member' }).click();
    const refused = add.getByRole('alert').filter({ hasText: 'The member was not added' });
    await refused.waitFor();
    assert.match(await refused.innerText(), /interchange users create[\s\S]*not_found/);

    // With the keyboard only: the email, then the role select (typed to), then the submit button.
    await add.getByLabel('Email').fill('');
    await add.getByLabel('Email').focus();
    await page.keyboard.type(newcomer);
    await page.keyboard.press('Tab');
    assert.equal(await add.getByLabel('Role').evaluate((e) => e === document.activeElement), true, 'Tab reaches the role');
    await page.keyboard.press('d');
    assert.equal(await add.getByLabel('Role').inputValue(), 'developer');
    assert.deepEqual(await add.getByRole('option').allTextContents(), ['owner', 'admin', 'developer', 'viewer']);
    await ui.shot('m2-members-add');
    await page.keyboard.press('Tab');
    await page.keyboard.press('Tab');
    await page.keyboard.press('Enter');
    await add.waitFor({ state: 'detached' });
    const row = ui.row(/nell@example\.com/);
    await row.getByText('developer').waitFor();
    assert.equal((await membersNow())[newcomer], 'developer');

    await row.getByRole('button', { name: `Change the role of ${newcomer}` }).click();
    const change = page.getByRole('dialog', { name: 'Change the role of Nell' });
    assert.equal(await change.getByRole('button', { name: 'Change role' }).isDisabled(), true, 'the same role is no change');
    await change.getByLabel('Role').selectOption('viewer');
    await ui.shot('m3-members-change-role');
    await change.getByRole('button', { name: 'Change role' }).click();
    await change.waitFor({ state: 'detached' });
    await row.getByText('viewer').waitFor();
    assert.equal((await membersNow())[newcomer], 'viewer');

    await row.getByRole('button', { name: `Remove ${newcomer}` }).click();
    const confirm = page.getByRole('dialog', { name: 'Remove this member?' });
    assert.match(await confirm.innerText(), /nell@example\.com will no longer reach acme/);
    await ui.shot('m4-members-remove-confirm');
    await confirm.getByRole('button', { name: 'Remove member' }).click();
    await row.waitFor({ state: 'detached' });
    assert.equal((await membersNow())[newcomer], undefined);
    ui.assertClean();
    await signOut();
  });

  test('admin: changes developers and viewers, not owners, and cannot make one', async () => {
    await openAs(people.admin);
    assert.equal(
      await ui
        .row(/ada@example\.com/)
        .getByRole('button')
        .count(),
      0,
    );
    await ui
      .row(/dev@example\.com/)
      .getByRole('button', { name: 'Change the role of dev@example.com' })
      .waitFor();
    await ui
      .row(/vi@example\.com/)
      .getByRole('button', { name: 'Remove vi@example.com' })
      .waitFor();
    await page.getByRole('button', { name: 'Add member' }).click();
    const add = page.getByRole('dialog', { name: 'Add a member' });
    assert.deepEqual(await add.getByRole('option').allTextContents(), ['admin', 'developer', 'viewer']);
    await add.getByRole('button', { name: 'Cancel' }).click();
    await add.waitFor({ state: 'detached' });
    await ui.shot('m5-members-admin');
    ui.assertClean();
    await signOut();
  });

  for (const role of ['developer', 'viewer'] as const) {
    test(`${role}: the members and their own role, and no control that changes them`, async () => {
      await openAs(people[role]);
      assert.match(await page.locator('.page-header').innerText(), new RegExp(`Your role here is ${role}`));
      assert.match(await ui.row(new RegExp(people[role])).innerText(), new RegExp(`\\(you\\)[\\s\\S]*${role}`));
      assert.equal(await page.getByRole('button', { name: 'Add member' }).count(), 0);
      assert.equal(await page.getByRole('main').getByRole('button').count(), 0);
      assert.match(await page.locator('.page-header').innerText(), /owners and admins add, change and remove members/);
      await ui.shot(`m6-members-${role}`);
      if (role === 'viewer') {
        // A phone's width: the rows stack, nothing runs off the screen.
        await page.setViewportSize({ width: 390, height: 844 });
        assert.equal(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth), true);
        await ui.shot('m8-members-390px');
        await page.setViewportSize({ width: 1440, height: 900 });
      }
      ui.assertClean();
      await signOut();
    });
  }

  test('a list that fails to load is an error notice, not a crash', async () => {
    const isList = (url: URL) => url.pathname === '/api/v1/members';
    await page.route(isList, (route) =>
      route.fulfill({
        status: 429,
        contentType: 'application/json',
        headers: { 'retry-after': '1', 'x-request-id': 'req-members-test' },
        body: JSON.stringify({
          success: false,
          error: { code: 'rate_limited', message: 'Too many requests.' },
          request_id: 'req-members-test',
        }),
      }),
    );
    ui.expected.add('429 /api/v1/members');
    await ui.signIn(people.viewer, password);
    await ui.nav('Members').click();
    const alert = page.getByRole('alert').filter({ hasText: 'Could not load the members' });
    await alert.waitFor();
    assert.match(await alert.innerText(), /rate_limited[\s\S]*Request ID/);
    assert.equal(await page.getByRole('table').count(), 0);
    await ui.shot('m7-members-load-error');
    await page.unroute(isList);
    ui.assertClean();
  });
});
