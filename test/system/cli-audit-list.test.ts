import assert from 'node:assert/strict';
import { hostname, userInfo } from 'node:os';
import { describe, test } from 'node:test';
import type { AuditEvent } from '../../src/storage/audit-events.ts';
import { cliJson, runCli } from '../support/cli.ts';
import { testDatabase as database } from '../support/processes.ts';

/**
 * docs/audit.md and docs/cli.md#interchange-audit-list: what the CLI changes (tenants, keys, the signing key) writes
 * its events with the CLI's actor, and `audit list` prints a tenant's log as the API does, filtered.
 */

type Event = AuditEvent;

const list = async (env: Record<string, string>, ...args: string[]) =>
  (await cliJson(['audit', 'list', '--tenant', 'acme', '--json', ...args], env)).data as Event[];

describe('interchange audit list', { concurrency: true }, () => {
  test('tenants create, keys create/import/rotate/revoke and signing-keys rotate each write their event, by the CLI', async (t) => {
    const env = await database(t);
    await cliJson(['tenants', 'create', 'acme', '--json'], env);
    await cliJson(['tenants', 'create', 'globex', '--json'], env);
    const key = await cliJson(['keys', 'create', '--tenant', 'acme', '--scopes', '*', '--json'], env);
    const imported = await cliJson(
      ['keys', 'import', '--tenant', 'acme', '--key', `ix_prod_${'Q'.repeat(24)}`, '--scopes', 'entities.read', '--json'],
      env,
    );
    const rotated = await cliJson(['keys', 'rotate', String(key.id), '--overlap-seconds', '0', '--json'], env);
    await cliJson(['keys', 'revoke', String(imported.id), '--json'], env);
    // A revoked key revoked again changes nothing: no event.
    await cliJson(['keys', 'revoke', String(imported.id), '--json'], env);
    const { kid } = await cliJson(['signing-keys', 'rotate', '--json'], env);
    assert.ok(rotated.id);

    const events = (await list(env)).reverse();
    assert.deepEqual(
      events.map((e) => [e.action, e.target.type, e.target.id]),
      [
        ['tenant.created', 'tenant', 'acme'],
        ['api_key.created', 'api_key', key.id],
        ['api_key.imported', 'api_key', imported.id],
        ['api_key.rotated', 'api_key', key.id],
        ['api_key.revoked', 'api_key', imported.id],
        ['signing_key.rotated', 'signing_key', kid],
      ],
    );
    const account = userInfo().username;
    for (const e of events) {
      assert.deepEqual(e.actor, { type: 'cli', id: account, name: `${account}@${hostname()}` });
      assert.equal(e.ip, null);
      assert.match(String(e.request_id), /^cli_/);
    }
    // Every command has its own request id.
    assert.equal(new Set(events.map((e) => e.request_id)).size, events.length);
    // The signing key signs every tenant's people: every tenant's log has it.
    const globex = (await cliJson(['audit', 'list', '--tenant', 'globex', '--json'], env)).data as Event[];
    assert.deepEqual(
      globex.map((e) => e.action),
      ['signing_key.rotated', 'tenant.created'],
    );
    // No key in any event, in any form.
    const text = JSON.stringify([...events, ...globex]);
    for (const secret of [String(key.key), String(rotated.key), `ix_prod_${'Q'.repeat(24)}`]) {
      assert.ok(!text.includes(secret) && !text.includes(Buffer.from(secret).toString('base64')));
    }
  });

  test('filters and the table: --action, --target, --actor, --since/--until, --limit', async (t) => {
    const env = await database(t);
    await cliJson(['tenants', 'create', 'acme', '--json'], env);
    const keys = [];
    for (let i = 0; i < 3; i++) keys.push(await cliJson(['keys', 'create', '--tenant', 'acme', '--scopes', '*', '--json'], env));
    assert.equal((await list(env, '--action', 'api_key.created')).length, 3);
    assert.deepEqual(
      (await list(env, '--target', String(keys[1].id))).map((e) => e.action),
      ['api_key.created'],
    );
    assert.equal((await list(env, '--actor', userInfo().username)).length, 4);
    assert.equal((await list(env, '--limit', '2')).length, 2);
    assert.equal((await list(env, '--since', new Date(Date.now() + 60_000).toISOString())).length, 0);
    assert.equal((await list(env, '--until', new Date(Date.now() + 60_000).toISOString())).length, 4);

    const table = await runCli(['audit', 'list', '--tenant', 'acme'], env);
    assert.equal(table.code, 0, table.stderr);
    const [header, ...rows] = table.stdout.trim().split('\n');
    assert.match(header, /^AT\s+ACTION\s+ACTOR\s+TARGET\s+CHANGES\s+IP$/);
    assert.equal(rows.length, 4);
    assert.match(rows[0], /api_key\.created\s+cli:\S+\s+api_key:key_\w+\s+name,scopes,expires_at,rate_limit_per_minute\s+-$/);
  });

  test('bad options are usage errors (exit 2), an unknown tenant is not_found (exit 1); nothing is written', async (t) => {
    const env = await database(t);
    await cliJson(['tenants', 'create', 'acme', '--json'], env);
    for (const [args, message] of [
      [['--action', 'key.exploded'], /--action must be one of/],
      [['--since', 'yesterday'], /--since must be an RFC 3339 time/],
      [['--since', '2026-11-29T10:00:00Z', '--until', '2026-11-29T09:00:00Z'], /--until must not be before --since/],
      [['--limit', '0'], /--limit must be a whole number/],
    ] as const) {
      const result = await runCli(['audit', 'list', '--tenant', 'acme', ...args], env);
      assert.equal(result.code, 2, result.stderr);
      assert.match(result.stderr, message);
    }
    assert.equal((await runCli(['audit', 'list'], env)).code, 2);
    assert.equal((await runCli(['audit', 'list', '--tenant', 'nope'], env)).code, 1);
    assert.equal((await runCli(['audit', 'erase', '--tenant', 'acme'], env)).code, 2);
    assert.equal((await list(env)).length, 1);
  });
});
