import assert from 'node:assert/strict';
import { userInfo } from 'node:os';
import { describe, test } from 'node:test';
import { type AuditEvent, listAuditEvents } from '../../src/storage/audit-events.ts';
import { openStorage } from '../../src/storage/database.ts';
import { cliJson, runCli } from '../support/cli.ts';
import { type Env, testDatabase } from '../support/processes.ts';

/**
 * `interchange users create|grant|revoke` write their audit events (docs/people-and-console.md#the-audit-trail-of-people),
 * the operating-system account that ran the command their actor: `user.created` waits for the person's first tenant,
 * a grant is `member.added` or `member.role_changed` (nothing when the role is the same), a revoke `member.removed`.
 */

const password = 'correct horse battery staple';

async function eventsOf(env: Env, tenant: string): Promise<AuditEvent[]> {
  const storage = openStorage(env.DATABASE_URL);
  try {
    return (await listAuditEvents(storage.db, tenant, { limit: 100 })).items.reverse();
  } finally {
    await storage.close();
  }
}

describe('interchange users: the audit log', () => {
  test('create, grant, grant again, grant the same role, revoke, revoke again: each change its one event', async (t) => {
    const env = await testDatabase(t, { acme: 'production', beta: 'production' });
    const created = await runCli(['users', 'create', 'ada@example.com', '--name', 'Ada', '--password-stdin', '--json'], env, {
      input: `${password}\n`,
    });
    assert.equal(created.code, 0, created.stderr);
    const user = JSON.parse(created.stdout);
    // A member of no tenant: the event waits.
    assert.deepEqual(await eventsOf(env, 'acme'), []);

    await cliJson(['users', 'grant', 'ada@example.com', '--tenant', 'acme', '--role', 'developer'], env);
    await cliJson(['users', 'grant', 'ada@example.com', '--tenant', 'acme', '--role', 'admin'], env);
    await cliJson(['users', 'grant', 'ada@example.com', '--tenant', 'acme', '--role', 'admin'], env);
    await cliJson(['users', 'grant', 'ada@example.com', '--tenant', 'beta', '--role', 'viewer'], env);
    await cliJson(['users', 'revoke', 'ada@example.com', '--tenant', 'acme'], env);
    assert.equal((await runCli(['users', 'revoke', 'ada@example.com', '--tenant', 'acme'], env)).code, 1);

    const acme = await eventsOf(env, 'acme');
    assert.deepEqual(
      acme.map((e) => [e.action, e.target, e.changes]),
      [
        ['user.created', { type: 'user', id: user.id }, ['email', 'name', 'password']],
        ['member.added', { type: 'user', id: user.id }, ['role']],
        ['member.role_changed', { type: 'user', id: user.id }, ['role']],
        ['member.removed', { type: 'user', id: user.id }, ['role']],
      ],
    );
    // The person was in acme by then: beta gets only what happened there.
    assert.deepEqual(
      (await eventsOf(env, 'beta')).map((e) => e.action),
      ['member.added'],
    );
    let account = 'unknown';
    try {
      account = userInfo().username;
    } catch {
      // As cliSource: no passwd entry for this uid.
    }
    for (const event of acme) {
      assert.equal(event.actor.type, 'cli');
      assert.equal(event.actor.id, account);
      assert.equal(event.ip, null);
      assert.match(event.request_id ?? '', /^cli_/);
    }
    assert.equal(new Set(acme.map((e) => e.request_id)).size, acme.length, 'one request id per command');
    assert.ok(!JSON.stringify(acme).includes(password));
  });

  test('a refused command writes nothing: an email in use, an unknown tenant, an unknown user', async (t) => {
    const env = await testDatabase(t, { acme: 'production' });
    assert.equal(
      (await runCli(['users', 'create', 'ada@example.com', '--password-stdin'], env, { input: `${password}\n` })).code,
      0,
    );
    await cliJson(['users', 'grant', 'ada@example.com', '--tenant', 'acme', '--role', 'owner'], env);
    const before = await eventsOf(env, 'acme');
    assert.equal(
      (await runCli(['users', 'create', 'ADA@example.com', '--password-stdin'], env, { input: `${password}\n` })).code,
      1,
    );
    assert.equal((await runCli(['users', 'grant', 'ada@example.com', '--tenant', 'nope', '--role', 'owner'], env)).code, 1);
    assert.equal((await runCli(['users', 'grant', 'bob@example.com', '--tenant', 'acme', '--role', 'owner'], env)).code, 1);
    assert.equal((await runCli(['users', 'revoke', 'bob@example.com', '--tenant', 'acme'], env)).code, 1);
    assert.deepEqual(await eventsOf(env, 'acme'), before);
  });
});
