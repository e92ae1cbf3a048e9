import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type KeyState, keyState } from '../../src/cli/keys.ts';
import { openStorage } from '../../src/storage/database.ts';
import { assertJsonFailure, type CliResult, cliJson, runCli } from '../support/cli.ts';
import { type GraphqlServer, startGraphqlServer } from '../support/graphql-server.ts';
import { testDatabase as database, type Json, killAll, startServer, tempDatabase } from '../support/processes.ts';
import { TestPki } from '../support/test-pki.ts';
import { until } from '../support/until.ts';

after(killAll);

/** `--json` output: exit 0, nothing on stderr, exactly one line on stdout holding one JSON object. */
function oneObject(result: CliResult): Json {
  assert.equal(result.code, 0, result.stderr);
  assert.equal(result.stderr, '');
  assert.match(result.stdout, /^[^\n]+\n$/, 'exactly one line on stdout');
  const value = JSON.parse(result.stdout);
  assert.ok(typeof value === 'object' && value !== null && !Array.isArray(value));
  return value;
}

/**
 * A plain-text table: exit 0, nothing on stderr, a header row of exactly `columns`, then one record per row. Cells
 * are cut where the header's columns start, so a misaligned row fails too.
 */
function parseTable(result: CliResult, columns: string[]): Array<Record<string, string>> {
  assert.equal(result.code, 0, result.stderr);
  assert.equal(result.stderr, '');
  const [header, ...lines] = result.stdout.replace(/\n$/, '').split('\n');
  assert.deepEqual(header.split(/ {2,}/), columns, 'the header row');
  const starts = columns.map((column) => header.indexOf(column));
  return lines.map((line) =>
    Object.fromEntries(
      columns.map((column, i) => {
        const cell = line.slice(starts[i], i + 1 < starts.length ? starts[i + 1] : undefined);
        assert.ok(i + 1 === starts.length || cell.endsWith(' '), `column ${column} of "${line}" is aligned`);
        return [column, cell.trim()];
      }),
    ),
  );
}

describe('keyState', () => {
  const now = Date.parse('2030-01-10T00:00:00.000Z');
  const ms = { day: 86_400_000, week: 7 * 86_400_000 };
  const at = (offsetMs: number) => new Date(now + offsetMs).toISOString();
  const cases: Array<[string, { revoked_at?: string; rotated_to?: string; expires_at?: string }, KeyState]> = [
    ['no expiry', {}, 'active'],
    ['expires in 30 days', { expires_at: at(30 * ms.day) }, 'active'],
    ['expires 1 ms after 7 days', { expires_at: at(ms.week + 1) }, 'active'],
    ['expires in exactly 7 days', { expires_at: at(ms.week) }, 'expiring'],
    ['expires in 1 ms', { expires_at: at(1) }, 'expiring'],
    ['expires now', { expires_at: at(0) }, 'expired'],
    ['expired a day ago', { expires_at: at(-ms.day) }, 'expired'],
    ['rotated, overlap ends in 1 ms', { rotated_to: 'key_next', expires_at: at(1) }, 'expiring'],
    ['rotated, overlap ends in 7 days', { rotated_to: 'key_next', expires_at: at(ms.week) }, 'expiring'],
    ['rotated, old expiry 30 days away', { rotated_to: 'key_next', expires_at: at(30 * ms.day) }, 'expiring'],
    ['rotated, overlap ends now', { rotated_to: 'key_next', expires_at: at(0) }, 'rotated'],
    ['rotated, overlap ended a day ago', { rotated_to: 'key_next', expires_at: at(-ms.day) }, 'rotated'],
    ['revoked, no expiry', { revoked_at: at(-1) }, 'revoked'],
    ['revoked, expiring', { revoked_at: at(-1), expires_at: at(ms.day) }, 'revoked'],
    ['revoked, expired', { revoked_at: at(-1), expires_at: at(-ms.day) }, 'revoked'],
    ['revoked in its overlap', { revoked_at: at(-1), rotated_to: 'key_next', expires_at: at(ms.day) }, 'revoked'],
    ['revoked after its overlap', { revoked_at: at(-1), rotated_to: 'key_next', expires_at: at(-ms.day) }, 'revoked'],
  ];
  for (const [name, fields, state] of cases) {
    test(`${name}: ${state}`, () => {
      assert.equal(keyState({ revoked_at: null, rotated_to: null, expires_at: null, ...fields }, now), state);
    });
  }

  test('now defaults to the current time', () => {
    const base = { revoked_at: null, rotated_to: null };
    assert.equal(keyState({ ...base, expires_at: new Date(Date.now() - ms.day).toISOString() }), 'expired');
    assert.equal(keyState({ ...base, expires_at: new Date(Date.now() + ms.day).toISOString() }), 'expiring');
    assert.equal(keyState({ ...base, expires_at: new Date(Date.now() + 30 * ms.day).toISOString() }), 'active');
  });
});

