import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { scopeResources } from '../../src/auth/scopes.ts';
import { type CliResult, cliJson, runCli } from '../support/cli.ts';
import {
  testDatabase as database,
  type Json,
  killAll,
  runCliProcess,
  type ServerProcess,
  startServer,
  tempDatabase,
} from '../support/processes.ts';
import { acceptedAfterRevocation, describeAcceptance } from '../support/revocation.ts';

// The commands' logic runs in this process (runCli); a few runs are real processes, for what only a process shows.
after(killAll);

/** `--json` output: exactly one line holding one JSON object. */
function oneObject(result: CliResult): Json {
  assert.equal(result.code, 0, result.stderr);
  assert.match(result.stdout, /^[^\n]+\n$/, 'exactly one line on stdout');
  const value = JSON.parse(result.stdout);
  assert.equal(typeof value, 'object');
  assert.ok(value !== null && !Array.isArray(value));
  return value;
}

/**
 * Exit 2 or 1 with a message on stderr and nothing on stdout; after `--json`, stderr is one line holding
 * `{"error": {"code", "message"}}` and the message is matched against `message`.
 */
function refused(result: CliResult, code: 1 | 2, message: RegExp): void {
  assert.equal(result.code, code, `exit code (stderr: ${result.stderr})`);
  assert.equal(result.stdout, '');
  if (!result.stderr.startsWith('{')) {
    assert.match(result.stderr, message);
    return;
  }
  assert.match(result.stderr, /^[^\n]+\n$/, 'exactly one line on stderr');
  const { error } = JSON.parse(result.stderr);
  assert.equal(typeof error.code, 'string');
  assert.match(error.message, message);
}

const secretFree = (key: object) => !('key' in key) && !('hash' in key) && !('lineage_id' in key);
const inOneDay = () => new Date(Date.now() + 86_400_000).toISOString();

describe('interchange tenants', { concurrency: true }, () => {
  test('create prints the tenant; list prints {data}; creating it again exits 1', async (t) => {
    const env = await database(t);
    const tenant = oneObject(await runCli(['tenants', 'create', 'acme', '--name', 'Acme', '--type', 'sandbox', '--json'], env));
    assert.deepEqual(Object.keys(tenant).sort(), ['created_at', 'id', 'name', 'type']);
    assert.equal(tenant.id, 'acme');
    assert.equal(tenant.name, 'Acme');
    assert.equal(tenant.type, 'sandbox');
    assert.ok(!Number.isNaN(Date.parse(tenant.created_at)));

    const plain = oneObject(await runCli(['tenants', 'create', 'globex', '--json'], env));
    assert.equal(plain.type, 'production', 'the default type');
    assert.equal(plain.name, 'globex', 'the name defaults to the id');

    const list = oneObject(await runCli(['tenants', 'list', '--json'], env));
    assert.deepEqual(list, { data: [tenant, plain] });

    refused(await runCli(['tenants', 'create', 'acme', '--json'], env), 1, /acme.*exists/);
    assert.deepEqual(oneObject(await runCli(['tenants', 'list', '--json'], env)), list, 'nothing changed');
  });

  test('usage errors exit 2 with the reason on stderr', async (t) => {
    const env = await database(t, { acme: 'production' });
    const [badType, unknownCommand, noCommand, help, unknownAction, unknownOption, noTenant, badScope, badId] = await Promise.all(
      [
        runCli(['tenants', 'create', 'x', '--type', 'bogus', '--json'], env),
        runCli(['frobnicate', '--json'], env),
        runCli([], env),
        runCli(['help'], env),
        runCli(['keys', 'frobnicate', '--json'], env),
        runCli(['tenants', 'create', 'y', '--colour', 'red'], env),
        runCli(['keys', 'create', '--scopes', 'entities.read', '--json'], env),
        runCli(['keys', 'create', '--tenant', 'acme', '--scopes', 'foo.read', '--json'], env),
        runCli(['tenants', 'create', 'bad id', '--json'], env),
      ],
    );
    refused(badType, 2, /--type must be one of production, sandbox, staging, development/);
    refused(unknownCommand, 2, /unknown command frobnicate/);
    refused(noCommand, 2, /usage: interchange <command>/);
    assert.equal(help.code, 0);
    assert.match(help.stdout, /usage: interchange <command>/);
    refused(unknownAction, 2, /unknown action keys frobnicate/);
    refused(unknownOption, 2, /--colour/);
    refused(noTenant, 2, /--tenant is required/);
    refused(badScope, 2, /"foo\.read" is not a scope/);
    assert.equal(JSON.parse(badScope.stderr).error.message.match(/foo\.read/g)?.length, 1, 'the reason is said once');
    // Every resource a scope may name, webhooks included: the list the scopes are checked against.
    const badScopeMessage = JSON.parse(badScope.stderr).error.message;
    assert.match(badScopeMessage, /\bwebhooks\b/);
    for (const resource of scopeResources) assert.match(badScopeMessage, new RegExp(`\\b${resource}\\b`), resource);
    refused(badId, 2, /tenant_id/);
    assert.deepEqual(oneObject(await runCli(['tenants', 'list', '--json'], env)).data.length, 1, 'nothing was created');
  });
});

