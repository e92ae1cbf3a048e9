import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { type Browser, type BrowserContext, chromium, type Locator, type Page } from 'playwright-core';
import { runCli } from './cli.ts';
import { type Env, type ServerProcess, startServer } from './processes.ts';
import { until } from './until.ts';

/**
 * The console walked as a person would, in a real browser: Debian's chromium, driven by playwright-core, which never
 * downloads one. Any console error, page error, failed request, 5xx or request to another host is kept in `problems`,
 * and every step ends with `assertClean()`; each step may leave a screenshot in test-artifacts/console/.
 */

export const artifacts = resolve(import.meta.dirname, '../../test-artifacts/console');
// A ceiling for what a loaded two-core machine may take; it catches a hang, it measures nothing.
export const stepCeilingMs = 60_000;

/** Runs `interchange <args>` (in this process), fails the test unless it exits 0, and returns what it printed. */
export async function cli(args: string[], env: Env, input?: string): Promise<string> {
  const result = await runCli(args, env, input === undefined ? {} : { input });
  assert.equal(result.code, 0, `interchange ${args.join(' ')}: ${result.stderr}`);
  return result.stdout;
}

/** Polls `check` until it returns true (auto-waiting for what locators cannot express). */
export const untilPage = (what: string, check: () => Promise<boolean>) =>
  until(check, what, { ceilingMs: stepCeilingMs, everyMs: 250 });

/** Signs `email` in through the API (not the page) and returns the access token, for set-up and read-backs. */
export async function accessTokenOf(origin: string, email: string, password: string): Promise<string> {
  const response = await fetch(`${origin}/api/v1/auth/sign-in`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email, password }),
  });
  assert.equal(response.status, 200, `sign-in of ${email}`);
  return ((await response.json()) as { data: { access_token: string } }).data.access_token;
}

export interface ConsoleBrowser {
  browser: Browser;
  context: BrowserContext;
  page: Page;
  /** What went wrong in the browser so far; every step ends by asserting it is empty. */
  problems: string[];
  /** HTTP error statuses a step provokes on purpose (`401 /api/v1/auth/sign-in`): the browser logs those as errors. */
  expected: Set<string>;
  assertClean(): void;
  /** A full-page screenshot as test-artifacts/console/`step`.png. */
  shot(step: string): Promise<void>;
  /** Whether the page holds `text` anywhere: markup, or the value of a form control. */
  pageHolds(text: string): Promise<boolean>;
  /** The table row whose row header is `name`. */
  row(name: string | RegExp): Locator;
  /** A link of the console's navigation. */
  nav(name: string): Locator;
  /** Opens /console and signs in through the form; resolves once the first screen (Home) shows. */
  signIn(email: string, password: string): Promise<void>;
  close(): Promise<void>;
}

/** A browser with one page on the console at `origin`, watched for problems. */
export async function openConsoleBrowser(
  origin: string,
  options: {
    clipboard?: boolean /** Chromium's --host-resolver-rules: `MAP console.test 127.0.0.1`. */;
    hostRules?: string;
  } = {},
): Promise<ConsoleBrowser> {
  mkdirSync(artifacts, { recursive: true });
  const problems: string[] = [];
  const expected = new Set<string>();
  const args = options.hostRules ? [`--host-resolver-rules=${options.hostRules}`] : [];
  const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args });
  const context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
  if (options.clipboard) await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin });
  context.setDefaultTimeout(stepCeilingMs);
  // Nothing may leave for another host: no CDN, no fonts, nothing.
  await context.route('**/*', (route) => {
    const url = new URL(route.request().url());
    if (url.origin === origin) return route.fallback();
    problems.push(`request to another host: ${url.href}`);
    return route.abort('blockedbyclient');
  });
  const page = await context.newPage();
  page.on('console', (message) => {
    if (message.type() !== 'error') return;
    const status = /status of (\d{3})/.exec(message.text())?.[1];
    const path = new URL(message.location().url || origin).pathname;
    if (status && expected.has(`${status} ${path}`)) return;
    problems.push(`console error: ${message.text()} (${message.location().url})`);
  });
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  page.on('requestfailed', (request) => {
    const reason = request.failure()?.errorText ?? '';
    // A request to another host is reported above; the browser cancelling a superseded load is no failure.
    if (!reason.includes('ERR_BLOCKED_BY_CLIENT') && !reason.includes('ERR_ABORTED')) {
      problems.push(`request failed: ${request.url()} ${reason}`);
    }
  });
  page.on('response', (response) => {
    if (response.status() >= 500) problems.push(`${response.status()} from ${response.url()}`);
  });

  return {
    browser,
    context,
    page,
    problems,
    expected,
    assertClean: () => assert.deepEqual(problems, [], problems.join('\n')),
    shot: async (step) => {
      await page.screenshot({ path: `${artifacts}/${step}.png`, fullPage: true });
    },
    pageHolds: (text) =>
      page.evaluate(
        (t) =>
          document.documentElement.outerHTML.includes(t) ||
          [...document.querySelectorAll('input, textarea')].some((e) => (e as HTMLInputElement).value.includes(t)),
        text,
      ),
    row: (name) => page.getByRole('row').filter({ has: page.getByRole('rowheader', { name }) }),
    nav: (name) => page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name }),
    signIn: async (email, password) => {
      await page.goto(`${origin}/console`);
      await page.getByLabel('Email').fill(email);
      await page.getByLabel('Password').fill(password);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByRole('heading', { name: 'Home', exact: true }).waitFor();
    },
    close: () => browser.close(),
  };
}

/**
 * A server on a fresh tenant `acme` (named Acme Corp) with one owner, `email` with `password`, made by the CLI; its
 * origin and the owner's access token, for the set-up and read-backs a browser test makes through the API.
 *
 * @example const { server, origin, accessToken } = await serveWithOwner(db.env, 'ada@example.com', 'a long password');
 */
export async function serveWithOwner(
  env: Env,
  email: string,
  password: string,
): Promise<{ server: ServerProcess; origin: string; accessToken: string }> {
  await cli(['tenants', 'create', 'acme', '--name', 'Acme Corp'], env);
  await cli(['users', 'create', email, '--name', 'Ada Lovelace', '--password-stdin'], env, `${password}\n`);
  await cli(['users', 'grant', email, '--tenant', 'acme', '--role', 'owner'], env);
  const server = await startServer(env);
  return { server, origin: server.url, accessToken: await accessTokenOf(server.url, email, password) };
}
