import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { sweepAuditLog } from '../../src/audit/retention.ts';
import { type AuditEvent, listAuditEvents } from '../../src/storage/audit-events.ts';
import { assertError } from '../support/assertions.ts';
import { type Auth, body, type Harness, harness } from '../support/harness.ts';
import { asPerson, person, tokensOf } from '../support/people.ts';
import { TestPki } from '../support/test-pki.ts';

/**
 * docs/audit.md: every change of keys and integrations through the API writes exactly its one event, in the change's
 * own transaction; a refused change writes none; a change whose event cannot be written does not happen; events are
 * read newest first with filters by whoever holds audit.read, never changed, dropped after the retention, and never
 * hold a secret in any of its forms.
 */

const secret = (name: string) => `${name}-Secret-${'k9Z4'.repeat(3)}`;
const secrets = { client_secret: secret('oauth-client'), token: secret('bearer'), key_password: secret('key-password') };

/** Every event of the tenant, newest first, straight from storage. */
async function eventsOf(h: Harness, tenant: string): Promise<AuditEvent[]> {
  return (await listAuditEvents(h.storage.db, tenant, { limit: 100 })).items;
}

/** The events written since `before` (a count of the tenant's events then), oldest first. */
async function newEvents(h: Harness, tenant: string, before: number): Promise<AuditEvent[]> {
  const all = await eventsOf(h, tenant);
  return all.slice(0, all.length - before).reverse();
}

const integration = (baseUrl: string, auth?: Record<string, unknown>) => ({
  connector: 'graphql-1.0.0',
  config: { base_url: baseUrl, ...(auth && { auth }) },
});

