import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { accessTokenOf, cli, openConsoleBrowser } from '../support/console-browser.ts';
import { type Env, killAll, type ServerProcess, startServer, tempDatabase } from '../support/processes.ts';

/**
 * Every screen of the console for an owner, a developer and a viewer (docs/people-and-console.md#the-console): each one
 * photographed as test-artifacts/console/every-<role>-<screen>.png, every control labelled, the keyboard reaching
 * only named controls in the screen's content, and the navigation offering the Audit log to the owner alone. A tenant with an integration,
 * a key, a webhook and executions, so no screen is only its empty state.
 */

const password = 'a long enough console password';
const people = { owner: 'ada@example.com', developer: 'dev@example.com', viewer: 'vi@example.com' } as const;
const screens = [
  ['home', 'Home'],
  ['keys', 'API keys'],
  ['integrations', 'Integrations'],
  ['executions', 'Executions'],
  ['webhooks', 'Webhooks'],
  ['try', 'Try it out'],
  ['agents', 'AI agents'],
  ['members', 'Members'],
  ['audit', 'Audit log'],
] as const;

/** The form controls and buttons of the page without an accessible name. */
function unnamedControls(page: Page): Promise<string[]> {
  return page.evaluate(() =>
    [...document.querySelectorAll('main input, main select, main textarea, main button, nav a, main a')]
      .filter((element) => {
        const control = element as HTMLInputElement;
        if (control.type === 'hidden' || control.closest('[hidden]')) return false;
        const named =
          (control.labels?.length ?? 0) > 0 ||
          control.getAttribute('aria-label') ||
          control.getAttribute('aria-labelledby') ||
          (element.tagName !== 'INPUT' && element.tagName !== 'SELECT' && element.textContent?.trim());
        return !named;
      })
      .map((element) => element.outerHTML.slice(0, 160)),
  );
}

describe('every screen, for each role', () => {
  const db = tempDatabase();
  let env: Env;
  let server: ServerProcess;
  let origin: string;

  before(async () => {
    env = db.env;
    await cli(['tenants', 'create', 'acme', '--name', 'Acme Corp'], env);
    for (const [role, email] of Object.entries(people)) {
      await cli(['users', 'create', email, '--name', email.split('@')[0], '--password-stdin'], env, `${password}\n`);
      await cli(['users', 'grant', email, '--tenant', 'acme', '--role', role], env);
    }
    server = await startServer(env);
    origin = server.url;
    const token = await accessTokenOf(origin, people.owner, password);
    const call = async (method: string, path: string, body?: object) => {
      const res = await fetch(`${origin}/api/v1${path}`, {
        method,
        headers: { authorization: `Bearer ${token}`, 'x-tenant-id': 'acme', 'content-type': 'application/json' },
        body: body && JSON.stringify(body),
      });
      assert.ok(res.status < 300, `${method} ${path}: ${res.status} ${await res.text()}`);
    };
    // The upstream does not answer (a closed port on loopback): the tests' executions are failures, as real ones can be.
    await call('PUT', '/integrations/crm', {
      connector: 'graphql-1.0.0',
      name: 'CRM',
      config: { base_url: 'http://127.0.0.1:9/graphql' },
    });
    await call('POST', '/api-keys', { name: 'nightly sync', scopes: ['integrations.execute'] });
    await call('POST', '/webhooks', { url: 'http://127.0.0.1:9/hooks', events: ['execution.failed'] });
    await fetch(`${origin}/api/v1/integrations/crm/execute`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'x-tenant-id': 'acme', 'content-type': 'application/json' },
      body: JSON.stringify({ operation: 'receive', query: '{ orders { id } }' }),
    });
  });
  after(async () => {
    await killAll();
    db.cleanup();
  });

  for (const role of ['owner', 'developer', 'viewer'] as const) {
    test(`${role}: each screen shot, its controls named, the keyboard on named controls only`, async () => {
      const ui = await openConsoleBrowser(origin);
      const { page } = ui;
      try {
        await ui.signIn(people[role], password);
        const offered = await page.getByRole('navigation', { name: 'Console' }).getByRole('link').allInnerTexts();
        const expected = screens.map(([, label]) => label).filter((label) => role === 'owner' || label !== 'Audit log');
        assert.deepEqual(
          offered.map((text) => text.trim()),
          expected,
        );
        for (const [id, label] of screens) {
          if (!offered.some((text) => text.trim() === label)) continue;
          await page.goto(`${origin}/console/t/acme/${id}`);
          await page.getByRole('heading', { name: label, level: 1, exact: true }).waitFor();
          await page.waitForLoadState('networkidle');
          assert.deepEqual(await unnamedControls(page), [], `${role} ${id}: every control has a name`);
          await ui.shot(`every-${role}-${id}`);
          // From the top of the screen's content, Tab through its controls: each one focused is named, until focus
          // leaves the content (a read-only screen may have none).
          await page.locator('#main').focus();
          for (let i = 0; i < 15; i++) {
            await page.keyboard.press('Tab');
            const focused = await page.evaluate(() => {
              const element = document.activeElement as HTMLElement | null;
              if (!element?.closest('#main')) return undefined;
              const name =
                element.getAttribute('aria-label') ??
                ((element as HTMLInputElement).labels?.[0]?.textContent || element.textContent || '').trim();
              return `${element.tagName.toLowerCase()}:${name}`;
            });
            if (focused === undefined) break;
            assert.ok(!focused.endsWith(':'), `${role} ${id}: focus ${i + 1} is on a named control (${focused})`);
          }
        }
        ui.assertClean();
      } finally {
        await ui.close();
      }
    });
  }
});
