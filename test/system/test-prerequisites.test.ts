/**
 * `npm test` prepares what its tests need (scripts/test-prerequisites.sh, its pretest step): as root, or with sudo that
 * asks no password, it installs the missing Debian packages; otherwise it stops at once with one line naming them and
 * the command. Run here as the user nobody, with a PATH from which two of the tools are hidden.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, readdirSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';

const script = new URL('../../scripts/test-prerequisites.sh', import.meta.url).pathname;
const isRoot = process.getuid?.() === 0;
const hasSetpriv = spawnSync('setpriv', ['--version']).status === 0;

test('without root or sudo, a missing package stops npm test at once: one line naming the packages and the command', {
  skip: !(isRoot && hasSetpriv) && 'needs root and setpriv (util-linux) to run the script as another user',
}, () => {
  const bin = mkdtempSync(join(tmpdir(), 'ix-prereq-'));
  try {
    chmodSync(bin, 0o755);
    // Every program of /usr/bin and /usr/sbin but tinyproxy and docker-compose: those two look missing.
    for (const dir of ['/usr/sbin', '/usr/bin']) {
      for (const name of readdirSync(dir)) {
        if (name === 'tinyproxy' || name === 'docker-compose') continue;
        try {
          symlinkSync(join(dir, name), join(bin, name));
        } catch {
          // The same name in both folders: the first one stands, as on PATH.
        }
      }
    }
    const run = spawnSync('setpriv', ['--reuid=65534', '--regid=65534', '--clear-groups', 'bash', script], {
      env: { PATH: bin, HOME: '/nonexistent' },
      encoding: 'utf8',
    });
    assert.equal(run.status, 1, run.stderr);
    assert.equal(run.stdout, '');
    assert.equal(
      run.stderr,
      'npm test needs these Debian packages: tinyproxy docker-compose; install them with: sudo apt-get install -y --no-install-recommends tinyproxy docker-compose\n',
    );
  } finally {
    rmSync(bin, { recursive: true, force: true });
  }
});

test('with every package present it says nothing and goes on', () => {
  const run = spawnSync('bash', [script], { encoding: 'utf8' });
  assert.equal(run.status, 0, run.stderr);
  assert.equal(run.stdout + run.stderr, '');
});
