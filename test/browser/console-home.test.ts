import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { after, before, describe, test } from 'node:test';
import { promisify } from 'node:util';
import type { Locator, Page } from 'playwright-core';
import { accessTokenOf, type ConsoleBrowser, cli, openConsoleBrowser, untilPage } from '../support/console-browser.ts';
import { type GraphqlServer, startGraphqlServer } from '../support/graphql-server.ts';
import { type Env, type ServerProcess, startServer, tempDatabase } from '../support/processes.ts';

/**
 * The console a team lives in (issue 34), in a real browser: the home screen one lands on (the tenant's id to copy, a
 * first call ready to paste, the docs, what ran lately), try-it-out's checkbox, document and "Copy as curl", the
 * executions' callers by name, their seconds, plurals and search by id, and empty states that offer each role only what
 * it may do. Copied commands are run with curl, as a person would paste them.
 */

const password = 'a long enough console password';
const people = {
  owner: { email: 'ada@example.com', name: 'Ada Lovelace' },
  developer: { email: 'grace@example.com', name: 'Grace Hopper' },
  viewer: { email: 'linus@example.com', name: 'Linus Pauling' },
} as const;
type Role = keyof typeof people;

const run = promisify(execFile);

/** Runs a copied curl command in a shell with `IX_API_KEY` set, as a person pastes it; answers the parsed body. */
async function paste(command: string, key: string): Promise<{ success: boolean; data: Record<string, unknown> }> {
  const { stdout } = await run('sh', ['-c', command], { env: { PATH: process.env.PATH ?? '', IX_API_KEY: key } });
  return JSON.parse(stdout);
}

