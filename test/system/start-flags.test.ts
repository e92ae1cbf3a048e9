/**
 * The Node flags the service runs with are written three times, in package.json's `start` script (`npm start`), in
 * bin/interchange.js's shebang (`interchange serve`, `npx interchange`) and in the Dockerfile's command. They must be
 * the same, and the shebang must work when the file is run as a program. Started by another Node than 24 (the
 * system's Node 20), bin/interchange.js hands itself to the Node 24 in node_modules.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join, resolve } from 'node:path';
import { test } from 'node:test';
import { bin, startServer, tempDatabase } from '../support/processes.ts';

const manifest = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8'));

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
  const path = [resolve(import.meta.dirname, '../../node_modules/.bin'), process.env.PATH].join(delimiter);
  const run = spawnSync(bin, ['--version'], { env: { ...process.env, PATH: path }, encoding: 'utf8' });
  assert.equal(run.status, 0, run.stderr);
  assert.equal(run.stdout.trim(), manifest.version);
});

/** The Dockerfile's command: exec form, `node <flags> bin/interchange.js serve`. */
function dockerFlags(): string[] {
  const dockerfile = readFileSync(new URL('../../Dockerfile', import.meta.url), 'utf8');
  const cmd = /^CMD (\[.*\])$/m.exec(dockerfile);
  assert.ok(cmd, 'the Dockerfile has a CMD in exec form');
  const argv = JSON.parse(cmd[1]) as string[];
  assert.deepEqual([argv[0], ...argv.slice(-2)], ['node', 'bin/interchange.js', 'serve'], cmd[1]);
  return argv.slice(1, -2);
}

test('the image runs the service as npm start does: the same flags', () => {
  assert.deepEqual(dockerFlags(), startFlags());
});

/** A Node on PATH other than 24 (Debian's is 20), or undefined: the hand-over is tested only where there is one. */
function otherNode(): string | undefined {
  for (const candidate of ['/usr/bin/node', '/usr/local/bin/node']) {
    const run = spawnSync(candidate, ['-p', 'process.versions.node'], { encoding: 'utf8' });
    if (run.status === 0 && Number(run.stdout.split('.')[0]) !== 24) return candidate;
  }
  return undefined;
}
const older = otherNode();
const noOlder = older === undefined && 'no Node other than 24 on this machine (/usr/bin/node, /usr/local/bin/node)';

test('started by another Node, bin/interchange.js hands itself to node_modules’ Node 24 and exits as it does', {
  skip: noOlder,
}, () => {
  const node = older as string;
  const version = spawnSync(node, [bin, '--version'], { encoding: 'utf8' });
  assert.equal(version.status, 0, version.stderr);
  assert.equal(version.stdout.trim(), manifest.version);
  assert.equal(version.stderr, '', 'no warning, no stack');
  // A failing command's exit code comes through (2: usage).
  const usage = spawnSync(node, [bin, 'no-such-command'], { encoding: 'utf8' });
  assert.equal(usage.status, 2, usage.stderr);
});

test('without node_modules’ Node 24, one line says what to run', { skip: noOlder }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'ix-no-node-'));
  try {
    mkdirSync(join(dir, 'bin'));
    copyFileSync(bin, join(dir, 'bin', 'interchange.js'));
    const run = spawnSync(older as string, [join(dir, 'bin', 'interchange.js'), '--version'], { encoding: 'utf8' });
    assert.equal(run.status, 1);
    assert.equal(run.stdout, '');
    const lines = run.stderr.trim().split('\n');
    assert.equal(lines.length, 1, run.stderr);
    assert.match(
      lines[0],
      /^interchange: needs Node\.js 24, and this is v\d+\.[\d.]+; run `npm ci` in .+, then run this again\.$/,
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('serve started by another Node: SIGTERM reaches the service, which shuts down cleanly (exit 0)', {
  skip: noOlder,
}, async () => {
  const db = tempDatabase();
  try {
    const server = await startServer(db.env, { node: older });
    assert.equal((await fetch(`${server.url}/healthz`)).status, 200);
    // 0, not a signal: the service got SIGTERM, shut down, and this process ended with its code.
    assert.equal(await server.stop(), 0);
  } finally {
    db.cleanup();
  }
});
