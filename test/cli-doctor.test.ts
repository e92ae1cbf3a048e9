import assert from 'node:assert/strict';
import { chmodSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, type TestContext, test } from 'node:test';
import { runCli } from './helpers/cli.ts';
import { type Env, freePort, killAll, runCliProcess, tempDatabase } from './helpers/processes.ts';

after(killAll);

/** A migrated SQLite database with a master.key of `mode` beside it. */
async function setup(t: TestContext, mode = 0o600): Promise<{ dir: string; env: Env }> {
  const db = tempDatabase();
  t.after(db.cleanup);
  assert.equal((await runCli(['migrate'], db.env)).code, 0);
  const key = join(db.dir, 'master.key');
  writeFileSync(key, `${Buffer.alloc(32, 7).toString('base64')}\n`, { mode });
  chmodSync(key, mode);
  return { dir: db.dir, env: db.env };
}

async function doctor(env: Env) {
  const result = await runCli(['doctor', '--json'], env);
  const checks: Array<{ name: string; ok: boolean; message: string }> = JSON.parse(result.stdout).checks;
  return { result, checks, failed: checks.filter((c) => !c.ok) };
}

describe('interchange doctor', { concurrency: true }, () => {
  test('a healthy SQLite setup: every check ok, exit 0, nothing created', async (t) => {
    const { dir, env } = await setup(t);
    const before = readdirSync(dir).sort();
    const plain = await runCli(['doctor'], env);
    assert.equal(plain.code, 0, plain.stdout + plain.stderr);
    assert.match(plain.stdout, /^ok +configuration: /m);
    assert.match(plain.stdout, /^ok +database: answers; migrations up to date/m);
    const { result, checks } = await doctor(env);
    assert.equal(result.code, 0);
    assert.deepEqual(
      checks.map((c) => [c.name, c.ok]),
      [
        ['configuration', true],
        ['database', true],
        ['redis', true],
        ['master key', true],
      ],
    );
    assert.deepEqual(readdirSync(dir).sort(), before);
  });

  test('a bad IX_MASTER_KEY: exit 1 naming IX_MASTER_KEY, the value never printed', async (t) => {
    const { env } = await setup(t);
    const { result, failed } = await doctor({ ...env, IX_MASTER_KEY: 'c2hvcnQta2V5LXNlY3JldA==' });
    assert.equal(result.code, 1);
    // Caught by the configuration check when loadConfig validates it, else by the master key check.
    assert.equal(failed.length, 1);
    assert.match(failed[0].message, /IX_MASTER_KEY/);
    assert.ok(!result.stdout.includes('c2hvcnQta2V5LXNlY3JldA'));
  });

  test('a master.key others may read: exit 1 with the chmod to run', async (t) => {
    const { dir, env } = await setup(t, 0o644);
    const { result, failed } = await doctor(env);
    assert.equal(result.code, 1);
    assert.deepEqual(
      failed.map((c) => c.name),
      ['master key'],
    );
    assert.match(failed[0].message, new RegExp(`mode 0644.*chmod 600 ${join(dir, 'master.key')}`));
  });

  test('a missing database file: a problem, and doctor does not create it (as a process: its exit code)', async (t) => {
    const db = tempDatabase();
    t.after(db.cleanup);
    const plain = await runCliProcess(['doctor'], db.env);
    assert.equal(plain.code, 1);
    assert.match(plain.stdout, /^PROBLEM +database: no database at .*DATABASE_URL/m);
    assert.deepEqual(readdirSync(db.dir), []);
  });

  test('an unreachable PostgreSQL: names DATABASE_URL, never prints the password', async () => {
    const port = await freePort();
    const url = `postgres://admin:S3cretPassw0rd@127.0.0.1:${port}/ix`;
    const { result, failed } = await doctor({ DATABASE_URL: url });
    assert.equal(result.code, 1);
    const database = failed.find((c) => c.name === 'database');
    assert.ok(database, result.stdout);
    assert.match(database.message, /DATABASE_URL/);
    assert.match(failed.find((c) => c.name === 'master key')?.message ?? '', /IX_MASTER_KEY is required with PostgreSQL/);
    for (const output of [result.stdout, result.stderr]) assert.ok(!output.includes('S3cretPassw0rd'), output);
    const plain = await runCli(['doctor'], { DATABASE_URL: url });
    assert.ok(!plain.stdout.includes('S3cretPassw0rd') && !plain.stderr.includes('S3cretPassw0rd'));
  });

  test('REDIS_URL pointing at a closed port: exit 1 naming REDIS_URL', async (t) => {
    const { env } = await setup(t);
    const port = await freePort();
    const { result, failed } = await doctor({ ...env, REDIS_URL: `redis://:R3disPass@127.0.0.1:${port}` });
    assert.equal(result.code, 1);
    assert.deepEqual(
      failed.map((c) => c.name),
      ['redis'],
    );
    assert.match(failed[0].message, /REDIS_URL/);
    assert.ok(!result.stdout.includes('R3disPass'));
  });

  test('an invalid configuration: one failed check naming the variable', async () => {
    const { result, checks } = await doctor({ IX_DEFAULT_RATE_LIMIT: 'lots' });
    assert.equal(result.code, 1);
    assert.equal(checks.length, 1);
    assert.match(checks[0].message, /IX_DEFAULT_RATE_LIMIT/);
  });
});
