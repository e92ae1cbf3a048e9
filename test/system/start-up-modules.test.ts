/**
 * What no request needs yet is not loaded at start-up (docs/decisions.md#start-up): a process that builds the app,
 * as `interchange serve` does, has not loaded the WS-Security libraries (xmldom, xml-crypto, xpath: the first signed
 * message loads them), nor the stores of rate-limiter-flexible it does not use.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { test } from 'node:test';

const root = resolve(import.meta.dirname, '../..');

/** In a process of its own: builds the app on a fresh SQLite file and prints what it loaded. */
const probe = `
const { build } = await import(${JSON.stringify(join(root, 'src/app.ts'))});
const { loadConfig } = await import(${JSON.stringify(join(root, 'src/config/config.ts'))});
const { createRequire } = await import('node:module');
const app = await build(loadConfig({ DATABASE_URL: 'sqlite:' + process.env.PROBE_DB, LOG_LEVEL: 'silent' }));
await app.ready();
const modules = Object.keys(createRequire(import.meta.url).cache);
await app.close();
console.log(JSON.stringify({ modules }));
`;

test('a built app has not loaded the WS-Security libraries nor the rate limiter stores it does not use', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'ix-start-up-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const run = spawnSync(process.execPath, ['--input-type=module', '-e', probe], {
    cwd: root,
    env: { ...process.env, PROBE_DB: join(dir, 'probe.db'), NODE_OPTIONS: '' },
    encoding: 'utf8',
  });
  assert.equal(run.status, 0, run.stderr);
  const { modules } = JSON.parse(run.stdout.trim().split('\n').at(-1) ?? '{}') as { modules: string[] };
  // The probe sees CommonJS modules (how these packages ship): a control that it sees any at all.
  assert.ok(
    modules.some((file) => file.includes('/node_modules/fastify/')),
    'the probe sees the modules loaded',
  );
  for (const library of ['/node_modules/xml-crypto/', '/node_modules/@xmldom/xmldom/', '/node_modules/xpath/']) {
    assert.deepEqual(
      modules.filter((file) => file.includes(library)),
      [],
      `${library} is loaded with the first signed message`,
    );
  }
  assert.deepEqual(
    modules.filter((file) => /rate-limiter-flexible\/lib\/RateLimiter(Mongo|MySQL|Postgres|Redis)\.js$/.test(file)),
    [],
  );
});