describe('interchange tenants list', () => {
  test('a header row, then one row per tenant by id; --json stays {"data": [tenant, …]}', async (t) => {
    const env = await database(t);
    const empty = await runCli(['tenants', 'list'], env);
    assert.equal(empty.code, 0, empty.stderr);
    assert.equal(empty.stdout, 'ID  TYPE  NAME\n', 'the header alone when there is no tenant');

    const globex = await cliJson(['tenants', 'create', 'globex', '--type', 'sandbox', '--name', 'Globex Corporation'], env);
    const acme = await cliJson(['tenants', 'create', 'acme', '--name', 'Acme'], env);
    assert.deepEqual(parseTable(await runCli(['tenants', 'list'], env), ['ID', 'TYPE', 'NAME']), [
      { ID: 'acme', TYPE: 'production', NAME: 'Acme' },
      { ID: 'globex', TYPE: 'sandbox', NAME: 'Globex Corporation' },
    ]);
    assert.deepEqual(oneObject(await runCli(['tenants', 'list', '--json'], env)), { data: [acme, globex] });
  });
});

describe('interchange keys list', () => {
  test('a STATE column and `state` in --json for keys made, revoked and rotated through the CLI', async (t) => {
    const env = await database(t, { acme: 'production', globex: 'production' });
    const inDays = (days: number) => new Date(Date.now() + days * 86_400_000).toISOString();
    const create = (tenant: string, name: string, ...more: string[]) =>
      cliJson(['keys', 'create', '--tenant', tenant, '--scopes', 'entities.read', '--name', name, ...more], env);
    const [plain, far, soon, revoked, expired, overlapping, rotated, other] = await Promise.all([
      create('acme', 'plain'),
      create('acme', 'far', '--expires-at', inDays(30)),
      create('acme', 'soon', '--expires-at', inDays(1)),
      create('acme', 'revoked', '--expires-at', inDays(1)),
      create('acme', 'expired'),
      create('acme', 'overlapping'),
      create('acme', 'rotated'),
      create('globex', 'other'),
    ]);
    // An expiry cannot be set in the past through the CLI: this one is moved there in the database directly.
    const storage = openStorage(env.DATABASE_URL);
    try {
      await storage.db
        .updateTable('api_keys')
        .set({ expires_at: new Date(Date.now() - 60_000).toISOString() })
        .where('id', '=', expired.id)
        .execute();
    } finally {
      await storage.close();
    }
    const [, overlapSuccessor, rotatedSuccessor] = await Promise.all([
      cliJson(['keys', 'revoke', revoked.id], env),
      cliJson(['keys', 'rotate', overlapping.id, '--overlap-seconds', '3600'], env),
      // No overlap: the old key's expiry is the moment of the rotation, so it is past by the time the list runs.
      cliJson(['keys', 'rotate', rotated.id, '--overlap-seconds', '0'], env),
    ]);

    const expected: Record<string, [string, KeyState]> = {
      [plain.id]: ['plain', 'active'],
      [far.id]: ['far', 'active'],
      [soon.id]: ['soon', 'expiring'],
      [revoked.id]: ['revoked', 'revoked'],
      [expired.id]: ['expired', 'expired'],
      [overlapping.id]: ['overlapping', 'expiring'],
      [overlapSuccessor.id]: ['overlapping', 'active'],
      [rotated.id]: ['rotated', 'rotated'],
      [rotatedSuccessor.id]: ['rotated', 'active'],
    };

    const [text, json] = await Promise.all([
      runCli(['keys', 'list', '--tenant', 'acme'], env),
      runCli(['keys', 'list', '--tenant', 'acme', '--json'], env),
    ]);
    const rows = parseTable(text, ['ID', 'NAME', 'STATE', 'KEY', 'SCOPES', 'EXPIRES_AT', 'ROTATED_TO']);
    assert.deepEqual(Object.fromEntries(rows.map((row) => [row.ID, [row.NAME, row.STATE]])), expected);
    const rotatedRow = rows.find((row) => row.ID === rotated.id);
    assert.equal(rotatedRow?.ROTATED_TO, rotatedSuccessor.id);
    assert.equal(rows.find((row) => row.ID === plain.id)?.EXPIRES_AT, '-');
    assert.equal(rows.find((row) => row.ID === plain.id)?.KEY, `${plain.start}…${plain.last4}`);
    for (const key of [plain, far, soon, revoked, expired, overlapping, rotated, other, overlapSuccessor, rotatedSuccessor]) {
      assert.ok(!text.stdout.includes(key.key), `the secret of ${key.id} is not printed`);
    }

    const { data } = oneObject(json);
    assert.deepEqual(Object.keys(oneObject(json)), ['data']);
    assert.deepEqual(Object.fromEntries(data.map((k: Json) => [k.id, [k.name, k.state]])), expected);
    for (const key of data) assert.ok(!('key' in key) && !('hash' in key), `no secret in ${JSON.stringify(key)}`);
    assert.equal(data.find((k: Json) => k.id === rotated.id).rotated_to, rotatedSuccessor.id);
  });
});