describe('`--`, the end of the options', { concurrency: true }, () => {
  /** A usage error in plain text: exit 2, nothing on stdout, `message` on stderr, which is not JSON. */
  function plainUsageError(result: CliResult, message: RegExp): void {
    assert.ok(!result.stderr.startsWith('{'), `plain text: ${result.stderr}`);
    refused(result, 2, message);
  }

  test('before the command or the action, or last, it is passed over', async (t) => {
    const env = await database(t, { acme: 'sandbox' });
    const [leading, beforeAction, trailing, migrateLeading, migrateTrailing] = await Promise.all([
      runCli(['--', 'tenants', 'list'], env),
      runCli(['tenants', '--', 'list'], env),
      runCli(['tenants', 'list', '--'], env),
      runCli(['--', 'migrate'], env),
      runCli(['migrate', '--'], env),
    ]);
    for (const result of [leading, beforeAction, trailing]) {
      assert.equal(result.code, 0, result.stderr);
      assert.equal(result.stdout, 'ID    TYPE     NAME\nacme  sandbox  acme\n');
    }
    for (const result of [migrateLeading, migrateTrailing]) {
      assert.equal(result.code, 0, result.stderr);
      assert.equal(result.stdout, 'up to date\n');
    }
    const created = oneObject(await runCli(['tenants', 'create', '--json', '--', 'globex'], env));
    assert.equal(created.id, 'globex', 'the id after `--`, options before it');
  });

  test('every word after it is an argument, never an option', async (t) => {
    const env = await database(t, { acme: 'production' });
    const [json, help, topHelp, version, migrateJson, dashedId, keyId, repeated] = await Promise.all([
      runCli(['--', 'tenants', 'list', '--json'], env),
      runCli(['tenants', 'list', '--', '--help'], env),
      runCli(['--', '--help'], env),
      runCli(['--', '--version'], env),
      runCli(['--', 'migrate', '--json'], env),
      // Taken as the id (and refused as one), not as the --name option without its value.
      runCli(['tenants', 'create', '--', '--name'], env),
      runCli(['keys', 'revoke', '--', '--json'], env),
      runCli(['--', 'tenants', '--', 'list'], env),
    ]);
    plainUsageError(json, /Unexpected argument '--json'/);
    plainUsageError(help, /Unexpected argument '--help'/);
    plainUsageError(topHelp, /^unknown command --help\n/);
    plainUsageError(version, /^unknown command --version\n/);
    plainUsageError(migrateJson, /Unexpected argument '--json'[\s\S]*usage: interchange migrate/);
    plainUsageError(dashedId, /^tenant_id: /);
    assert.ok(!keyId.stderr.startsWith('{'), keyId.stderr);
    refused(keyId, 1, /^No API key --json\.\n$/);
    // The second `--` came after the first: it is an argument, here the name of an action there is not.
    plainUsageError(repeated, /^unknown action tenants --\n/);
    assert.deepEqual(oneObject(await runCli(['tenants', 'list', '--json'], env)).data.length, 1, 'nothing was created');
  });

  test('a process started as `interchange -- tenants list` lists the tenants', async (t) => {
    const env = await database(t, { acme: 'production' });
    const result = await runCliProcess(['--', 'tenants', 'list'], env);
    assert.equal(result.code, 0, result.stderr);
    assert.equal(result.stdout, 'ID    TYPE        NAME\nacme  production  acme\n');
  });
});

