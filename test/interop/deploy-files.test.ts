/**
 * The image and the compose files (README: Run it in a container). No image is built here (this machine has no Docker
 * daemon and no registry to pull node:24-slim from): what is checked is what can be without one. Both compose files
 * pass `docker-compose config` as Debian's docker-compose (1.29) reads them, which refuses what Compose v2 alone
 * accepts (a top-level `name`); the Dockerfile runs the service as `npm start` does (test/system/start-flags.test.ts), as a
 * user other than root, and checks /readyz.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';

const root = new URL('../..', import.meta.url).pathname;
const dockerfile = readFileSync(new URL('../../Dockerfile', import.meta.url), 'utf8');

/** docker-compose is one of the Debian packages `npm test` installs (scripts/test-prerequisites.sh). */
const hasCompose = spawnSync('docker-compose', ['version'], { encoding: 'utf8' }).status === 0;
const inCi = process.env.CI !== undefined && process.env.CI !== 'false';
if (!hasCompose && inCi) throw new Error('docker-compose is missing: CI checks the compose files with it');
const noCompose = !hasCompose && 'docker-compose is not installed (apt-get install docker-compose)';

/** `docker-compose config` of `file`: its exit status, and the configuration as it resolved it. */
function composeConfig(file: string, env: Record<string, string> = {}) {
  return spawnSync('docker-compose', ['-f', file, 'config'], {
    cwd: root,
    env: { ...process.env, ...env },
    encoding: 'utf8',
  });
}

describe('the compose files', () => {
  test('compose.yaml: one instance on SQLite, its data on a volume, valid for Debian’s docker-compose', {
    skip: noCompose,
  }, () => {
    const run = composeConfig('compose.yaml');
    assert.equal(run.status, 0, run.stderr);
    assert.match(run.stdout, /^services:\n {2}interchange:/m);
    assert.match(run.stdout, /- data:\/app\/data/, 'the data folder is on the volume');
    assert.match(run.stdout, /- 127\.0\.0\.1:8080:8080/, 'published on the loopback address only');
    assert.doesNotMatch(run.stdout, /DATABASE_URL/, 'SQLite, the default');
  });

  test('compose.scale-out.yaml: two instances on PostgreSQL and Redis, valid too; IX_MASTER_KEY required', {
    skip: noCompose,
  }, () => {
    const run = composeConfig('compose.scale-out.yaml', { IX_MASTER_KEY: 'a-key' });
    assert.equal(run.status, 0, run.stderr);
    for (const service of ['api-a', 'api-b', 'postgres', 'redis']) assert.match(run.stdout, new RegExp(`^ {2}${service}:`, 'm'));
    const withoutKey = composeConfig('compose.scale-out.yaml', { IX_MASTER_KEY: '' });
    assert.notEqual(withoutKey.status, 0);
    assert.match(withoutKey.stderr, /set IX_MASTER_KEY/);
  });
});

describe('the Dockerfile', () => {
  test('runs as the unprivileged user node, and its health check asks /readyz', () => {
    const users = [...dockerfile.matchAll(/^USER (\S+)$/gm)].map((m) => m[1]);
    assert.deepEqual(users, ['node']);
    assert.match(dockerfile, /^HEALTHCHECK .*\n.*\/readyz`/m);
    assert.doesNotMatch(dockerfile, /\/healthz/);
  });
});