describe('interchange integrations list and executions list, on what a running server wrote', () => {
  const db = tempDatabase();
  const token = 'upstream-token-7Qx2Vb9';
  let upstream: GraphqlServer;
  /** GET /api/v1/integrations and GET /api/v1/executions?limit=100 for acme, as the server answered them. */
  let apiIntegrations: Json[];
  let apiExecutions: Json[];
  /** GET /api/v1/integrations for initech, whose secrets are all inside config objects. */
  let apiNested: Json[];
  const pki = new TestPki();
  let clientKey = '';
  const nested = {
    password: 'basic-password-4Hk8Zr',
    token: 'bearer-token-9Wd3Lq',
    shorthand: 'shorthand-token-2Pm6Ty',
    key_password: 'key-password-7Nc1Fs',
    ws_password: 'ws-password-5Gj0Xe',
  };
  /** acme's execute calls, oldest first. */
  const calls: Array<{ integration: string; requestId: string; status: 'succeeded' | 'failed' }> = [];

  before(async () => {
    upstream = await startGraphqlServer({ token });
    await cliJson(['tenants', 'create', 'acme'], db.env);
    await cliJson(['tenants', 'create', 'globex'], db.env);
    const scopes = ['--scopes', 'integrations.*,executions.read'];
    const acme = { tenant: 'acme', key: (await cliJson(['keys', 'create', '--tenant', 'acme', ...scopes], db.env)).key };
    const globex = { tenant: 'globex', key: (await cliJson(['keys', 'create', '--tenant', 'globex', ...scopes], db.env)).key };
    await cliJson(['tenants', 'create', 'initech'], db.env);
    const initech = { tenant: 'initech', key: (await cliJson(['keys', 'create', '--tenant', 'initech', ...scopes], db.env)).key };
    pki.ca('ca', 'CLI lists CA');
    const client = pki.sign('ca', 'client', { cn: 'client', usage: 'clientAuth' });
    clientKey = pki.encryptedKey('client', nested.key_password);
    const server = await startServer(db.env);
    try {
      const call = async (auth: { tenant: string; key: string }, method: string, path: string, body?: object) => {
        const response = await fetch(`${server.url}/api/v1${path}`, {
          method,
          headers: { 'x-api-key': auth.key, 'x-tenant-id': auth.tenant, 'content-type': 'application/json' },
          body: body === undefined ? undefined : JSON.stringify(body),
        });
        return { response, body: await response.json() };
      };
      const put = async (auth: typeof acme, id: string, body: object) => {
        const { response, body: answer } = await call(auth, 'PUT', `/integrations/${id}`, body);
        assert.equal(response.status, 201, JSON.stringify(answer));
      };
      const graphql = 'graphql-1.0.0';
      await put(acme, 'crm', { name: 'CRM', connector: graphql, config: { base_url: upstream.url, token } });
      // No token: the upstream refuses every call, so its executions fail.
      await put(acme, 'erp', { connector: graphql, config: { base_url: upstream.url } });
      await put(globex, 'billing', { connector: graphql, config: { base_url: upstream.url, token } });
      // Secrets inside config objects: stored under their dot path (auth.token), none at the top but a shorthand.
      const graphqlWith = (config: object) => ({ connector: graphql, config: { base_url: upstream.url, ...config } });
      await put(initech, 'basic', graphqlWith({ auth: { type: 'basic', username: 'ada', password: nested.password } }));
      await put(initech, 'bearer', graphqlWith({ auth: { type: 'bearer', token: nested.token } }));
      await put(
        initech,
        'mtls',
        graphqlWith({
          token: nested.shorthand,
          tls: { client_certificate: client.cert, client_key: clientKey, client_key_password: nested.key_password },
        }),
      );
      await put(initech, 'wsse', {
        connector: 'soap-1.0.0',
        config: {
          endpoint_url: `${upstream.url}/soap`,
          namespace: 'urn:x',
          ws_security: { username_token: { username: 'ada', password: nested.ws_password, password_type: 'text' } },
        },
      });
      apiNested = (await call(initech, 'GET', '/integrations')).body.data;

      const execute = async (integration: string, payload: object) => {
        const { response } = await call(acme, 'POST', `/integrations/${integration}/execute`, payload);
        const requestId = response.headers.get('x-request-id');
        assert.ok(requestId);
        calls.push({ integration, requestId, status: response.ok ? 'succeeded' : 'failed' });
      };
      await execute('crm', { operation: 'receive', query: '{ usersList { id name } }' });
      await execute('erp', { operation: 'receive', query: '{ usersList { id } }' });
      await execute('crm', { operation: 'test' });
      await execute('crm', { operation: 'receive', query: '{ brokenRequired }' });
      await execute('erp', { operation: 'receive', query: '{ usersList { name } }' });
      await execute('crm', { operation: 'receive', query: '{ users(first: 3) { nodes { id } } }' });
      assert.deepEqual(
        calls.map((c) => `${c.integration} ${c.status}`),
        ['crm succeeded', 'erp failed', 'crm succeeded', 'crm failed', 'erp failed', 'crm succeeded'],
      );
      const globexCall = await call(globex, 'POST', '/integrations/billing/execute', { operation: 'test' });
      assert.equal(globexCall.response.status, 200);

      apiIntegrations = (await call(acme, 'GET', '/integrations')).body.data;
      // The server writes its executions log behind: polled until every call is there.
      apiExecutions = await until(async () => {
        const { data } = (await call(acme, 'GET', '/executions?limit=100')).body;
        return data.length >= calls.length && data;
      }, 'every execute call logged');
      assert.equal(apiExecutions.length, calls.length, 'every execute call is logged');
    } finally {
      await server.stop();
    }
  });
  after(async () => {
    await upstream?.close();
    db.cleanup();
    pki.remove();
  });

  test('integrations list: a header, one row per integration of the tenant, secrets by name only', async () => {
    const rows = parseTable(await runCli(['integrations', 'list', '--tenant', 'acme'], db.env), [
      'ID',
      'NAME',
      'CONNECTOR',
      'SECRETS_SET',
      'UPDATED_AT',
    ]);
    const byId = Object.fromEntries(apiIntegrations.map((i) => [i.id, i]));
    assert.deepEqual(rows, [
      { ID: 'crm', NAME: 'CRM', CONNECTOR: 'graphql-1.0.0', SECRETS_SET: 'token', UPDATED_AT: byId.crm.updated_at },
      { ID: 'erp', NAME: 'erp', CONNECTOR: 'graphql-1.0.0', SECRETS_SET: '-', UPDATED_AT: byId.erp.updated_at },
    ]);
  });

  test('integrations list: SECRETS_SET names every stored secret by its path, inside auth, tls and ws_security too', async () => {
    const [text, json] = await Promise.all([
      runCli(['integrations', 'list', '--tenant', 'initech'], db.env),
      runCli(['integrations', 'list', '--tenant', 'initech', '--json'], db.env),
    ]);
    const rows = parseTable(text, ['ID', 'NAME', 'CONNECTOR', 'SECRETS_SET', 'UPDATED_AT']);
    assert.deepEqual(
      rows.map((row) => [row.ID, row.SECRETS_SET]),
      [
        ['basic', 'auth.password'],
        ['bearer', 'auth.token'],
        ['mtls', 'tls.client_key,tls.client_key_password,token'],
        ['wsse', 'ws_security.username_token.password'],
      ],
    );
    assert.deepEqual(oneObject(json), { data: apiNested }, 'the API integration objects, as before');
    for (const secret of [...Object.values(nested), clientKey.split('\n')[1]]) {
      assert.ok(!text.stdout.includes(secret) && !json.stdout.includes(secret), `${secret} is not printed`);
    }
  });

  test('integrations list --json: {"data"} of the API integration objects, the secret only as token_set', async () => {
    const result = await runCli(['integrations', 'list', '--tenant', 'acme', '--json'], db.env);
    const listed = oneObject(result);
    assert.deepEqual(listed, { data: apiIntegrations });
    assert.deepEqual(
      listed.data.map((i: Json) => [i.id, i.config.token_set]),
      [
        ['crm', true],
        ['erp', false],
      ],
    );
    for (const integration of listed.data) assert.ok(!('token' in integration.config));
  });

  test('integrations list never prints the secret, in text or JSON', async () => {
    const outputs = await Promise.all([
      runCli(['integrations', 'list', '--tenant', 'acme'], db.env),
      runCli(['integrations', 'list', '--tenant', 'acme', '--json'], db.env),
      runCli(['integrations', 'list', '--tenant', 'globex'], db.env),
      runCli(['integrations', 'list', '--tenant', 'globex', '--json'], db.env),
    ]);
    for (const result of outputs) {
      assert.equal(result.code, 0, result.stderr);
      assert.match(result.stdout, /crm|billing/);
      assert.ok(!result.stdout.includes(token) && !result.stderr.includes(token), result.stdout);
    }
  });

  test('integrations list: an unknown tenant exits 1, a missing --tenant exits 2', async () => {
    const [plain, json, missing] = await Promise.all([
      runCli(['integrations', 'list', '--tenant', 'nope'], db.env),
      runCli(['integrations', 'list', '--tenant', 'nope', '--json'], db.env),
      runCli(['integrations', 'list', '--json'], db.env),
    ]);
    assert.equal(plain.code, 1);
    assert.equal(plain.stdout, '');
    assert.equal(plain.stderr, 'No tenant nope.\n');
    assertJsonFailure(json, 1, 'not_found', /^No tenant nope\.$/);
    assertJsonFailure(missing, 2, 'usage_error', /--tenant is required/);
  });

  /** acme's request ids, newest first, of the calls that `keep`. */
  const newestFirst = (keep: (c: (typeof calls)[number]) => boolean = () => true) =>
    calls
      .filter(keep)
      .map((c) => c.requestId)
      .reverse();
  const listed = async (...args: string[]) => {
    const { data } = oneObject(await runCli(['executions', 'list', '--tenant', 'acme', ...args, '--json'], db.env));
    return data.map((e: Json) => e.request_id);
  };

  test('executions list --json: {"data"} of the API execution objects, newest first', async () => {
    const result = oneObject(await runCli(['executions', 'list', '--tenant', 'acme', '--json'], db.env));
    assert.deepEqual(result, { data: apiExecutions });
    assert.deepEqual(
      result.data.map((e: Json) => e.request_id),
      newestFirst(),
    );
    assert.deepEqual(
      result.data.map((e: Json) => e.status),
      newestFirst().map((id) => calls.find((c) => c.requestId === id)?.status),
    );
  });

  test('executions list: a header and one row per call, newest first', async () => {
    const rows = parseTable(await runCli(['executions', 'list', '--tenant', 'acme'], db.env), [
      'ID',
      'STARTED_AT',
      'INTEGRATION',
      'OPERATION',
      'STATUS',
      'HTTP',
      'MS',
      'ERROR',
    ]);
    assert.deepEqual(
      rows.map((row) => [row.ID, row.STARTED_AT, row.INTEGRATION, row.OPERATION, row.STATUS, row.HTTP, row.ERROR]),
      apiExecutions.map((e) => [
        e.id,
        e.started_at,
        e.integration_id,
        e.operation,
        e.status,
        String(e.http_status),
        e.error_code ?? '-',
      ]),
    );
    const requestIdOf = (id: string) => apiExecutions.find((e) => e.id === id)?.request_id;
    assert.deepEqual(
      rows.map((row) => requestIdOf(row.ID)),
      newestFirst(),
    );
  });

  test('executions list filters by --integration and --status, and stops at --limit', async () => {
    const [crm, erp, failed, succeeded, erpSucceeded, crmFailed, two, twoFailed, unknown, globex] = await Promise.all([
      listed('--integration', 'crm'),
      listed('--integration', 'erp'),
      listed('--status', 'failed'),
      listed('--status', 'succeeded'),
      listed('--integration', 'erp', '--status', 'succeeded'),
      listed('--integration', 'crm', '--status', 'failed'),
      listed('--limit', '2'),
      listed('--status', 'failed', '--limit', '2'),
      listed('--integration', 'nope'),
      runCli(['executions', 'list', '--tenant', 'globex', '--json'], db.env),
    ]);
    assert.deepEqual(
      crm,
      newestFirst((c) => c.integration === 'crm'),
    );
    assert.equal(crm.length, 4);
    assert.deepEqual(
      erp,
      newestFirst((c) => c.integration === 'erp'),
    );
    assert.equal(erp.length, 2);
    assert.deepEqual(
      failed,
      newestFirst((c) => c.status === 'failed'),
    );
    assert.equal(failed.length, 3);
    assert.deepEqual(
      succeeded,
      newestFirst((c) => c.status === 'succeeded'),
    );
    assert.equal(succeeded.length, 3);
    assert.deepEqual(erpSucceeded, []);
    assert.deepEqual(
      crmFailed,
      newestFirst((c) => c.integration === 'crm' && c.status === 'failed'),
    );
    assert.equal(crmFailed.length, 1);
    assert.deepEqual(two, newestFirst().slice(0, 2));
    assert.deepEqual(twoFailed, newestFirst((c) => c.status === 'failed').slice(0, 2));
    assert.deepEqual(unknown, []);
    const globexIds = oneObject(globex).data.map((e: Json) => e.request_id);
    assert.equal(globexIds.length, 1);
    assert.ok(!newestFirst().includes(globexIds[0]), "another tenant's call is not listed");
  });

  test('executions list: a bad --status or --limit is a usage error (exit 2)', async () => {
    const base = ['executions', 'list', '--tenant', 'acme'];
    const [done, zero, tooMany, fraction, word, done2] = await Promise.all([
      runCli([...base, '--status', 'done', '--json'], db.env),
      runCli([...base, '--limit', '0', '--json'], db.env),
      runCli([...base, '--limit', '1001', '--json'], db.env),
      runCli([...base, '--limit', '2.5', '--json'], db.env),
      runCli([...base, '--limit', 'ten', '--json'], db.env),
      runCli([...base, '--status', 'done'], db.env),
    ]);
    assertJsonFailure(done, 2, 'usage_error', /^--status must be one of succeeded, failed$/);
    for (const result of [zero, tooMany, fraction, word]) {
      assertJsonFailure(result, 2, 'usage_error', /^--limit must be a whole number from 1 to 1000$/);
    }
    assert.equal(done2.code, 2);
    assert.equal(done2.stdout, '');
    assert.match(done2.stderr, /^--status must be one of succeeded, failed\n/);
    // The largest --limit is accepted.
    assert.deepEqual(await listed('--limit', '1000'), newestFirst());
  });
});