describe('interchange keys', { concurrency: true }, () => {
  test('create prints the key object with the secret: ix_test_ for sandbox, ix_live_ for production', async (t) => {
    const env = await database(t, { acme: 'sandbox', globex: 'staging' });
    const sandbox = oneObject(
      await runCli(
        ['keys', 'create', '--tenant', 'acme', '--scopes', 'entities.read,entities.write', '--name', 'n', '--json'],
        env,
      ),
    );
    assert.match(sandbox.key, /^ix_test_[0-9A-Za-z]{38,}$/);
    assert.match(sandbox.id, /^key_/);
    assert.equal(sandbox.tenant_id, 'acme');
    assert.equal(sandbox.name, 'n');
    assert.equal(sandbox.prefix, 'ix_test_');
    assert.equal(sandbox.start, sandbox.key.slice(0, 12));
    assert.equal(sandbox.last4, sandbox.key.slice(-4));
    assert.deepEqual(sandbox.scopes, ['entities.read', 'entities.write']);
    assert.equal(sandbox.expires_at, null);
    assert.equal(sandbox.rate_limit_per_minute, 600);
    assert.equal(sandbox.legacy, false);
    assert.equal(sandbox.revoked_at, null);
    assert.equal(sandbox.rotated_to, null);
    assert.deepEqual(sandbox.usage, { last_used_at: null, last_used_ip: null, request_count: 0 });
    assert.ok(!('hash' in sandbox));

    const expiresAt = inOneDay();
    const live = oneObject(
      await runCli(
        ['keys', 'create', '--tenant', 'globex', '--scopes', '*', '--rate-limit', '5', '--expires-at', expiresAt, '--json'],
        env,
      ),
    );
    assert.match(live.key, /^ix_live_[0-9A-Za-z]{38,}$/);
    assert.equal(live.prefix, 'ix_live_');
    assert.equal(live.rate_limit_per_minute, 5);
    assert.equal(live.expires_at, expiresAt);
    assert.notEqual(live.key.slice(8, 40), sandbox.key.slice(8, 40));
  });

  test('create refuses a past expiry, a bad limit and an unknown tenant', async (t) => {
    const env = await database(t, { acme: 'production' });
    const base = ['keys', 'create', '--tenant', 'acme', '--scopes', 'entities.read', '--json'];
    const [past, badDate, localDate, zeroLimit, textLimit, noScopes, unknownTenant] = await Promise.all([
      runCli([...base, '--expires-at', '2001-01-01T00:00:00Z'], env),
      runCli([...base, '--expires-at', 'tomorrow'], env),
      runCli([...base, '--expires-at', 'Jan 1 2099'], env),
      runCli([...base, '--rate-limit', '0'], env),
      runCli([...base, '--rate-limit', 'lots'], env),
      runCli(['keys', 'create', '--tenant', 'acme', '--json'], env),
      runCli(['keys', 'create', '--tenant', 'nope', '--scopes', 'entities.read', '--json'], env),
    ]);
    refused(past, 2, /expires_at: must be in the future/);
    refused(badDate, 2, /--expires-at must be an RFC 3339 timestamp/);
    refused(localDate, 2, /--expires-at must be an RFC 3339 timestamp/);
    refused(zeroLimit, 2, /rate_limit_per_minute/);
    refused(textLimit, 2, /--rate-limit/);
    refused(noScopes, 2, /--scopes is required/);
    refused(unknownTenant, 1, /nope/);
    assert.deepEqual(oneObject(await runCli(['keys', 'list', '--tenant', 'acme', '--json'], env)), { data: [] });
  });

  test('list prints {data} of key objects without secrets', async (t) => {
    const env = await database(t, { acme: 'sandbox', globex: 'production' });
    const first = await cliJson(['keys', 'create', '--tenant', 'acme', '--scopes', 'entities.read', '--name', 'one'], env);
    const second = await cliJson(['keys', 'create', '--tenant', 'acme', '--scopes', 'entities.*', '--name', 'two'], env);
    await cliJson(['keys', 'create', '--tenant', 'globex', '--scopes', 'entities.read'], env);

    const list = oneObject(await runCli(['keys', 'list', '--tenant', 'acme', '--json'], env));
    assert.deepEqual(Object.keys(list), ['data']);
    assert.deepEqual(list.data.map((k: { id: string }) => k.id).sort(), [first.id, second.id].sort(), 'only this tenant');
    for (const key of list.data) assert.ok(secretFree(key), `no secret in ${JSON.stringify(key)}`);
    const { key: _secret, ...firstObject } = first;
    // The CLI adds `state` to the API's key object (what the STATE column shows).
    const { state, ...listed } = list.data.find((k: { id: string }) => k.id === first.id);
    assert.deepEqual(listed, firstObject);
    assert.equal(state, 'active');
    assert.ok(!list.data.some((k: object) => JSON.stringify(k).includes(first.key.slice(12, -4))));

    const [noTenant, unknownTenant] = await Promise.all([
      runCli(['keys', 'list', '--json'], env),
      runCli(['keys', 'list', '--tenant', 'nope', '--json'], env),
    ]);
    refused(noTenant, 2, /--tenant is required/);
    refused(unknownTenant, 1, /nope/);
  });

  test('import takes a legacy key: legacy true, prefix ix_prod_; a second import exits 1', async (t) => {
    const env = await database(t, { acme: 'sandbox' });
    const legacyKey = 'ix_prod_Ab3dEf6hIj9kLm2nOp5qRs8t';
    const imported = oneObject(
      await runCli(['keys', 'import', '--tenant', 'acme', '--key', legacyKey, '--scopes', 'entities.read', '--json'], env),
    );
    assert.equal(imported.legacy, true);
    assert.equal(imported.prefix, 'ix_prod_');
    assert.equal(imported.start, 'ix_prod_Ab3d');
    assert.equal(imported.last4, 'Rs8t');
    assert.deepEqual(imported.scopes, ['entities.read']);
    assert.equal(imported.key, legacyKey, 'section 9: import answers with `key` like create and rotate');

    const importKey = (key: string) =>
      runCli(['keys', 'import', '--tenant', 'acme', '--key', key, '--scopes', '*', '--json'], env);
    const [dev, again, notLegacy, noKey] = await Promise.all([
      importKey('ix_dev_0123456789abcdefXYZ'),
      importKey(legacyKey),
      importKey('ix_live_notlegacy0000000000'),
      runCli(['keys', 'import', '--tenant', 'acme', '--scopes', '*', '--json'], env),
    ]);
    assert.equal(oneObject(dev).prefix, 'ix_dev_');
    assert.equal(oneObject(dev).legacy, true);
    refused(again, 1, /imported already/);
    refused(notLegacy, 2, /legacy key/);
    refused(noKey, 2, /--key is required/);
  });

  test('rotate issues a new-format key with the same name, scopes, limit and expiry', async (t) => {
    const env = await database(t, { acme: 'production' });
    const expiresAt = inOneDay();
    const old = await cliJson(
      [
        'keys',
        'create',
        '--tenant',
        'acme',
        '--scopes',
        'entities.read',
        '--name',
        'crm',
        '--rate-limit',
        '7',
        '--expires-at',
        expiresAt,
      ],
      env,
    );
    const rotated = oneObject(await runCli(['keys', 'rotate', old.id, '--overlap-seconds', '0', '--json'], env));
    assert.notEqual(rotated.id, old.id);
    assert.match(rotated.key, /^ix_live_[0-9A-Za-z]{38,}$/);
    assert.notEqual(rotated.key, old.key);
    assert.equal(rotated.legacy, false);
    assert.equal(rotated.name, 'crm');
    assert.deepEqual(rotated.scopes, ['entities.read']);
    assert.equal(rotated.rate_limit_per_minute, 7);
    assert.equal(rotated.expires_at, expiresAt);

    const listed = (await cliJson(['keys', 'list', '--tenant', 'acme'], env)).data;
    const oldNow = listed.find((k: { id: string }) => k.id === old.id);
    assert.equal(oldNow.rotated_to, rotated.id);
    assert.ok(Date.parse(oldNow.expires_at) <= Date.now(), 'with no overlap the old key has expired');

    const [again, unknown, longOverlap, noId] = await Promise.all([
      runCli(['keys', 'rotate', old.id, '--json'], env),
      runCli(['keys', 'rotate', 'key_nope', '--json'], env),
      runCli(['keys', 'rotate', rotated.id, '--overlap-seconds', '604801', '--json'], env),
      runCli(['keys', 'rotate', '--json'], env),
    ]);
    refused(again, 1, /rotated already/);
    refused(unknown, 1, /key_nope/);
    refused(longOverlap, 2, /--overlap-seconds/);
    refused(noId, 2, /usage: interchange keys rotate/);
  });

  test('rotating a legacy key gives a new-format key', async (t) => {
    const env = await database(t, { acme: 'sandbox' });
    const legacy = await cliJson(
      ['keys', 'import', '--tenant', 'acme', '--key', 'ix_prod_abcdefghijklmnopqrstuvwx', '--scopes', 'entities.read'],
      env,
    );
    const rotated = oneObject(await runCli(['keys', 'rotate', legacy.id, '--overlap-seconds', '0', '--json'], env));
    assert.equal(rotated.legacy, false);
    assert.equal(rotated.prefix, 'ix_test_');
    assert.match(rotated.key, /^ix_test_[0-9A-Za-z]{38,}$/);
  });

  test('revoke prints the key with revoked_at; an unknown id exits 1; a revoked key cannot be rotated', async (t) => {
    const env = await database(t, { acme: 'production' });
    const key = await cliJson(['keys', 'create', '--tenant', 'acme', '--scopes', 'entities.read'], env);
    const revoked = oneObject(await runCli(['keys', 'revoke', key.id, '--json'], env));
    assert.equal(revoked.id, key.id);
    assert.ok(secretFree(revoked));
    assert.ok(Date.parse(revoked.revoked_at) <= Date.now());

    const [unknown, noId, rotate] = await Promise.all([
      runCli(['keys', 'revoke', 'key_doesnotexist', '--json'], env),
      runCli(['keys', 'revoke', '--json'], env),
      runCli(['keys', 'rotate', key.id, '--json'], env),
    ]);
    refused(unknown, 1, /key_doesnotexist/);
    refused(noId, 2, /usage: interchange keys revoke/);
    refused(rotate, 1, /revoked/);
  });
});

