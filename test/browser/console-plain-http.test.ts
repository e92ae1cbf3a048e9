import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type ConsoleBrowser, openConsoleBrowser, serveWithOwner } from '../support/console-browser.ts';
import { type ServerProcess, tempDatabase } from '../support/processes.ts';

/**
 * The refresh cookie is `Secure` off loopback, so over plain HTTP at another host a browser drops it and every reload
 * signs the person out (docs/people-and-console.md#serve-it-over-https). The sign-in page says so there, and only
 * there. Chromium resolves `console.test` to 127.0.0.1, so the same server is reached under a name that is not
 * loopback.
 */
describe('the console over plain HTTP off loopback', () => {
  const email = 'ada@example.com';
  const password = 'correct horse battery staple';
  const db = tempDatabase();
  let server: ServerProcess;
  let port: string;
  let remote: ConsoleBrowser;
  let local: ConsoleBrowser;

  before(async () => {
    ({ server } = await serveWithOwner(db.env, email, password));
    port = new URL(server.url).port;
    remote = await openConsoleBrowser(`http://console.test:${port}`, { hostRules: 'MAP console.test 127.0.0.1' });
    local = await openConsoleBrowser(server.url);
  });
  after(async () => {
    await remote?.close();
    await local?.close();
    await server?.stop();
    db.cleanup();
  });

  const warning = (ui: ConsoleBrowser) => ui.page.getByRole('note').filter({ hasText: 'Sign-in will not last over plain HTTP' });

  test('the sign-in page warns that sign-in will not last, and it does not: a reload signs the person out', async () => {
    const { page } = remote;
    await page.goto(`http://console.test:${port}/console`);
    await warning(remote).waitFor();
    assert.match(await warning(remote).innerText(), new RegExp(`served over HTTP at console\\.test:${port}`));
    await remote.shot('30-plain-http-warning');
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill(password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Home', exact: true }).waitFor();
    // What the warning says: the browser kept no cookie, so a reload is a new visit.
    assert.deepEqual(
      (await remote.context.cookies()).filter((c) => c.name === 'ix_refresh'),
      [],
      'the Secure cookie was dropped over HTTP',
    );
    // The page's hint cookie (not Secure) survives, so the reload tries the refresh cookie, which is gone: 401.
    remote.expected.add('401 /api/v1/auth/refresh');
    await page.reload();
    await page.getByRole('heading', { name: 'Sign in to the console' }).waitFor();
    // Chromium also says, over HTTP, that it ignores the page's Cross-Origin-Opener-Policy: true, and what this test is about.
    const ignoredCoop = (problem: string) => problem.includes('Cross-Origin-Opener-Policy header has been ignored');
    remote.problems.splice(0, remote.problems.length, ...remote.problems.filter((p) => !ignoredCoop(p)));
    remote.assertClean();
  });

  test('at 127.0.0.1 there is no warning, and a reload keeps the person signed in', async () => {
    const { page } = local;
    await page.goto(`${server.url}/console`);
    await page.getByRole('heading', { name: 'Sign in to the console' }).waitFor();
    assert.equal(await warning(local).count(), 0);
    await local.signIn(email, password);
    await page.reload();
    await page.getByRole('heading', { name: 'Home', exact: true }).waitFor();
    local.assertClean();
  });
});
