import assert from 'node:assert/strict';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { after, describe, test } from 'node:test';
import { assertJsonFailure, runCli } from '../support/cli.ts';
import { killAll, runCliProcess, tempDatabase } from '../support/processes.ts';

after(killAll);

const { version } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8'));

describe('interchange --help and --version', { concurrency: true }, () => {
  const cases: Array<[string[], RegExp]> = [
    [['--help'], /usage: interchange <command>[\s\S]*doctor[\s\S]*integrations list[\s\S]*executions list/],
    [['keys', '--help'], /usage: interchange keys <create\|import\|list\|revoke\|rotate>/],
    [['keys', 'create', '--help'], /usage: interchange keys create --tenant T --scopes a,b/],
    [['keys', 'import', '--tenant', 'x', '--help'], /usage: interchange keys import/],
    [['keys', 'list', '-h'], /usage: interchange keys list[\s\S]*rotated/],
    [['keys', 'revoke', '--help'], /usage: interchange keys revoke <key_id>/],
    [['keys', 'rotate', '--help'], /usage: interchange keys rotate <key_id>/],
    [['tenants', '--help'], /usage: interchange tenants <create\|list>/],
    [['tenants', 'create', '--help'], /usage: interchange tenants create <tenant_id>/],
    [['tenants', 'list', '--help'], /usage: interchange tenants list/],
    [['serve', '--help'], /usage: interchange serve[\s\S]*DATABASE_URL/],
    [['migrate', '--help'], /usage: interchange migrate/],
    [['doctor', '--help'], /usage: interchange doctor/],
    [['integrations', '--help'], /usage: interchange integrations <list>/],
    [['integrations', 'list', '--help'], /usage: interchange integrations list --tenant T/],
    [['executions', '--help'], /usage: interchange executions <list\|cancel>/],
    [['executions', 'cancel', '--help'], /usage: interchange executions cancel <execution_id> --tenant T/],
    [['webhooks', '--help'], /usage: interchange webhooks <list\|create\|delete>/],
    [['webhooks', 'create', '--help'], /usage: interchange webhooks create --tenant T --url U/],
    [['executions', 'list', '--help'], /usage: interchange executions list --tenant T \[--integration I\]/],
    [['users', '--help'], /usage: interchange users <create\|list\|grant\|revoke>/],
    [['users', 'create', '--help'], /usage: interchange users create <email> \[--name N\] --password-stdin/],
    [['signing-keys', '--help'], /usage: interchange signing-keys <rotate>/],
    [
      ['signing-keys', 'rotate', '--help'],
      /usage: interchange signing-keys rotate\n\n {2}Starts signing access tokens with a new key/,
    ],
    [['users', 'list', '--help'], /usage: interchange users list/],
    [['audit', '--help'], /usage: interchange audit <list>/],
    [['audit', 'list', '--help'], /usage: interchange audit list --tenant T \[--action A\]/],
    [['users', 'grant', '--help'], /usage: interchange users grant <email> --tenant T --role owner\|admin\|developer\|viewer/],
    [['users', 'revoke', '--help'], /usage: interchange users revoke <email> --tenant T/],
  ];
  for (const [args, usage] of cases) {
    test(`${args.join(' ')}: usage on stdout, exit 0, nothing created`, async (t) => {
      // A DATABASE_URL in a folder that does not exist: help must not open (and so create) anything.
      const db = tempDatabase();
      t.after(db.cleanup);
      const env = { DATABASE_URL: `sqlite:${db.dir}/absent/ix.db` };
      const result = await runCli(args, env);
      assert.equal(result.code, 0, result.stderr);
      assert.equal(result.stderr, '');
      assert.match(result.stdout, usage);
      assert.deepEqual(readdirSync(db.dir), []);
    });
  }

  test('--version prints the version of package.json (as a process: its exit code and stdout)', async () => {
    const [plain, json] = await Promise.all([runCliProcess(['--version'], {}), runCliProcess(['--version', '--json'], {})]);
    assert.equal(plain.code, 0);
    assert.equal(plain.stdout, `${version}\n`);
    assert.deepEqual(JSON.parse(json.stdout), { version });
  });
});

describe('errors with --json: one object on stderr', { concurrency: true }, () => {
  test('usage, configuration, API and runtime errors each have their code and exit code', async (t) => {
    const db = tempDatabase();
    t.after(db.cleanup);
    const env = db.env;
    // A file where the database's folder should be: the storage cannot be opened.
    writeFileSync(`${db.dir}/file`, 'x');
    const [unknownCommand, unknownOption, badStatus, badConfig, unknownTenant, runtime] = await Promise.all([
      runCli(['frobnicate', '--json'], env),
      runCli(['keys', 'create', '--colour', 'red', '--json'], env),
      runCli(['executions', 'list', '--tenant', 'acme', '--status', 'done', '--json'], env),
      runCli(['tenants', 'list', '--json'], { DATABASE_URL: 'mysql://localhost/ix' }),
      runCli(['integrations', 'list', '--tenant', 'nope', '--json'], env),
      runCli(['tenants', 'list', '--json'], { DATABASE_URL: `sqlite:${db.dir}/file/ix.db` }),
    ]);
    assertJsonFailure(unknownCommand, 2, 'usage_error', /^unknown command frobnicate$/);
    assertJsonFailure(unknownOption, 2, 'usage_error', /--colour/);
    assertJsonFailure(badStatus, 2, 'usage_error', /--status must be one of succeeded, failed/);
    assertJsonFailure(badConfig, 2, 'config_error', /DATABASE_URL/);
    assertJsonFailure(unknownTenant, 1, 'not_found', /nope/);
    assertJsonFailure(runtime, 1, 'runtime_error', /file/);
  });

  test('without --json the same errors stay plain text (the first as a process: its exit code and stderr)', async (t) => {
    const db = tempDatabase();
    t.after(db.cleanup);
    const [unknownCommand, unknownTenant] = await Promise.all([
      runCliProcess(['frobnicate'], db.env),
      runCli(['integrations', 'list', '--tenant', 'nope'], db.env),
    ]);
    assert.equal(unknownCommand.code, 2);
    assert.match(unknownCommand.stderr, /^unknown command frobnicate\nusage: interchange <command>/);
    assert.equal(unknownTenant.code, 1);
    assert.equal(unknownTenant.stderr, 'No tenant nope.\n');
  });
});