describe('a key revoked by the CLI and a running server', () => {
  test('the server refuses the key within 1 second of the revocation', async (t) => {
    const env = await database(t);
    const tenant = await cliJson(['tenants', 'create', 'acme', '--name', 'Acme', '--type', 'sandbox'], env);
    const key = await cliJson(['keys', 'create', '--tenant', tenant.id, '--scopes', 'entities.read', '--name', 'e2e'], env);
    const server = await startServer(env);
    t.after(() => server.stop());

    const get = () => fetch(`${server.url}/api/v1/entities`, { headers: { 'x-api-key': key.key, 'x-tenant-id': tenant.id } });
    const before = await get();
    assert.equal(before.status, 200);
    assert.deepEqual(await before.json(), { success: true, data: [], pagination: { next_cursor: null } });

    // Polled from before the CLI starts; timed from the moment the revocation was written (revoked_at).
    const revocation = runCli(['keys', 'revoke', key.id, '--json'], env).then((revoke) => {
      const revoked = oneObject(revoke);
      assert.equal(revoked.id, key.id);
      return Date.parse(revoked.revoked_at);
    });
    const accepted = await acceptedAfterRevocation(async () => {
      const response = await get();
      const body = await response.json();
      if (response.status === 200) return false;
      assert.equal(response.status, 401, JSON.stringify(body));
      assert.equal(body.error.code, 'invalid_credentials');
      assert.equal(response.headers.get('www-authenticate'), 'ApiKey realm="interchange", header="X-API-Key"');
      return true;
    }, revocation);
    t.diagnostic(`the server: ${describeAcceptance(accepted)}`);
    assert.ok(accepted < 1000, `the server: ${describeAcceptance(accepted)}`);
    assert.equal(await server.stop(), 0);
  });
});

