import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import type { LightMyRequestResponse } from 'fastify';
import { cliSource } from '../../src/audit/audit-log.ts';
import { changeMemberRole } from '../../src/auth/members.ts';
import { PasswordCheckQueue } from '../../src/auth/password-queue.ts';
import { People } from '../../src/auth/people.ts';
import { AuthFailureGuard, memoryStores } from '../../src/auth/rate-limit.ts';
import type { SignInAttempt } from '../../src/auth/sessions.ts';
import { createUser, grantRole } from '../../src/auth/user-service.ts';
import type { ApiError } from '../../src/core/errors.ts';
import { type AuditEvent, listAuditEvents } from '../../src/storage/audit-events.ts';
import { assertError, assertOk } from '../support/assertions.ts';
import { type Auth, body, type Harness, harness } from '../support/harness.ts';
import { asPerson, masterKeyOf, password, person, tokensOf } from '../support/people.ts';
import { until } from '../support/until.ts';

const addFormats = addFormatsModule as unknown as typeof addFormatsModule.default;

/**
 * The members API (docs/api.md#endpoints-members): who may list, add, change and remove members, the rules on owners,
 * and the one audit event each change writes in its own transaction (a refused change writes none).
 */

const membersUrl = '/api/v1/members';

describe('members', () => {
  let h: Harness;
  /** User ids by email. */
  const ids: Record<string, string> = {};
  /** Access tokens by email, taken once every person below has their roles. */
  const tokens: Record<string, string> = {};
  let validate: (res: LightMyRequestResponse, method: string, path: string) => void;

  const emails = ['olive@example.com', 'oscar@example.com', 'adam@example.com', 'dora@example.com', 'vera@example.com'];
  const newcomer = 'nina@example.com';

  before(async () => {
    h = await harness();
    for (const tenant of ['acme', 'globex', 'solo', 'duo', 'race']) await h.tenant(tenant);
    ids['olive@example.com'] = await person(h, 'olive@example.com', { acme: 'owner', solo: 'owner', duo: 'owner' });
    ids['oscar@example.com'] = await person(h, 'oscar@example.com', { acme: 'owner', duo: 'owner', race: 'owner' });
    ids['adam@example.com'] = await person(h, 'adam@example.com', { acme: 'admin', globex: 'admin', race: 'owner' });
    ids['dora@example.com'] = await person(h, 'dora@example.com', { acme: 'developer' });
    ids['vera@example.com'] = await person(h, 'vera@example.com', { acme: 'viewer', globex: 'viewer' });
    ids[newcomer] = await person(h, newcomer);
    ids['gus@example.com'] = await person(h, 'gus@example.com', { globex: 'owner' });
    for (const email of emails) tokens[email] = (await tokensOf(h, email)).access;

    const doc = body(await h.call(null, { method: 'GET', url: '/api/v1/openapi.json' }));
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    addFormats(ajv);
    ajv.addSchema({ $id: 'openapi', components: doc.components });
    validate = (res, method, path) => {
      const response = doc.paths[path]?.[method.toLowerCase()]?.responses?.[String(res.statusCode)];
      assert.ok(response, `${method} ${path} does not document ${res.statusCode}`);
      const schema = JSON.parse(
        JSON.stringify(response.content['application/json'].schema).replaceAll('"#/components/', '"openapi#/components/'),
      );
      const check = ajv.compile(schema);
      assert.ok(check(body(res)), `${method} ${path} ${res.statusCode}: ${JSON.stringify(check.errors)}`);
    };
  });
  after(() => h.close());

  const as = (email: string, tenant: string, method: string, url: string, payload?: object) =>
    asPerson(h, tokens[email], tenant, { method, url, payload });
  const memberUrl = (email: string) => `${membersUrl}/${ids[email]}`;

  async function eventsOf(tenant: string): Promise<AuditEvent[]> {
    return (await listAuditEvents(h.storage.db, tenant, { limit: 100 })).items;
  }

  /** Runs `work` and returns what it answered with the events it wrote to the tenant's log, oldest first. */
  async function writing<T>(tenant: string, work: () => Promise<T>): Promise<{ result: T; events: AuditEvent[] }> {
    const seen = new Set((await eventsOf(tenant)).map((e) => e.id));
    const result = await work();
    const events = (await eventsOf(tenant)).filter((e) => !seen.has(e.id)).reverse();
    return { result, events };
  }

  test('anyone of the tenant lists the members and their roles, key or person, a page at a time', async () => {
    const viewer = await as('vera@example.com', 'acme', 'GET', membersUrl);
    validate(viewer, 'GET', membersUrl);
    const listed = assertOk(viewer);
    assert.deepEqual(listed.map((m: { user: { email: string }; role: string }) => `${m.user.email}:${m.role}`).sort(), [
      'adam@example.com:admin',
      'dora@example.com:developer',
      'olive@example.com:owner',
      'oscar@example.com:owner',
      'vera@example.com:viewer',
    ]);
    const mine = listed.find((m: { user: { id: string } }) => m.user.id === ids['vera@example.com']);
    assert.deepEqual(Object.keys(mine).sort(), ['created_at', 'role', 'user']);
    assert.deepEqual(mine.user, { id: ids['vera@example.com'], email: 'vera@example.com', name: 'vera' });
    assert.ok(!viewer.body.includes('password') && !viewer.body.includes('scrypt'));

    // A key with any scope at all reads them too.
    const key = await h.auth('acme', ['entities.read']);
    const first = body(await h.call(key, { method: 'GET', url: `${membersUrl}?limit=2` }));
    assert.equal(first.data.length, 2);
    const rest = body(await h.call(key, { method: 'GET', url: `${membersUrl}?limit=10&cursor=${first.pagination.next_cursor}` }));
    assert.equal(rest.pagination.next_cursor, null);
    assert.deepEqual(
      [...first.data, ...rest.data].map((m: { user: { id: string } }) => m.user.id),
      listed.map((m: { user: { id: string } }) => m.user.id),
    );
    // Another tenant's members are not these.
    const globex = assertOk(await as('vera@example.com', 'globex', 'GET', membersUrl));
    assert.deepEqual(globex.map((m: { user: { email: string } }) => m.user.email).sort(), [
      'adam@example.com',
      'gus@example.com',
      'vera@example.com',
    ]);
    assertError(await h.call(null, { method: 'GET', url: membersUrl }), 401, 'missing_credentials');
  });

  test('an owner adds a member, changes the role and removes them: one event each, the owner its actor', async () => {
    const owner = ids['olive@example.com'];
    const added = await writing('acme', () =>
      as('olive@example.com', 'acme', 'POST', membersUrl, { email: 'Gus@Example.com', role: 'developer' }),
    );
    assert.equal(added.result.statusCode, 201, added.result.body);
    validate(added.result, 'POST', membersUrl);
    const member = body(added.result).data;
    assert.deepEqual(member.user, { id: ids['gus@example.com'], email: 'gus@example.com', name: 'gus' });
    assert.equal(member.role, 'developer');
    assert.equal(added.events.length, 1);
    const [event] = added.events;
    assert.equal(event.action, 'member.added');
    assert.deepEqual(event.actor, { type: 'user', id: owner, name: 'olive' });
    assert.deepEqual(event.target, { type: 'user', id: ids['gus@example.com'] });
    assert.deepEqual(event.changes, ['role']);
    assert.equal(event.request_id, added.result.headers['x-request-id']);
    assert.equal(event.ip, '127.0.0.1');

    const changed = await writing('acme', () =>
      as('olive@example.com', 'acme', 'PATCH', memberUrl('gus@example.com'), { role: 'admin' }),
    );
    validate(changed.result, 'PATCH', '/api/v1/members/{user_id}');
    assert.equal(body(changed.result).data.role, 'admin');
    assert.equal(body(changed.result).data.created_at, member.created_at, 'a membership keeps when it began');
    assert.deepEqual(
      changed.events.map((e) => [e.action, e.target.id, e.changes]),
      [['member.role_changed', ids['gus@example.com'], ['role']]],
    );

    // The same role again changes nothing, and says so by writing nothing.
    const same = await writing('acme', () =>
      as('olive@example.com', 'acme', 'PATCH', memberUrl('gus@example.com'), { role: 'admin' }),
    );
    assert.equal(assertOk(same.result).role, 'admin');
    assert.deepEqual(same.events, []);

    const removed = await writing('acme', () => as('olive@example.com', 'acme', 'DELETE', memberUrl('gus@example.com')));
    validate(removed.result, 'DELETE', '/api/v1/members/{user_id}');
    assert.deepEqual(assertOk(removed.result), { user_id: ids['gus@example.com'], removed: true });
    assert.deepEqual(
      removed.events.map((e) => [e.action, e.target.id, e.actor.id]),
      [['member.removed', ids['gus@example.com'], owner]],
    );
    assertError(await as('olive@example.com', 'acme', 'DELETE', memberUrl('gus@example.com')), 404, 'not_found');
  });

  test('an unknown email is 404 pointing at `users create`; a member already is 409; neither writes an event', async () => {
    const { result: unknown, events } = await writing('acme', () =>
      as('olive@example.com', 'acme', 'POST', membersUrl, { email: 'nobody@example.com', role: 'viewer' }),
    );
    validate(unknown, 'POST', membersUrl);
    assert.match(assertError(unknown, 404, 'not_found').message, /interchange users create/);
    assert.deepEqual(events, []);

    const twice = await writing('acme', () =>
      as('olive@example.com', 'acme', 'POST', membersUrl, { email: 'dora@example.com', role: 'viewer' }),
    );
    const error = assertError(twice.result, 409, 'conflict');
    assert.equal(error.details?.user_id, ids['dora@example.com']);
    assert.deepEqual(twice.events, []);
    assert.equal(assertOk(await as('dora@example.com', 'acme', 'GET', '/api/v1/me')).role, 'developer');

    const bad = await as('olive@example.com', 'acme', 'POST', membersUrl, { email: 'dora@example.com', role: 'superuser' });
    assertError(bad, 400, 'validation_failed');
  });

  test('writes need *: a developer, a viewer and a key without * are refused, a key with * is its actor', async () => {
    const refusals = await writing('acme', async () => [
      await as('dora@example.com', 'acme', 'POST', membersUrl, { email: newcomer, role: 'viewer' }),
      await as('vera@example.com', 'acme', 'PATCH', memberUrl('dora@example.com'), { role: 'viewer' }),
      await as('vera@example.com', 'acme', 'DELETE', memberUrl('dora@example.com')),
      await h.call(await h.auth('acme', ['api_keys.write', 'integrations.*']), {
        method: 'POST',
        url: membersUrl,
        payload: { email: newcomer, role: 'viewer' },
      }),
    ]);
    for (const res of refusals.result) assert.equal(assertError(res, 403, 'insufficient_scope').details?.required_scope, '*');
    // Keys made for the test write their own events; no member event is among them.
    assert.deepEqual(
      refusals.events.filter((e) => e.action.startsWith('member.')),
      [],
    );

    const keyed = await h.key('acme', ['*'], { name: 'provisioning' });
    const auth: Auth = { key: keyed.key, tenant: 'acme' };
    const { result, events } = await writing('acme', () =>
      h.call(auth, { method: 'POST', url: membersUrl, payload: { email: newcomer, role: 'viewer' } }),
    );
    assert.equal(result.statusCode, 201, result.body);
    assert.deepEqual(
      events.filter((e) => e.action.startsWith('member.')).map((e) => [e.action, e.actor]),
      [['member.added', { type: 'api_key', id: keyed.record.id, name: 'provisioning' }]],
    );
    assertOk(await h.call(auth, { method: 'DELETE', url: `${membersUrl}/${ids[newcomer]}` }));
  });

  test('only an owner touches owners: an admin and a key with * may not make, change or remove one', async () => {
    const key = await h.auth('acme', ['*']);
    const { result, events } = await writing('acme', async () => [
      await as('adam@example.com', 'acme', 'POST', membersUrl, { email: newcomer, role: 'owner' }),
      await as('adam@example.com', 'acme', 'PATCH', memberUrl('dora@example.com'), { role: 'owner' }),
      await as('adam@example.com', 'acme', 'PATCH', memberUrl('olive@example.com'), { role: 'admin' }),
      await as('adam@example.com', 'acme', 'DELETE', memberUrl('olive@example.com')),
      await h.call(key, { method: 'POST', url: membersUrl, payload: { email: newcomer, role: 'owner' } }),
      await h.call(key, { method: 'PATCH', url: memberUrl('oscar@example.com'), payload: { role: 'viewer' } }),
      await h.call(key, { method: 'DELETE', url: memberUrl('oscar@example.com') }),
    ]);
    for (const res of result) {
      validate(res, res.raw.req.method ?? 'GET', res.raw.req.url === membersUrl ? membersUrl : '/api/v1/members/{user_id}');
      const error = assertError(res, 403, 'insufficient_scope');
      assert.equal(error.details?.required_role, 'owner');
      assert.match(error.message, /Only an owner/);
    }
    assert.match(body(result[0]).error.message, /your role here is admin/);
    assert.match(body(result[4]).error.message, /an API key may not/);
    assert.deepEqual(
      events.filter((e) => e.action.startsWith('member.')),
      [],
    );
    // An admin still manages everyone else, admins included.
    assertOk(await as('adam@example.com', 'acme', 'PATCH', memberUrl('dora@example.com'), { role: 'admin' }));
    assertOk(await as('adam@example.com', 'acme', 'PATCH', memberUrl('dora@example.com'), { role: 'developer' }));
    // An owner makes another owner.
    assertOk(await as('olive@example.com', 'acme', 'PATCH', memberUrl('vera@example.com'), { role: 'owner' }));
    assertOk(await as('olive@example.com', 'acme', 'PATCH', memberUrl('vera@example.com'), { role: 'viewer' }));
  });

  test('the last owner can be neither demoted nor removed (409); with two, one goes', async () => {
    const { result, events } = await writing('solo', async () => [
      await as('olive@example.com', 'solo', 'PATCH', memberUrl('olive@example.com'), { role: 'admin' }),
      await as('olive@example.com', 'solo', 'DELETE', memberUrl('olive@example.com')),
    ]);
    for (const res of result) assert.match(assertError(res, 409, 'conflict').message, /last owner/);
    validate(result[0], 'PATCH', '/api/v1/members/{user_id}');
    validate(result[1], 'DELETE', '/api/v1/members/{user_id}');
    assert.deepEqual(events, []);

    // Two owners: one may leave; then the other is the last.
    assertOk(await as('olive@example.com', 'duo', 'DELETE', memberUrl('olive@example.com')));
    assertError(
      await as('oscar@example.com', 'duo', 'PATCH', memberUrl('oscar@example.com'), { role: 'viewer' }),
      409,
      'conflict',
    );
    // Olive left duo: her token is refused there at once, and works where she still is.
    assertError(await as('olive@example.com', 'duo', 'GET', membersUrl), 401, 'invalid_credentials');
    assertOk(await as('olive@example.com', 'solo', 'GET', membersUrl));
  });

  test('two owners demoting each other at once: the second waits for the first, then is no owner; one owner stays', async () => {
    const db = h.storage.db;
    const [oscar, adam] = [ids['oscar@example.com'], ids['adam@example.com']];
    let release = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    let entered = () => {};
    const inside = new Promise<void>((resolve) => {
      entered = resolve;
    });
    // Oscar's change, done but not committed yet.
    const first = db.transaction().execute(async (tx) => {
      await changeMemberRole(tx, 'race', adam, 'admin', { user: { id: oscar } }, cliSource());
      entered();
      await held;
    });
    await inside;
    let settled = false;
    const second = changeMemberRole(db, 'race', oscar, 'admin', { user: { id: adam } }, cliSource()).finally(() => {
      settled = true;
    });
    await new Promise((resolve) => setTimeout(resolve, 200));
    assert.equal(settled, false, 'the second change waits for the tenant the first holds');
    release();
    await first;
    await assert.rejects(second, (error: ApiError) => error.code === 'insufficient_scope');
    const members = assertOk(await h.call(await h.auth('race', ['entities.read']), { method: 'GET', url: membersUrl }));
    assert.deepEqual(
      members.map((m: { user: { id: string }; role: string }) => [m.user.id === oscar ? 'oscar' : 'adam', m.role]).sort(),
      [
        ['adam', 'admin'],
        ['oscar', 'owner'],
      ],
    );
  });

  test("another tenant's user ids are 404 here, and change nothing there", async () => {
    const { result, events } = await writing('globex', async () => [
      await as('olive@example.com', 'acme', 'PATCH', memberUrl('gus@example.com'), { role: 'viewer' }),
      await as('olive@example.com', 'acme', 'DELETE', memberUrl('gus@example.com')),
      await as('olive@example.com', 'acme', 'DELETE', `${membersUrl}/usr_nonexistent`),
    ]);
    for (const res of result) assertError(res, 404, 'not_found');
    assert.deepEqual(events, []);
    const globex = assertOk(await as('vera@example.com', 'globex', 'GET', membersUrl));
    assert.equal(globex.find((m: { user: { id: string } }) => m.user.id === ids['gus@example.com']).role, 'owner');
  });

  test("a removed member's token is refused at once, and a changed role holds from the next request", async () => {
    await h.tenant('leave');
    const id = await person(h, 'lee@example.com', { leave: 'admin' });
    await grantRole(h.storage.db, 'olive@example.com', 'leave', 'owner', cliSource());
    const lee = (await tokensOf(h, 'lee@example.com')).access;
    const olive = (await tokensOf(h, 'olive@example.com')).access;
    const leeCall = (method: string, url: string, payload?: object) => asPerson(h, lee, 'leave', { method, url, payload });
    // Read once: this instance now keeps Lee's role for IX_KEY_CACHE_MS.
    assertOk(await leeCall('GET', membersUrl));
    assertOk(await asPerson(h, olive, 'leave', { method: 'PATCH', url: `${membersUrl}/${id}`, payload: { role: 'viewer' } }));
    assertError(await leeCall('POST', membersUrl, { email: newcomer, role: 'viewer' }), 403, 'insufficient_scope');
    assertOk(await asPerson(h, olive, 'leave', { method: 'DELETE', url: `${membersUrl}/${id}` }));
    assertError(await leeCall('GET', membersUrl), 401, 'invalid_credentials');
  });
});