describe('the audit log: every change writes its event', () => {
  let h: Harness;
  let admin: Auth;
  let adminKeyId: string;
  const pki = new TestPki();
  let clientKey = '';
  let clientCert = '';
  /** Every secret value this suite sent or was given: no event may hold one, in any of its forms. */
  const given: string[] = [];

  before(async () => {
    h = await harness();
    await h.tenant('acme');
    await h.tenant('globex');
    const made = await h.key('acme', ['*'], { name: 'deploy bot' });
    admin = { key: made.key, tenant: 'acme' };
    adminKeyId = made.record.id;
    given.push(made.key);
    pki.ca('ca', 'Audit CA');
    clientCert = pki.sign('ca', 'client', { cn: 'client', usage: 'clientAuth' }).cert;
    clientKey = pki.encryptedKey('client', secrets.key_password);
  });
  after(async () => {
    await h.close();
    pki.remove();
  });

  const call = (auth: Auth, method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE', url: string, payload?: object) =>
    h.call(auth, { method, url, ...(payload && { payload }), headers: { 'x-request-id': `req-${method}-${url.length}` } });

  test('keys: created, rotated, revoked, each once, by the key that did it, from its address and request', async () => {
    const before = (await eventsOf(h, 'acme')).length;
    const created = await call(admin, 'POST', '/api/v1/api-keys', { name: 'reporting', scopes: ['executions.read'] });
    assert.equal(created.statusCode, 201, created.body);
    const key = body(created).data;
    given.push(key.key);
    const rotated = await call(admin, 'POST', `/api/v1/api-keys/${key.id}/rotate`, { overlap_seconds: 60 });
    assert.equal(rotated.statusCode, 201, rotated.body);
    given.push(body(rotated).data.key);
    const successor = body(rotated).data.id;
    assert.equal((await call(admin, 'DELETE', `/api/v1/api-keys/${successor}`)).statusCode, 200);
    // Revoking a revoked key changes nothing: no second event.
    assert.equal((await call(admin, 'DELETE', `/api/v1/api-keys/${successor}`)).statusCode, 200);

    const events = await newEvents(h, 'acme', before);
    assert.deepEqual(
      events.map((e) => [e.action, e.target.id, e.changes]),
      [
        ['api_key.created', key.id, ['name', 'scopes', 'expires_at', 'rate_limit_per_minute']],
        ['api_key.rotated', key.id, ['expires_at', 'rotated_to']],
        ['api_key.revoked', successor, ['revoked_at']],
      ],
    );
    for (const e of events) {
      assert.deepEqual(e.actor, { type: 'api_key', id: adminKeyId, name: 'deploy bot' });
      assert.equal(e.ip, '127.0.0.1');
      assert.match(String(e.request_id), /^req-/);
      assert.equal(e.target.type, 'api_key');
      assert.match(e.id, /^aud_/);
    }
    assert.equal(events[0].request_id, created.headers['x-request-id']);
  });

  test('integrations: created, updated and replaced name the fields that changed; deleted names none', async () => {
    const before = (await eventsOf(h, 'acme')).length;
    const oauth = {
      type: 'oauth2_client_credentials',
      token_url: 'https://auth.example.com/token',
      client_id: 'interchange',
      client_secret: secrets.client_secret,
    };
    given.push(secrets.client_secret);
    const put = await call(admin, 'PUT', '/api/v1/integrations/crm', integration('https://crm.example.com/graphql', oauth));
    assert.equal(put.statusCode, 201, put.body);
    // The same secret again, and a new URL on the same origin: only the URL changed.
    const sameSecret = await call(admin, 'PATCH', '/api/v1/integrations/crm', {
      config: {
        base_url: 'https://crm.example.com/v2/graphql',
        auth: { type: oauth.type, client_secret: secrets.client_secret },
      },
    });
    assert.equal(sameSecret.statusCode, 200, sameSecret.body);
    const newSecret = await call(admin, 'PATCH', '/api/v1/integrations/crm', {
      config: { auth: { type: oauth.type, client_secret: `${secrets.client_secret}-2` } },
    });
    assert.equal(newSecret.statusCode, 200, newSecret.body);
    given.push(`${secrets.client_secret}-2`);
    const renamed = await call(admin, 'PATCH', '/api/v1/integrations/crm', { name: 'CRM', catalog: { mcp: true } });
    assert.equal(renamed.statusCode, 200, renamed.body);
    given.push(secrets.token);
    const replaced = await call(
      admin,
      'PUT',
      '/api/v1/integrations/crm',
      integration('https://crm.example.com/v2/graphql', { type: 'bearer', token: secrets.token }),
    );
    assert.equal(replaced.statusCode, 200, replaced.body);
    assert.equal((await call(admin, 'DELETE', '/api/v1/integrations/crm')).statusCode, 200);

    const events = await newEvents(h, 'acme', before);
    const shown = events.map((e) => [e.action, e.changes]);
    assert.equal(shown.length, 6, JSON.stringify(shown));
    assert.deepEqual(shown[0][0], 'integration.created');
    for (const path of ['name', 'connector', 'config.base_url', 'config.auth.type', 'config.auth.client_id']) {
      assert.ok((shown[0][1] as string[]).includes(path), `created names ${path}: ${shown[0][1]}`);
    }
    assert.ok((shown[0][1] as string[]).includes('config.auth.client_secret'));
    assert.deepEqual(shown.slice(1), [
      ['integration.updated', ['config.base_url']],
      ['integration.updated', ['config.auth.client_secret']],
      ['integration.updated', ['catalog.mcp', 'name']],
      [
        'integration.replaced',
        [
          'catalog.mcp',
          'config.auth.client_id',
          'config.auth.client_secret',
          'config.auth.token',
          'config.auth.token_url',
          'config.auth.type',
          'name',
        ],
      ],
      ['integration.deleted', []],
    ]);
    for (const e of events) assert.deepEqual(e.target, { type: 'integration', id: 'crm' });
  });

  test('a refused change writes nothing: bad input, a missing scope, an unknown id, a failed precondition', async () => {
    await call(admin, 'PUT', '/api/v1/integrations/erp', integration('https://erp.example.com/graphql'));
    const reader = await h.auth('acme', ['integrations.read', 'api_keys.read']);
    const before = (await eventsOf(h, 'acme')).length;
    const refusals = [
      [await call(admin, 'POST', '/api/v1/api-keys', { scopes: ['nothing.read'] }), 400],
      [await call(reader, 'POST', '/api/v1/api-keys', { scopes: ['entities.read'] }), 403],
      [await call(admin, 'DELETE', '/api/v1/api-keys/key_00000000000000000000000000'), 404],
      [await call(admin, 'POST', '/api/v1/api-keys/key_00000000000000000000000000/rotate', {}), 404],
      [await call(admin, 'PUT', '/api/v1/integrations/bad', { connector: 'nope-1.0.0', config: {} }), 400],
      [await call(admin, 'PATCH', '/api/v1/integrations/erp', { config: { base_url: 'not a url' } }), 400],
      [await call(admin, 'PATCH', '/api/v1/integrations/absent', { name: 'x' }), 404],
      [await call(reader, 'PATCH', '/api/v1/integrations/erp', { name: 'x' }), 403],
      [await call(reader, 'DELETE', '/api/v1/integrations/erp'), 403],
      [await call(admin, 'DELETE', '/api/v1/integrations/absent'), 404],
    ] as const;
    for (const [res, status] of refusals) assert.equal(res.statusCode, status, res.body);
    const stale = await h.call(admin, {
      method: 'PATCH',
      url: '/api/v1/integrations/erp',
      payload: { name: 'x' },
      headers: { 'if-match': '"999"' },
    });
    assert.equal(stale.statusCode, 412, stale.body);
    assert.equal((await eventsOf(h, 'acme')).length, before);
  });

  test('a change whose event cannot be written does not happen (the event fails: the change rolls back)', async (t) => {
    await call(admin, 'PUT', '/api/v1/integrations/ledger', integration('https://ledger.example.com/graphql'));
    const keysBefore = body(await call(admin, 'GET', '/api/v1/api-keys?limit=100')).data.length;
    const eventsBefore = (await eventsOf(h, 'acme')).length;
    await refuseAuditInserts(h);
    t.after(() => allowAuditInserts(h));

    const patched = await call(admin, 'PATCH', '/api/v1/integrations/ledger', { name: 'Ledger' });
    assert.ok(patched.statusCode >= 500, `${patched.statusCode} ${patched.body}`);
    const created = await call(admin, 'POST', '/api/v1/api-keys', { scopes: ['entities.read'] });
    assert.ok(created.statusCode >= 500, created.body);
    const deleted = await call(admin, 'DELETE', '/api/v1/integrations/ledger');
    assert.ok(deleted.statusCode >= 500, deleted.body);
    const put = await call(admin, 'PUT', '/api/v1/integrations/fresh', integration('https://fresh.example.com/graphql'));
    assert.ok(put.statusCode >= 500, put.body);

    await allowAuditInserts(h);
    const ledger = body(await call(admin, 'GET', '/api/v1/integrations/ledger')).data;
    assert.equal(ledger.name, 'ledger', 'the rename was rolled back');
    assert.equal((await call(admin, 'GET', '/api/v1/integrations/fresh')).statusCode, 404);
    assert.equal(body(await call(admin, 'GET', '/api/v1/api-keys?limit=100')).data.length, keysBefore);
    assert.equal((await eventsOf(h, 'acme')).length, eventsBefore);
  });

  test('50 concurrent changes give 50 events: 25 key creations and 25 integrations written at once', async () => {
    const before = (await eventsOf(h, 'acme')).length;
    const answers = await Promise.all([
      ...Array.from({ length: 25 }, (_, i) =>
        call(admin, 'POST', '/api/v1/api-keys', { name: `k${i}`, scopes: ['entities.read'] }),
      ),
      ...Array.from({ length: 25 }, (_, i) =>
        call(admin, 'PUT', `/api/v1/integrations/many-${i}`, integration(`https://many-${i}.example.com/graphql`)),
      ),
    ]);
    for (const r of answers) assert.equal(r.statusCode, 201, r.body);
    for (const r of answers.slice(0, 25)) given.push(body(r).data.key);
    const events = await newEvents(h, 'acme', before);
    assert.equal(events.length, 50);
    assert.equal(new Set(events.map((e) => e.id)).size, 50);
    assert.deepEqual(new Set(events.map((e) => e.target.id)), new Set(answers.map((r) => body(r).data.id)));
  });

  test('writes racing on one integration: every write that landed has its event, and only those', async () => {
    await call(admin, 'PUT', '/api/v1/integrations/busy', integration('https://busy.example.com/graphql'));
    const before = (await eventsOf(h, 'acme')).length;
    const answers = await Promise.all(
      Array.from({ length: 25 }, (_, i) =>
        call(admin, 'PATCH', '/api/v1/integrations/busy', { catalog: { descriptions: { [`Op${i}`]: 'x' } } }),
      ),
    );
    // A PATCH that lost five races in a row is 409 and changed nothing.
    for (const r of answers) assert.ok(r.statusCode === 200 || r.statusCode === 409, r.body);
    const landed = answers.filter((r) => r.statusCode === 200).length;
    assert.ok(landed >= 1);
    const events = await newEvents(h, 'acme', before);
    assert.equal(events.length, landed);
    // Each landed PATCH named the one description it added, and the integration holds exactly those.
    const named = events.map((e) => {
      assert.equal(e.changes.length, 1, JSON.stringify(e.changes));
      return e.changes[0].replace('catalog.descriptions.', '');
    });
    const stored = body(await call(admin, 'GET', '/api/v1/integrations/busy')).data.catalog.descriptions;
    assert.deepEqual(named.sort(), Object.keys(stored).sort());
  });

  test('a person is the actor of what they change, by name; the other tenant sees none of it', async () => {
    await person(h, 'ada@example.com', { acme: 'admin' });
    const { access } = await tokensOf(h, 'ada@example.com');
    const globexBefore = (await eventsOf(h, 'globex')).length;
    const before = (await eventsOf(h, 'acme')).length;
    const res = await asPerson(h, access, 'acme', {
      method: 'PUT',
      url: '/api/v1/integrations/people',
      payload: integration('https://people.example.com/graphql'),
    });
    assert.equal(res.statusCode, 201, res.body);
    const [event] = (await newEvents(h, 'acme', before)).filter((e) => e.action === 'integration.created');
    assert.equal(event.actor.type, 'user');
    assert.match(event.actor.id, /^usr_/);
    assert.equal(event.actor.name, 'ada');
    assert.equal((await eventsOf(h, 'globex')).length, globexBefore);
  });

  test('mutual TLS and bearer secrets: set, changed, cleared, named by path only', async () => {
    const before = (await eventsOf(h, 'acme')).length;
    given.push(secrets.key_password);
    const put = await call(admin, 'PUT', '/api/v1/integrations/mtls', {
      connector: 'graphql-1.0.0',
      config: {
        base_url: 'https://mtls.example.com/graphql',
        tls: { client_certificate: clientCert, client_key: clientKey, client_key_password: secrets.key_password },
      },
    });
    assert.equal(put.statusCode, 201, put.body);
    const cleared = await call(admin, 'PATCH', '/api/v1/integrations/mtls', { config: { tls: null } });
    assert.equal(cleared.statusCode, 200, cleared.body);
    const events = await newEvents(h, 'acme', before);
    assert.ok(events[0].changes.includes('config.tls.client_key'), JSON.stringify(events[0].changes));
    assert.ok(events[1].changes.includes('config.tls.client_key'), JSON.stringify(events[1].changes));
    assert.ok(events[1].changes.includes('config.tls.client_key_password'), JSON.stringify(events[1].changes));
  });

  test('no event holds a secret: not as sent, not base64 or base64url, not a PEM body line', async () => {
    const rows = await h.storage.db.selectFrom('audit_events').selectAll().execute();
    const text = JSON.stringify(rows);
    assert.ok(rows.length > 40, `${rows.length} events checked`);
    const forms = given.flatMap((value) => [
      value,
      Buffer.from(value).toString('base64'),
      Buffer.from(value).toString('base64url'),
      value.slice(8, 24),
    ]);
    forms.push(...clientKey.split('\n').filter((line) => line.length > 40));
    for (const form of forms) assert.ok(!text.includes(form), `an event holds ${form.slice(0, 10)}…`);
  });
});

describe('GET /audit-events and the log itself', () => {
  let h: Harness;
  let owner: Auth;
  let auditor: Auth;
  let other: Auth;

  before(async () => {
    h = await harness();
    await h.tenant('acme');
    await h.tenant('globex');
    owner = await h.auth('acme', ['*']);
    auditor = await h.auth('acme', ['audit.read']);
    other = await h.auth('globex', ['*']);
    for (const id of ['a', 'b', 'c']) {
      const res = await h.call(owner, {
        method: 'PUT',
        url: `/api/v1/integrations/${id}`,
        payload: integration(`https://${id}.example.com/`),
      });
      assert.equal(res.statusCode, 201, res.body);
    }
    await h.call(owner, { method: 'PATCH', url: '/api/v1/integrations/b', payload: { name: 'Bee' } });
    await h.call(other, { method: 'PUT', url: '/api/v1/integrations/g', payload: integration('https://g.example.com/') });
  });
  after(() => h.close());

  const list = (auth: Auth, query = '') => h.call(auth, { method: 'GET', url: `/api/v1/audit-events${query}` });

  test('newest first, in the contract’s shape, this tenant only', async () => {
    const res = await list(auditor);
    assert.equal(res.statusCode, 200, res.body);
    const { data, pagination } = body(res);
    const actions = data.map((e: AuditEvent) => `${e.action} ${e.target.id}`);
    assert.deepEqual(actions.slice(0, 4), [
      'integration.updated b',
      'integration.created c',
      'integration.created b',
      'integration.created a',
    ]);
    assert.ok(!actions.some((a: string) => a.endsWith(' g')), 'globex’s integration is not in acme’s log');
    assert.deepEqual(Object.keys(data[0]).sort(), ['action', 'actor', 'at', 'changes', 'id', 'ip', 'request_id', 'target']);
    assert.equal(pagination.next_cursor, null);
  });

  test('filters: action, actor_id, target_id, since and until; pages with a cursor', async () => {
    const all = body(await list(auditor)).data as AuditEvent[];
    const byAction = body(await list(auditor, '?action=integration.created')).data as AuditEvent[];
    assert.deepEqual(
      byAction.map((e) => e.target.id),
      ['c', 'b', 'a'],
    );
    const byTarget = body(await list(auditor, '?target_id=b')).data as AuditEvent[];
    assert.deepEqual(
      byTarget.map((e) => e.action),
      ['integration.updated', 'integration.created'],
    );
    const actor = byTarget[0].actor.id;
    assert.equal(body(await list(auditor, `?actor_id=${actor}`)).data.length, 4);
    const newest = all[0];
    const since = body(await list(auditor, `?since=${encodeURIComponent(newest.at)}`)).data as AuditEvent[];
    assert.ok(since.some((e) => e.id === newest.id));
    assert.ok(since.every((e) => e.at >= newest.at));
    const until = body(await list(auditor, `?until=${encodeURIComponent(newest.at)}`)).data as AuditEvent[];
    assert.ok(until.every((e) => e.at < newest.at));
    const future = new Date(Date.now() + 86_400_000).toISOString();
    assert.equal(body(await list(auditor, `?since=${future}`)).data.length, 0);

    const first = body(await list(auditor, '?limit=2'));
    assert.equal(first.data.length, 2);
    assert.notEqual(first.pagination.next_cursor, null);
    const second = body(await list(auditor, `?limit=2&cursor=${first.pagination.next_cursor}`));
    assert.deepEqual(
      [...first.data, ...second.data].map((e: AuditEvent) => e.id),
      all.slice(0, 4).map((e) => e.id),
    );
  });

  test('bad filters are 400 validation_failed', async () => {
    assertError(await list(auditor, '?action=integration.exploded'), 400, 'validation_failed');
    assertError(await list(auditor, '?since=yesterday'), 400, 'validation_failed');
    assertError(await list(auditor, '?since=2026-11-29T10:00:00Z&until=2026-11-29T09:00:00Z'), 400, 'validation_failed');
    assertError(await list(auditor, '?cursor=nope'), 400, 'validation_failed');
    assertError(await list(auditor, '?limit=101'), 400, 'validation_failed');
  });

  test('audit.read: owners and admins hold it, developers and viewers do not, nor keys without it', async () => {
    for (const [email, role] of [
      ['owner@example.com', 'owner'],
      ['admin@example.com', 'admin'],
      ['dev@example.com', 'developer'],
      ['viewer@example.com', 'viewer'],
    ]) {
      await person(h, email, { acme: role });
      const { access } = await tokensOf(h, email);
      const res = await asPerson(h, access, 'acme', { method: 'GET', url: '/api/v1/audit-events' });
      if (role === 'owner' || role === 'admin') assert.equal(res.statusCode, 200, `${role}: ${res.body}`);
      else assertError(res, 403, 'insufficient_scope');
    }
    assertError(await list(await h.auth('acme', ['integrations.*', 'executions.read', 'webhooks.*'])), 403, 'insufficient_scope');
  });

  test('append-only: no route changes or deletes an event, and the database refuses an UPDATE', async () => {
    for (const method of ['POST', 'PUT', 'PATCH', 'DELETE'] as const) {
      const res = await h.call(owner, { method, url: '/api/v1/audit-events', payload: {} });
      assert.ok([404, 405].includes(res.statusCode), `${method}: ${res.statusCode}`);
    }
    const [event] = body(await list(auditor, '?limit=1')).data;
    await assert.rejects(
      h.storage.db.updateTable('audit_events').set({ action: 'integration.deleted' }).where('id', '=', event.id).execute(),
      /append-only/,
    );
    assert.equal(body(await list(auditor, '?limit=1')).data[0].action, event.action);
  });

  test('retention: the sweep drops events older than IX_AUDIT_RETENTION_DAYS, and only those', async () => {
    const count = async () =>
      (await h.storage.db.selectFrom('audit_events').select(sql<number>`count(*)`.as('n')).executeTakeFirstOrThrow()).n;
    const before = Number(await count());
    const day = 86_400_000;
    assert.equal(await sweepAuditLog(h.storage.db, 365, new Date(Date.now() + 364 * day)), 0);
    assert.equal(Number(await count()), before);
    assert.equal(await sweepAuditLog(h.storage.db, 365, new Date(Date.now() + 366 * day)), before);
    assert.equal(Number(await count()), 0);
  });
});

/** Makes every insert into audit_events fail, as a full disk or a lost connection between the change and its event would. */
async function refuseAuditInserts(h: Harness): Promise<void> {
  if (h.storage.kind === 'postgres') {
    await sql`create or replace function audit_refuse() returns trigger language plpgsql as $$
      begin raise exception 'audit log unavailable (test)'; end $$`.execute(h.storage.db);
    await sql`create trigger audit_refuse before insert on audit_events for each row execute function audit_refuse()`.execute(
      h.storage.db,
    );
  } else {
    await sql`create trigger audit_refuse before insert on audit_events begin select raise(abort, 'audit log unavailable (test)'); end`.execute(
      h.storage.db,
    );
  }
}

async function allowAuditInserts(h: Harness): Promise<void> {
  await sql`drop trigger if exists audit_refuse${sql.raw(h.storage.kind === 'postgres' ? ' on audit_events' : '')}`.execute(
    h.storage.db,
  );
}