const allMigrations = [
  '001_foundation',
  '002_integrations',
  '003_execution_messages',
  '004_execution_details',
  '005_people',
  '006_async_executions',
  '007_webhooks',
  '008_execution_runs',
  '009_execution_claims',
  '010_queue_rounds',
  '011_catalog',
  '012_audit_log',
];

describe('interchange migrate', () => {
  test('applies the migrations once: {"applied":[every migration]}, then {"applied":[]}', async (t) => {
    const env = await database(t);
    assert.deepEqual(oneObject(await runCli(['migrate', '--json'], env)), { applied: allMigrations });
    assert.deepEqual(oneObject(await runCli(['migrate', '--json'], env)), { applied: [] });
    refused(await runCli(['migrate', '--force'], env), 2, /usage: interchange migrate/);
  });

  test('three migrate processes at once on one empty SQLite file all exit 0, and apply it once', async (t) => {
    const env = await database(t);
    const results = await Promise.all([1, 2, 3].map(() => runCliProcess(['migrate', '--json'], env)));
    for (const result of results) assert.equal(result.code, 0, result.stderr);
    const applied = results.flatMap((r) => JSON.parse(r.stdout).applied);
    assert.deepEqual(applied, allMigrations);
    assert.deepEqual(oneObject(await runCli(['tenants', 'list', '--json'], env)), { data: [] });
  });

  test('a DATABASE_URL that is neither sqlite: nor postgres:// is a usage error', async () => {
    refused(await runCli(['migrate', '--json'], { DATABASE_URL: 'mysql://localhost/ix' }), 2, /DATABASE_URL/);
  });
});