describe('the console a team lives in', () => {
  const db = tempDatabase();
  let env: Env;
  let server: ServerProcess;
  let upstream: GraphqlServer;
  let ui: ConsoleBrowser;
  let page: Page;
  let origin: string;
  let key = '';
  let keyId = '';
  let ownerToken = '';
  /** Executions made in `before`: a receive and a send by the key, and a failure. */
  let received = '';
  let sent = '';
  let failed = '';

  const main = (): Locator => page.getByRole('main');
  const clipboard = () => page.evaluate(() => navigator.clipboard.readText());
  const signInAs = async (role: Role) => {
    if (await page.getByRole('button', { name: 'Sign out' }).count()) {
      await page.getByRole('button', { name: 'Sign out' }).click();
      await page.getByRole('heading', { name: 'Sign in to the console' }).waitFor();
    }
    await ui.signIn(people[role].email, password);
  };
  const execute = async (body: object) => {
    const res = await fetch(`${origin}/api/v1/integrations/people/execute`, {
      method: 'POST',
      headers: { 'x-api-key': key, 'x-tenant-id': 'acme', 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    const id = res.headers.get('x-execution-id');
    assert.ok(id, 'the answer names its execution');
    return id;
  };

  before(async () => {
    upstream = await startGraphqlServer();
    env = { ...db.env };
    await cli(['tenants', 'create', 'acme', '--name', 'Acme Corp'], env);
    await cli(['tenants', 'create', 'quiet', '--name', 'Quiet Ltd'], env);
    for (const [role, person] of Object.entries(people)) {
      await cli(['users', 'create', person.email, '--name', person.name, '--password-stdin'], env, `${password}\n`);
      for (const tenant of ['acme', 'quiet'])
        await cli(['users', 'grant', person.email, '--tenant', tenant, '--role', role], env);
    }
    const created = JSON.parse(
      await cli(['keys', 'create', '--tenant', 'acme', '--name', 'nightly sync', '--scopes', 'integrations.*', '--json'], env),
    );
    key = created.key;
    keyId = created.id;
    assert.match(keyId, /^key_/);
    server = await startServer(env);
    origin = server.url;
    ownerToken = await accessTokenOf(origin, people.owner.email, password);
    // Two integrations of one name: only their ids tell them apart.
    for (const id of ['people', 'people-eu']) {
      const res = await fetch(`${origin}/api/v1/integrations/${id}`, {
        method: 'PUT',
        headers: { 'x-api-key': key, 'x-tenant-id': 'acme', 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'People', connector: 'graphql-1.0.0', config: { base_url: upstream.url } }),
      });
      assert.equal(res.status, 201, await res.text());
    }
    received = await execute({ operation: 'receive', query: '{ usersList { id } }' });
    sent = await execute({ operation: 'send', mutation: 'mutation { createUser(name: "Ann") { id } }' });
    failed = await execute({ operation: 'receive', query: '{ brokenRequired }' });

    ui = await openConsoleBrowser(origin, { clipboard: true });
    page = ui.page;
  });

  after(async () => {
    await ui?.close();
    await server?.stop();
    await upstream?.close();
    db.cleanup();
  });

  test('an owner lands on Home: the tenant and its id to copy, a first call that runs as pasted, the docs', async () => {
    await signInAs('owner');
    assert.match(new URL(page.url()).pathname, /^\/console\/t\/acme\/home$/);
    assert.equal(await ui.nav('Home').getAttribute('aria-current'), 'page');
    const tenant = main().getByRole('region', { name: 'Acme Corp' });
    assert.equal(await tenant.getByRole('textbox', { name: 'ID' }).inputValue(), 'acme');
    assert.match(await tenant.innerText(), /names the tenant by this ID, in its X-Tenant-ID header/);
    await tenant.getByRole('button', { name: 'Copy the ID' }).click();
    await main().getByText('Copied to the clipboard.').first().waitFor();
    assert.equal(await clipboard(), 'acme');

    const firstCall = page.getByLabel('The first call', { exact: true });
    await main().getByText('It runs test on').waitFor();
    const command = await firstCall.innerText();
    assert.match(command, /X-Tenant-ID: acme/);
    assert.match(command, /\/api\/v1\/integrations\/people\/execute/);
    assert.match(command, /X-API-Key: \$IX_API_KEY/);
    assert.ok(!command.includes(ownerToken.slice(0, 20)), 'never the access token');
    await page.getByRole('button', { name: 'Copy the first call' }).click();
    assert.equal(await clipboard(), command);
    const answer = await paste(command, key);
    assert.equal(answer.success, true, JSON.stringify(answer));
    // An owner may make keys, and is shown where.
    await main().getByRole('link', { name: 'API keys' }).waitFor();

    const docs = main().getByRole('region', { name: 'Documentation' });
    assert.equal(await docs.getByRole('link', { name: 'API reference' }).getAttribute('href'), '/docs');
    assert.equal(await docs.getByRole('link', { name: 'OpenAPI document' }).getAttribute('href'), '/api/v1/openapi.json');
    await ui.shot('h01-home-owner');
    ui.assertClean();
  });

  test('home lists the recent executions and failures, each linking to its detail', async () => {
    await page.reload();
    const recent = main().getByRole('region', { name: 'Recent executions' });
    const failures = main().getByRole('region', { name: 'Recent failures' });
    for (const id of [received, sent, failed]) await recent.getByRole('listitem').filter({ hasText: id }).waitFor();
    await failures.getByRole('listitem').filter({ hasText: failed }).waitFor();
    assert.equal(await failures.getByRole('listitem').count(), 1, 'only the failure');
    assert.match(await failures.innerText(), /graphql_errors/);
    await ui.shot('h02-home-recent');

    await failures.getByRole('listitem').filter({ hasText: failed }).getByRole('link').click();
    await page.getByRole('heading', { name: 'Execution', exact: true }).waitFor();
    assert.match(new URL(page.url()).pathname, new RegExp(`/executions/${failed}$`));
    await page.getByRole('heading', { name: 'Error' }).waitFor();
    await ui.nav('Home').click();
    await recent.getByRole('listitem').filter({ hasText: sent }).getByRole('link').click();
    await page.getByRole('heading', { name: 'Succeeded' }).waitFor();
    assert.match(new URL(page.url()).pathname, new RegExp(`/executions/${sent}$`));
    ui.assertClean();
  });

  test('the detail: one message is "1 message", the caller by name with its id, times to the second', async () => {
    await main().getByText('Succeeded with 1 message.').waitFor();
    const summary = await page.locator('.details').first().innerText();
    assert.match(summary, new RegExp(`Caller\\s+nightly sync\\s+${keyId}`));
    assert.match(summary, /Started\s+.*\d{1,2}:\d{2}:\d{2}/);
    assert.match(summary, /Operation\s+send/);
    await ui.shot('h03-execution-detail');
    await page.goto(`${origin}/console/t/acme/executions/${received}`);
    await main().getByText('Succeeded with 25 messages.').waitFor();
    ui.assertClean();
  });

  test('try it out: a checkbox of its size, the document once, Copy as curl, and a link to the execution', async () => {
    await ui.nav('Try it out').click();
    const checkbox = page.getByRole('checkbox', { name: /Run asynchronously/ });
    const box = await checkbox.boundingBox();
    assert.ok(box && box.width > 12 && box.height > 12, `the checkbox is ${box?.width}×${box?.height} px`);
    // Both integrations are named People: the menu tells them apart by id.
    const options = await page.getByLabel('Integration').locator('option').allInnerTexts();
    assert.deepEqual(options, ['People (people)', 'People (people-eu)']);

    await page.getByLabel('Operation').selectOption('receive');
    const editor = page.getByRole('textbox', { name: 'GraphQL document' });
    await editor.waitFor();
    const bodyField = page.getByLabel('Body (JSON)');
    assert.equal(JSON.parse(await bodyField.inputValue()).query, undefined, 'the example document is in the editor only');
    // A whole request pasted into the body: its document goes to the editor, the rest stays.
    const query = '{ usersList { id name } }';
    await bodyField.fill(JSON.stringify({ query, variables: {} }));
    await page.getByText('Moved "query" to the GraphQL document above.').waitFor();
    assert.deepEqual(JSON.parse(await bodyField.inputValue()), { variables: {} });
    await untilPage('the editor holds the document', async () => (await editor.innerText()).trim() === query);
    assert.equal(await ui.pageHolds('usersList { id name }'), true);
    await ui.shot('h04-try-it-out');

    await page.getByRole('button', { name: 'Copy as curl' }).click();
    const command = await clipboard();
    assert.equal(command, await page.getByLabel('The request as curl').innerText());
    assert.match(command, /X-Tenant-ID: acme/);
    assert.match(command, /X-API-Key: \$IX_API_KEY/);
    assert.equal(command.split('usersList').length, 2, 'the document once');
    assert.ok(!/authorization|bearer|eyJ/i.test(command), 'no access token, no Authorization header');
    const pasted = await paste(command, key);
    assert.equal(pasted.success, true, JSON.stringify(pasted));
    // The fixture's users: 25, and the one the key's send created.
    assert.equal(pasted.data.message_count, 26);
    await ui.shot('h05-try-it-out-curl');

    await page.getByRole('button', { name: 'Run', exact: true }).click();
    const response = page.getByRole('region', { name: 'Response' });
    await response.getByText('HTTP 200').waitFor();
    const link = response.getByRole('link', { name: /^execution exe_/ });
    const id = (await link.innerText()).replace('execution', '').trim();
    await ui.shot('h06-try-it-out-answer');
    await link.click();
    await page.getByRole('heading', { name: 'Succeeded' }).waitFor();
    assert.match(new URL(page.url()).pathname, new RegExp(`/executions/${id}$`));
    const summary = await page.locator('.details').first().innerText();
    assert.match(summary, /Caller\s+Ada Lovelace\s+usr_/);
    ui.assertClean();
  });

  test('executions: callers by name beside their ids, seconds, the operation and what it named, and search by id', async () => {
    await ui.nav('Executions').click();
    const rowOf = (id: string) => ui.row(new RegExp(id));
    await rowOf(sent).waitFor();
    const row = await rowOf(sent).innerText();
    assert.match(row, /\d{1,2}:\d{2}:\d{2}/, 'to the second');
    // The operation with what the call named (the mutation's first root field), then its mode.
    assert.match(row, new RegExp(`People\\s+people\\s+send\\s+createUser\\s+sync\\s+nightly sync\\s+${keyId}`));
    await untilPage('a person’s execution', async () => (await page.getByRole('table').innerText()).includes('Ada Lovelace'));
    await ui.shot('h07-executions');

    const search = page.getByRole('search', { name: 'Find an execution' });
    await search.getByLabel('Execution ID').fill('nope');
    await search.getByRole('button', { name: 'Open' }).click();
    await search.getByText('An execution ID starts with exe_').waitFor();
    ui.expected.add('404 /api/v1/executions/exe_0000000000');
    await search.getByLabel('Execution ID').fill('exe_0000000000');
    await search.getByRole('button', { name: 'Open' }).click();
    await search.getByText('This tenant has no execution exe_0000000000.').waitFor();
    await ui.shot('h08-executions-search-miss');
    await search.getByLabel('Execution ID').fill(` ${failed} `);
    await search.getByLabel('Execution ID').press('Enter');
    await page.getByRole('heading', { name: 'Error' }).waitFor();
    assert.match(new URL(page.url()).pathname, new RegExp(`/executions/${failed}$`));
    ui.assertClean();
  });

  test('lists show ids beside names: integrations and keys', async () => {
    await ui.nav('Integrations').click();
    for (const id of ['people', 'people-eu']) assert.match(await ui.row(new RegExp(`^People ${id}$`)).innerText(), /People/);
    await ui.nav('API keys').click();
    await ui.row(/nightly sync/).waitFor();
    assert.match(await ui.row(/nightly sync/).innerText(), new RegExp(keyId));
    ui.assertClean();
  });

  /** Every screen of the tenant as `role` sees it, each one shot; answers what each offers to create or change. */
  const tour = async (role: Role, tenant: string) => {
    await page.getByLabel('Tenant').selectOption(tenant);
    const offered: Record<string, string[]> = {};
    for (const [nav, heading, screen] of [
      ['Home', 'Home', 'home'],
      ['API keys', 'API keys', 'keys'],
      ['Integrations', 'Integrations', 'integrations'],
      ['Executions', 'Executions', 'executions'],
      ['Try it out', 'Try it out', 'try'],
      ['AI agents', 'AI agents', 'agents'],
    ] as const) {
      await ui.nav(nav).click();
      await main().getByRole('heading', { name: heading, exact: true }).waitFor();
      await untilPage(`${screen} loaded`, async () => (await main().locator('.loading').count()) === 0);
      const actions = await main()
        .getByRole('link')
        .or(main().getByRole('button'))
        .filter({ hasText: /create|new|add|rotate|revoke|offer|try it out|api keys/i })
        .allInnerTexts();
      offered[screen] = actions.map((a) => a.trim());
      await ui.shot(`h-${tenant}-${role}-${screen}`);
    }
    return offered;
  };

  test('an empty tenant: each role is offered only what it may do', async () => {
    const owner = await tour('owner', 'quiet');
    assert.deepEqual(owner.keys, ['Create key']);
    assert.deepEqual(owner.integrations, ['New integration', 'Create one']);
    assert.deepEqual(owner.home, ['Create one', 'API keys', 'Try it out']);
    assert.deepEqual(owner.executions, ['Try it out']);

    await signInAs('developer');
    const developer = await tour('developer', 'quiet');
    assert.deepEqual(developer.keys, [], 'a developer cannot create keys');
    assert.deepEqual(developer.integrations, ['New integration', 'Create one']);
    await page.getByLabel('Tenant').selectOption('acme');
    await ui.nav('Home').click();
    await main().getByText('Keys are made by an owner or admin of this tenant').waitFor();
    assert.equal(await main().getByRole('link', { name: 'API keys' }).count(), 0);
    await ui.shot('h-acme-developer-home');

    await signInAs('viewer');
    const viewer = await tour('viewer', 'quiet');
    for (const [screen, actions] of Object.entries(viewer)) assert.deepEqual(actions, [], `${screen} offers a viewer ${actions}`);
    await main().getByText('An owner, admin or developer of this tenant can offer them.').waitFor();
    await ui.nav('Try it out').click();
    await main().getByText('An owner, admin or developer of this tenant can create one.').waitFor();
    await ui.nav('Home').click();
    await main().getByText('An owner, admin or developer can create one').waitFor();
    assert.equal(await main().getByRole('link', { name: 'Try it out' }).count(), 0);
    ui.assertClean();
  });

  test('a viewer in a busy tenant: home, executions and try it out without a way to run', async () => {
    const viewer = await tour('viewer', 'acme');
    for (const [screen, actions] of Object.entries(viewer)) assert.deepEqual(actions, [], `${screen} offers a viewer ${actions}`);
    await ui.nav('Try it out').click();
    assert.equal(await page.getByRole('button', { name: 'Run', exact: true }).isDisabled(), true);
    await main().getByText('Your role (viewer) cannot run operations').waitFor();
    await ui.nav('Executions').click();
    assert.equal(await page.getByRole('button', { name: /^Cancel execution/ }).count(), 0);
    ui.assertClean();
  });
});
