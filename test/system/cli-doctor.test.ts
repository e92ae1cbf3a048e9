import assert from 'node:assert/strict';
import { chmodSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { after, describe, type TestContext, test } from 'node:test';
import { cliJson, runCli } from '../support/cli.ts';
import { type Env, freePort, killAll, runCliProcess, startServer, tempDatabase } from '../support/processes.ts';
import { TestPki } from '../support/test-pki.ts';

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
        ['certificates', true],
      ],
    );
    assert.deepEqual(readdirSync(dir).sort(), before);
  });

  test('a new install (tenants create, no serve yet): no master.key is what serve will create, exit 0', async (t) => {
    const db = tempDatabase();
    t.after(db.cleanup);
    await cliJson(['tenants', 'create', 'acme'], db.env);
    const key = join(db.dir, 'master.key');
    const plain = await runCli(['doctor'], db.env);
    assert.equal(plain.code, 0, plain.stdout + plain.stderr);
    assert.match(
      plain.stdout,
      new RegExp(`^ok +master key: IX_MASTER_KEY is unset and ${key} does not exist yet: \`interchange serve\` creates it`, 'm'),
    );
    assert.ok(!readdirSync(db.dir).includes('master.key'), 'doctor creates no key');
    const { result, failed } = await doctor({ ...db.env, IX_MASTER_KEY: Buffer.alloc(32, 9).toString('base64') });
    assert.equal(result.code, 0, result.stdout);
    assert.deepEqual(failed, []);
  });

  test('signing keys stored and master.key removed: exit 1 naming the file, IX_MASTER_KEY and the fix', async (t) => {
    const db = tempDatabase();
    t.after(db.cleanup);
    await cliJson(['tenants', 'create', 'acme'], db.env);
    // Creates master.key and one signing key sealed with it.
    await cliJson(['signing-keys', 'rotate'], db.env);
    const key = join(db.dir, 'master.key');
    assert.equal((await runCli(['doctor'], db.env)).code, 0);
    rmSync(key);
    const { result, failed } = await doctor(db.env);
    assert.equal(result.code, 1, result.stdout);
    assert.deepEqual(
      failed.map((c) => c.name),
      ['master key'],
    );
    const message = failed[0].message;
    assert.ok(message.includes(`${key} does not exist`), message);
    assert.match(message, /holds 1 access-token signing key\(s\) encrypted with a master key/);
    assert.ok(!message.includes('integration'), message);
    assert.match(message, /restore .*master\.key from a backup, or set IX_MASTER_KEY to the key they were stored with/);
    assert.match(message, /`interchange signing-keys rotate`/);
    // The key given through the environment instead: nothing missing (doctor cannot tell whether it is the right one).
    const withKey = await doctor({ ...db.env, IX_MASTER_KEY: Buffer.alloc(32, 9).toString('base64') });
    assert.equal(withKey.result.code, 0, withKey.result.stdout);
  });

  test('integration secrets stored and master.key removed: exit 1 counting only integrations with secrets', async (t) => {
    const db = tempDatabase();
    t.after(db.cleanup);
    await cliJson(['tenants', 'create', 'acme'], db.env);
    const { key: apiKey } = await cliJson(['keys', 'create', '--tenant', 'acme', '--scopes', 'integrations.*'], db.env);
    const server = await startServer(db.env);
    try {
      const put = async (id: string, config: object) => {
        const response = await fetch(`${server.url}/api/v1/integrations/${id}`, {
          method: 'PUT',
          headers: { 'x-api-key': apiKey, 'x-tenant-id': 'acme', 'content-type': 'application/json' },
          body: JSON.stringify({ connector: 'graphql-1.0.0', config }),
        });
        assert.equal(response.status, 201, await response.text());
      };
      await put('with-token', { base_url: 'https://crm.example.com/graphql', token: 'upstream-token-4Fh8' });
      await put('without', { base_url: 'https://erp.example.com/graphql' });
    } finally {
      assert.equal(await server.stop(), 0);
    }
    const key = join(db.dir, 'master.key');
    rmSync(key);
    const { result, failed } = await doctor(db.env);
    assert.equal(result.code, 1, result.stdout);
    assert.deepEqual(
      failed.map((c) => c.name),
      ['master key'],
    );
    const message = failed[0].message;
    assert.ok(
      message.startsWith(
        `IX_MASTER_KEY is unset and ${key} does not exist, but the database holds 1 integration(s) with secrets`,
      ),
      message,
    );
    assert.match(message, /set IX_MASTER_KEY to the key they were stored with/);
    assert.match(message, /set the integrations' secrets again/);
    assert.ok(!result.stdout.includes('upstream-token-4Fh8'));
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

  test('an unreadable database and no master.key: both problems, since what is stored is unknown', async (t) => {
    const db = tempDatabase();
    t.after(db.cleanup);
    writeFileSync(join(db.dir, 'ix.db'), 'not a SQLite database, but long enough to be read as one'.repeat(20));
    const { result, failed } = await doctor(db.env);
    assert.equal(result.code, 1);
    assert.deepEqual(
      failed.map((c) => c.name),
      ['database', 'master key'],
    );
    assert.match(failed[1].message, /does not exist, and whether secrets are stored is unknown/);
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

  test('an integration certificate that expires within 30 days, or has expired: named with its integration, exit 1', async (t) => {
    const { dir, env } = await setup(t);
    const pki = new TestPki();
    t.after(() => pki.remove());
    pki.ca('ca', 'Doctor CA');
    const soon = pki.sign('ca', 'soon', { cn: 'client-soon', usage: 'clientAuth', days: 10 });
    const old = pki.sign('ca', 'old', {
      cn: 'signer-old',
      usage: 'clientAuth',
      window: { start: '20200101000000Z', end: '20210101000000Z' },
    });
    const fresh = pki.sign('ca', 'fresh', { cn: 'client-fresh', usage: 'clientAuth', days: 365 });
    const db = new DatabaseSync(join(dir, 'ix.db'));
    db.prepare("insert into tenants (id, name, type, created_at) values ('acme', 'Acme', 'production', '')").run();
    const insert = db.prepare(
      "insert into integrations (tenant_id, id, name, connector, config, secrets, version, created_at, updated_at) values ('acme', ?, ?, ?, ?, '{}', 1, '', '')",
    );
    insert.run(
      'crm',
      'CRM',
      'graphql-1.0.0',
      JSON.stringify({ base_url: 'https://crm.example', tls: { client_certificate: soon.cert } }),
    );
    insert.run(
      'fine',
      'Fine',
      'graphql-1.0.0',
      JSON.stringify({ base_url: 'https://ok.example', tls: { client_certificate: fresh.cert } }),
    );
    insert.run(
      'erp',
      'ERP',
      'soap-1.0.0',
      JSON.stringify({ endpoint_url: 'https://erp.example', ws_security: { signature: { certificate: old.cert } } }),
    );
    db.close();
    const { result, failed } = await doctor(env);
    assert.equal(result.code, 1);
    assert.deepEqual(
      failed.map((c) => c.name),
      ['certificates'],
    );
    const message = failed[0].message;
    assert.match(message, /acme\/crm: config\.tls\.client_certificate certificate .*client-soon.* expires on .*, in (9|10) days/);
    assert.match(message, /acme\/erp: config\.ws_security\.signature\.certificate certificate .*signer-old.* expired on 2021/);
    assert.ok(!message.includes('fine'), message);
    assert.match(message, /Renew them/);
  });
});
