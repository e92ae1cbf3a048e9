import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { resolve } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { pathToFileURL } from 'node:url';
import type { LightMyRequestResponse } from 'fastify';
import { roleScopes } from '../../src/auth/roles.ts';
import { hasScope, scopeResources } from '../../src/auth/scopes.ts';
import { body, type Harness, harness } from '../support/harness.ts';

/** How the service serves the console: the page, its modules and the vendor modules, with their headers. */
describe('the console files', () => {
  let h: Harness;
  let page: LightMyRequestResponse;
  const get = (url: string) => h.app.inject({ method: 'GET', url });

  before(async () => {
    h = await harness();
    page = await get('/console');
  });
  after(() => h.close());

  const assertSecurityHeaders = (res: LightMyRequestResponse) => {
    assert.match(String(res.headers['content-security-policy']), /^default-src 'self'; script-src 'self' 'sha256-/);
    assert.equal(res.headers['x-content-type-options'], 'nosniff');
    assert.equal(res.headers['referrer-policy'], 'no-referrer');
  };

  test('/console is the page, revalidated on each load, with a CSP that allows exactly its import map', () => {
    assert.equal(page.statusCode, 200);
    assert.equal(page.headers['content-type'], 'text/html; charset=utf-8');
    assert.equal(page.headers['cache-control'], 'no-cache');
    assertSecurityHeaders(page);
    const csp = String(page.headers['content-security-policy']);
    assert.equal(
      csp.replace(/ 'sha256-[^']+'/, ''),
      "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
        "frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
    );
    const inline = [...page.body.matchAll(/<script([^>]*)>([^<]*)<\/script>/g)].filter(
      ([, attributes]) => !/src=/.test(attributes),
    );
    assert.equal(inline.length, 1);
    assert.match(inline[0][1], /type="importmap"/);
    const hash = createHash('sha256').update(inline[0][2]).digest('base64');
    assert.ok(csp.includes(`'sha256-${hash}'`), 'the hash of the import map as served');
    assert.doesNotMatch(page.body, /style=|https?:\/\//, 'no inline style, nothing from another origin');
  });

  test('client-side routes get the same page', async () => {
    for (const url of ['/console/', '/console/t/acme/keys', '/console/t/a%2Fb/integrations/x']) {
      const res = await get(url);
      assert.equal(res.statusCode, 200, url);
      assert.equal(res.body, page.body, url);
      assertSecurityHeaders(res);
    }
  });

  test('every module the page reaches is served as JavaScript, cached for good; the vendor modules too', async () => {
    const importMap = JSON.parse(/<script type="importmap">([^<]*)<\/script>/.exec(page.body)![1]);
    const entry = /<script type="module" src="([^"]+)"/.exec(page.body)![1];
    const seen = new Set<string>();
    const queue = [entry, ...Object.values(importMap.imports as Record<string, string>)];
    while (queue.length > 0) {
      const url = queue.pop()!;
      if (seen.has(url)) continue;
      seen.add(url);
      const res = await get(url);
      assert.equal(res.statusCode, 200, url);
      assert.equal(res.headers['content-type'], 'text/javascript; charset=utf-8', url);
      assert.equal(res.headers['cache-control'], 'public, max-age=31536000, immutable', url);
      assertSecurityHeaders(res);
      for (const [, specifier] of res.body.matchAll(/(?:import|from)\s*['"](\.{1,2}\/[^'"]+)['"]/g)) {
        queue.push(new URL(specifier, `http://x${url}`).pathname);
      }
    }
    assert.ok(seen.size > 15, `${seen.size} modules`);
    const css = /<link rel="stylesheet" href="([^"]+)"/.exec(page.body)![1];
    const res = await get(css);
    assert.equal(res.headers['content-type'], 'text/css; charset=utf-8');
    const icon = await get(/<link rel="icon" href="([^"]+)"/.exec(page.body)![1]);
    assert.equal(icon.headers['content-type'], 'image/svg+xml');
  });

  test('an unknown file, or one of another version, is a 404 in the error shape (files are looked up, never read by path)', async () => {
    const css = /<link rel="stylesheet" href="([^"]+)"/.exec(page.body)![1];
    for (const url of [
      css.replace('console.css', 'nothing.css'),
      css.replace(/assets\/[^/]+\//, 'assets/000000000000/'),
      '/console/vendor/000000000000/preact.mjs',
      css.replace('assets', 'vendor').replace('console.css', 'package.json'),
    ]) {
      const res = await get(url);
      assert.equal(res.statusCode, 404, url);
      assert.equal(body(res).error.code, 'not_found');
      assert.equal(res.headers['cache-control'], 'no-store');
      assertSecurityHeaders(res);
    }
  });

  test('the console is not part of the API document', async () => {
    const doc = body(await get('/api/v1/openapi.json'));
    assert.deepEqual(
      Object.keys(doc.paths).filter((path) => path.startsWith('/console')),
      [],
    );
  });

  test('the console offers each role what the service allows it: its roles.js agrees with src/auth/roles.ts', async () => {
    const file = pathToFileURL(resolve(import.meta.dirname, '../../src/console/static/lib/roles.js')).href;
    const { can } = (await import(file)) as { can(role: string, scope: string): boolean };
    for (const [role, granted] of Object.entries(roleScopes)) {
      for (const resource of scopeResources) {
        for (const action of ['read', 'write', 'execute']) {
          const scope = `${resource}.${action}`;
          assert.equal(can(role, scope), hasScope(granted, scope), `${role} and ${scope}`);
        }
      }
    }
  });
});