describe('interchange serve', { concurrency: true }, () => {
  test('with no DATABASE_URL it creates ./data/interchange.db on first start (npm start)', async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'ix-serve-'));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    assert.equal(existsSync(join(dir, 'data')), false);

    const server = await startServer({}, { cwd: dir });
    t.after(() => server.stop());
    assert.ok(statSync(join(dir, 'data')).isDirectory());
    assert.ok(statSync(join(dir, 'data', 'interchange.db')).isFile());
    const ready = await fetch(`${server.url}/readyz`);
    assert.equal(ready.status, 200);
    assert.equal(await server.stop(), 0);

    // The CLI finds the same default database from the same folder.
    assert.deepEqual(oneObject(await runCliProcess(['migrate', '--json'], {}, { cwd: dir })), { applied: [] });
  });

  test('creates a missing nested data folder named by DATABASE_URL', async (t) => {
    const { dir, cleanup } = tempDatabase();
    t.after(cleanup);
    const file = join(dir, 'a', 'b', 'c', 'ix.db');
    const server = await startServer({ DATABASE_URL: `sqlite:${file}` });
    t.after(() => server.stop());
    assert.ok(statSync(file).isFile());
    // Owner only: the folders it created, the database and its WAL files (key hashes, secrets).
    const mode = (path: string) => `0${(statSync(path).mode & 0o777).toString(8)}`;
    for (const folder of ['a', 'a/b', 'a/b/c']) assert.equal(mode(join(dir, folder)), '0700', folder);
    for (const path of [file, `${file}-wal`, `${file}-shm`, join(dir, 'a', 'b', 'c', 'master.key')]) {
      assert.equal(mode(path), '0600', path);
    }
    assert.equal(await server.stop(), 0);
  });

  test('a data folder that cannot be created: exit 1 with the reason on stderr', async (t) => {
    const { dir, cleanup } = tempDatabase();
    t.after(cleanup);
    // A file where the folder should be: refused even for root, unlike permissions.
    writeFileSync(join(dir, 'data'), 'not a folder');
    const result = await runCliProcess(['serve'], { DATABASE_URL: `sqlite:${join(dir, 'data', 'ix.db')}`, PORT: '0' });
    assert.equal(result.code, 1, result.stderr);
    assert.match(result.stderr, new RegExp(`mkdir '${join(dir, 'data')}'`));
  });

  test('three servers started at once on one empty database all come up', async (t) => {
    const env = await database(t);
    const started = await Promise.allSettled([1, 2, 3].map(() => startServer(env)));
    for (const result of started) if (result.status === 'fulfilled') t.after(() => result.value.stop());
    for (const result of started) assert.equal(result.status, 'fulfilled', String((result as PromiseRejectedResult).reason));
    const servers = started.map((r) => (r as PromiseFulfilledResult<ServerProcess>).value);
    for (const server of servers) assert.equal((await fetch(`${server.url}/readyz`)).status, 200);
    for (const server of servers) assert.equal(await server.stop(), 0);
    assert.deepEqual(oneObject(await runCli(['migrate', '--json'], env)), { applied: [] });
  });

  test('serve takes no arguments', async () => {
    refused(await runCliProcess(['serve', '--port', '80'], { DATABASE_URL: 'sqlite::memory:' }), 2, /usage: interchange serve/);
  });
});