describe('members: events about a person', () => {
  let h: Harness;

  before(async () => {
    h = await harness({ IX_AUTH_FAILURE_LIMIT: '10000' });
    for (const tenant of ['north', 'south', 'east']) await h.tenant(tenant);
  });
  after(() => h.close());

  const eventsOf = async (tenant: string) => (await listAuditEvents(h.storage.db, tenant, { limit: 100 })).items;
  const allRows = () => h.storage.db.selectFrom('audit_events').selectAll().orderBy('id').execute();
  const signIn = (email: string, secret = password, remoteAddress = '10.1.1.1') =>
    h.app.inject({ method: 'POST', url: '/api/v1/auth/sign-in', payload: { email, password: secret }, remoteAddress });

  test('a sign-in writes user.signed_in to each of the person’s tenants, the person its actor', async () => {
    const id = await person(h, 'sam@example.com', { north: 'viewer', south: 'developer' });
    const res = await signIn('sam@example.com');
    assertOk(res);
    for (const tenant of ['north', 'south']) {
      const [event] = (await eventsOf(tenant)).filter((e) => e.action === 'user.signed_in');
      assert.deepEqual(event.actor, { type: 'user', id, name: 'sam' });
      assert.deepEqual(event.target, { type: 'user', id });
      assert.equal(event.ip, '10.1.1.1');
      assert.equal(event.request_id, res.headers['x-request-id']);
    }
    assert.deepEqual(
      (await eventsOf('east')).filter((e) => e.action === 'user.signed_in'),
      [],
    );
  });

  test('a wrong password writes user.sign_in_failed to each tenant; an unknown email writes nothing anywhere', async () => {
    const id = await person(h, 'tia@example.com', { north: 'viewer', east: 'viewer' });
    const before = (await allRows()).length;
    assertError(await signIn('nobody@example.com', 'not the password at all', '10.2.2.2'), 401, 'invalid_credentials');
    const wrong = await signIn('tia@example.com', 'not the password at all', '10.3.3.3');
    assertError(wrong, 401, 'invalid_credentials');
    // Written after the answer: wait for it. The unknown email's attempt came first, so it is done with by then.
    await until(
      async () => (await eventsOf('east')).some((e) => e.action === 'user.sign_in_failed'),
      'the failed sign-in in the log',
    );
    await until(
      async () => (await eventsOf('north')).some((e) => e.action === 'user.sign_in_failed' && e.target.id === id),
      'the failed sign-in in the other tenant',
    );
    const rows = await allRows();
    assert.equal(rows.length, before + 2, 'one event in each of the two tenants, none for the unknown email');
    for (const tenant of ['north', 'east']) {
      const [event] = (await eventsOf(tenant)).filter((e) => e.action === 'user.sign_in_failed' && e.target.id === id);
      assert.deepEqual(event.actor, { type: 'user', id, name: 'tia' });
      assert.equal(event.ip, '10.3.3.3');
      assert.equal(event.request_id, wrong.headers['x-request-id']);
    }
  });

  test('a failed sign-in writes nothing before its answer: a known account hands its write over, an unknown one none', async () => {
    const people = new People({
      db: h.storage.db,
      masterKey: masterKeyOf(h),
      stores: memoryStores,
      guard: new AuthFailureGuard(10_000),
      passwordQueue: new PasswordCheckQueue({ concurrency: 2, perAddress: 4, maxWaiting: 16 }),
      accessTokenTtlSeconds: 900,
      cacheMs: 0,
    });
    await person(h, 'xia@example.com', { east: 'viewer' });
    const handed: Array<() => Promise<void>> = [];
    const attempt: SignInAttempt = {
      address: '10.9.9.9',
      source: (user) => ({ actor: { type: 'user', id: user.id }, ip: '10.9.9.9', request_id: 'req-1' }),
      afterAnswer: (write) => handed.push(write),
    };
    const before = (await allRows()).length;
    const refused = { code: 'invalid_credentials' };
    await assert.rejects(people.sessions.signIn('xia@example.com', 'not the password at all', attempt), refused);
    await assert.rejects(people.sessions.signIn('nobody@example.com', 'not the password at all', attempt), refused);
    assert.equal((await allRows()).length, before, 'nothing is written before the answers');
    assert.equal(handed.length, 1, 'the known account alone has a write to hand over');
    await handed[0]();
    assert.deepEqual(
      (await allRows()).slice(before).map((r) => [r.tenant_id, r.action, r.request_id]),
      [['east', 'user.sign_in_failed', 'req-1']],
    );
  });

  test('the ten failures that lock a known account are recorded; attempts refused while locked are not, known or not', async () => {
    const id = await person(h, 'uma@example.com', { south: 'viewer' });
    for (let i = 0; i < 10; i++) {
      assertError(await signIn('uma@example.com', 'wrong password here'), 401, 'invalid_credentials');
      assertError(await signIn('ghost@example.com', 'wrong password here'), 401, 'invalid_credentials');
    }
    const failures = async () =>
      (await eventsOf('south')).filter((e) => e.action === 'user.sign_in_failed' && e.target.id === id).length;
    await until(async () => (await failures()) === 10, 'ten failed sign-ins');
    const before = (await allRows()).length;
    const locked = await signIn('uma@example.com', password);
    assert.equal(assertError(locked, 429, 'rate_limited').details?.reason, 'account_lockout');
    const ghost = await signIn('ghost@example.com', password);
    assert.equal(assertError(ghost, 429, 'rate_limited').details?.reason, 'account_lockout');
    // Knocking on a locked account cannot grow the log: nothing is written for either refusal, now or after.
    for (let i = 0; i < 5; i++) await signIn('uma@example.com', password);
    // A later failure of another known account is written after any the refusals would have queued before it.
    const sentinel = await person(h, 'sid@example.com', { south: 'viewer' });
    assertError(await signIn('sid@example.com', 'wrong password here'), 401, 'invalid_credentials');
    await until(
      async () => (await allRows()).some((r) => r.target_id === sentinel && r.action === 'user.sign_in_failed'),
      'the later failure written',
    );
    assert.equal(await failures(), 10);
    assert.equal((await allRows()).length, before + 2, 'member.added and the later failure, nothing else');
  });

  test('user.created and sign-ins of a person with no tenant show in the first tenant they join, before member.added', async () => {
    const user = await createUser(h.storage.db, { email: 'Vic@example.com', name: 'Vic', password }, cliSource());
    assertOk(await signIn('vic@example.com'));
    assertError(await signIn('vic@example.com', 'not the password at all'), 401, 'invalid_credentials');
    await until(async () => (await allRows()).filter((r) => r.target_id === user.id).length === 3, 'three waiting events');
    for (const tenant of ['north', 'south', 'east']) {
      assert.deepEqual(
        (await eventsOf(tenant)).filter((e) => e.target.id === user.id),
        [],
      );
    }

    const owner = await person(h, 'wes@example.com', { south: 'owner' });
    const token = (await tokensOf(h, 'wes@example.com')).access;
    const res = await asPerson(h, token, 'south', {
      method: 'POST',
      url: membersUrl,
      payload: { email: 'vic@example.com', role: 'viewer' },
    });
    assert.equal(res.statusCode, 201, res.body);
    const mine = (await eventsOf('south')).filter((e) => e.target.id === user.id).reverse();
    assert.deepEqual(
      mine.map((e) => [e.action, e.actor.type]),
      [
        ['user.created', 'cli'],
        ['user.signed_in', 'user'],
        ['user.sign_in_failed', 'user'],
        ['member.added', 'user'],
      ],
    );
    assert.deepEqual(mine[0].changes, ['email', 'name', 'password']);
    assert.equal(mine[3].actor.id, owner);
    // Placed once: none waits any more, and a second tenant gets only what happens from now on.
    assert.equal((await allRows()).filter((r) => r.target_id === user.id && r.tenant_id === '').length, 0);
  });

  test('no event holds a password, in the clear or encoded', async () => {
    const rows = JSON.stringify(await allRows());
    for (const secret of [password, 'not the password at all', 'wrong password here']) {
      for (const form of [secret, Buffer.from(secret).toString('base64'), Buffer.from(secret).toString('base64url')]) {
        assert.ok(!rows.includes(form), `an event holds ${form}`);
      }
    }
    assert.ok(!rows.includes('scrypt$'), 'an event holds a password hash');
  });
});
