import assert from 'node:assert/strict';
import { after, describe, type TestContext, test } from 'node:test';
import { assertJsonFailure, cliJson, runCli } from '../support/cli.ts';
import { type Env, killAll, runCliProcess, startServer, testDatabase } from '../support/processes.ts';

after(killAll);

/** `interchange users …` on a temp SQLite database (docs/cli.md#people), in this process but where stdin is piped. */

const password = 'correct horse battery staple';

async function database(t: TestContext): Promise<Env> {
  const env = await testDatabase(t);
  await cliJson(['tenants', 'create', 'acme', '--name', 'Acme Corp'], env);
  return env;
}

function createUser(env: Env, email: string, input: string, extra: string[] = []) {
  return runCli(['users', 'create', email, '--password-stdin', '--json', ...extra], env, { input });
}

describe('interchange users', () => {
  test('create reads the password from stdin; list, grant and revoke; then the person signs in', async (t) => {
    const env = await database(t);
    // A real process, its standard input a pipe: what `printf … | interchange users create` does.
    const created = await runCliProcess(
      ['users', 'create', 'Ada@Example.com', '--password-stdin', '--json', '--name', 'Ada Lovelace'],
      env,
      { input: `${password}\n` },
    );
    assert.equal(created.code, 0, created.stderr);
    const user = JSON.parse(created.stdout);
    assert.deepEqual(Object.keys(user).sort(), ['created_at', 'email', 'id', 'name']);
    assert.match(user.id, /^usr_[0-9a-z]+$/);
    assert.equal(user.email, 'ada@example.com');
    assert.equal(user.name, 'Ada Lovelace');
    assert.ok(!created.stdout.includes(password) && !created.stderr.includes(password));

    const granted = await cliJson(['users', 'grant', 'ADA@example.com', '--tenant', 'acme', '--role', 'developer'], env);
    assert.deepEqual(granted, { user, tenant_id: 'acme', role: 'developer' });
    // Granting again replaces the role.
    await cliJson(['users', 'grant', 'ada@example.com', '--tenant', 'acme', '--role', 'admin'], env);
    const listed = await cliJson(['users', 'list'], env);
    assert.deepEqual(listed, {
      data: [{ ...user, memberships: [{ tenant_id: 'acme', tenant_name: 'Acme Corp', role: 'admin' }] }],
    });
    const text = await runCli(['users', 'list'], env);
    assert.match(text.stdout, /^ID\s+EMAIL\s+NAME\s+ROLES\n/);
    assert.match(text.stdout, /ada@example\.com\s+Ada Lovelace\s+acme:admin/);

    const server = await startServer(env);
    t.after(() => server.stop());
    const signIn = await fetch(`${server.url}/api/v1/auth/sign-in`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'ada@example.com', password }),
    });
    assert.equal(signIn.status, 200);
    const { data } = await signIn.json();
    assert.deepEqual(data.memberships, [{ tenant_id: 'acme', tenant_name: 'Acme Corp', role: 'admin' }]);

    const revoked = await cliJson(['users', 'revoke', 'ada@example.com', '--tenant', 'acme'], env);
    assert.deepEqual(revoked, { user, tenant_id: 'acme', revoked: true });
    assert.deepEqual((await cliJson(['users', 'list'], env)).data[0].memberships, []);
  });

  test('signing-keys rotate: a new key signs, the old one still verifies, nobody is signed out', async (t) => {
    const env = await database(t);
    assert.equal((await createUser(env, 'ada@example.com', password)).code, 0);
    await cliJson(['users', 'grant', 'ada@example.com', '--tenant', 'acme', '--role', 'viewer'], env);
    const server = await startServer(env);
    t.after(() => server.stop());
    const signIn = async () => {
      const res = await fetch(`${server.url}/api/v1/auth/sign-in`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email: 'ada@example.com', password }),
      });
      assert.equal(res.status, 200);
      return (await res.json()).data.access_token as string;
    };
    const kidOf = (token: string) => JSON.parse(Buffer.from(token.split('.')[0], 'base64url').toString()).kid as string;
    const me = (token: string) =>
      fetch(`${server.url}/api/v1/me`, { headers: { authorization: `Bearer ${token}`, 'x-tenant-id': 'acme' } });
    const before = await signIn();
    const oldKid = kidOf(before);

    const rotated = await cliJson(['signing-keys', 'rotate'], env);
    assert.match(rotated.kid, /\S+/);
    assert.notEqual(rotated.kid, oldKid);
    const text = await runCli(['signing-keys', 'rotate'], env);
    assert.equal(text.code, 0, text.stderr);
    assert.match(text.stdout, /^signing with the new key \S+; the old ones verify for 65 more minutes\n$/);
    const newest = text.stdout.split(' ')[5].replace(/;$/, '');

    // The running server lists every key that verifies, and the token the first key signed still works there.
    const jwks = await (await fetch(`${server.url}/.well-known/jwks.json`)).json();
    assert.deepEqual(
      jwks.keys.map((k: { kid: string }) => k.kid),
      [newest, rotated.kid, oldKid],
    );
    assert.equal((await me(before)).status, 200, 'a token signed before the rotation still verifies');
    assert.equal((await runCli(['signing-keys', 'rotate', '--help'], env)).code, 0);
  });

  test('refusals: a short password, no --password-stdin, a taken email, an unknown user, tenant or role', async (t) => {
    const env = await database(t);
    assertJsonFailure(await createUser(env, 'bob@example.com', 'short\n'), 2, 'usage_error', /at least 12 characters/);
    const noStdin = await runCli(['users', 'create', 'bob@example.com', '--json'], env, { input: `${password}\n` });
    assertJsonFailure(noStdin, 2, 'usage_error', /--password-stdin/);
    const badEmail = await createUser(env, 'not-an-email', `${password}\n`);
    assert.equal(badEmail.code, 2, badEmail.stderr);
    assert.deepEqual(JSON.parse(badEmail.stderr).error.details.issues, [{ path: 'email', message: 'must be an email address' }]);
    assert.equal((await createUser(env, 'bob@example.com', password)).code, 0);
    assertJsonFailure(await createUser(env, 'BOB@example.com', `${password}\n`), 1, 'conflict', /exists already/);

    const grant = (email: string, tenant: string, role: string) =>
      runCli(['users', 'grant', email, '--tenant', tenant, '--role', role, '--json'], env);
    assertJsonFailure(await grant('bob@example.com', 'acme', 'superuser'), 2, 'usage_error', /owner, admin, developer, viewer/);
    assertJsonFailure(await grant('nobody@example.com', 'acme', 'viewer'), 1, 'not_found', /nobody@example\.com/);
    assertJsonFailure(await grant('bob@example.com', 'nowhere', 'viewer'), 1, 'not_found', /nowhere/);
    const revoke = await runCli(['users', 'revoke', 'bob@example.com', '--tenant', 'acme', '--json'], env);
    assertJsonFailure(revoke, 1, 'not_found', /no role in tenant acme/);
  });
});
