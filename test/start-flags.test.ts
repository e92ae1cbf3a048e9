/**
 * The Node flags the service runs with are written twice, in package.json's `start` script (`npm start`) and in
 * bin/interchange.js's shebang (`interchange serve`, `npx interchange`). They must be the same, and the shebang must
 * work when the file is run as a program.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { delimiter, resolve } from 'node:path';
import { test } from 'node:test';
import { bin } from './helpers/processes.ts';

const manifest = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));

function startFlags(): string[] {
  const match = /^node (.*?) ?bin\/interchange\.js serve$/.exec(manifest.scripts.start);
  assert.ok(match, `start script: ${manifest.scripts.start}`);
  return match[1] === '' ? [] : match[1].split(' ');
}

function shebangFlags(): string[] {
  const first = readFileSync(bin, 'utf8').split('\n')[0];
  const match = /^#!\/usr\/bin\/env -S node(?: (.*))?$/.exec(first);
  assert.ok(match, `shebang: ${first}`);
  return match[1] ? match[1].split(' ') : [];
}

test('npm start and the shebang run Node with the same flags, the young generation capped among them', () => {
  assert.deepEqual(shebangFlags(), startFlags());
  assert.ok(startFlags().some((flag) => /^--max-semi-space-size=\d+$/.test(flag)));
});

test('bin/interchange.js runs as a program through its shebang', () => {
  // The `node` the shebang finds is the pinned one, as under npm scripts.
  const path = [resolve(import.meta.dirname, '../node_modules/.bin'), process.env.PATH].join(delimiter);
  const run = spawnSync(bin, ['--version'], { env: { ...process.env, PATH: path }, encoding: 'utf8' });
  assert.equal(run.status, 0, run.stderr);
  assert.equal(run.stdout.trim(), manifest.version);
});
