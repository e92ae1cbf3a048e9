import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startGraphqlServer } from '../support/graphql-server.ts';
import { type Auth, body, type Harness, harness, twoTenants } from '../support/harness.ts';

/** The integration field `catalog` (docs/catalog.md): shown with its defaults, merged by PATCH, checked before anything is written. */
describe('the catalog field of an integration', () => {
  let h: Harness;
  let acme: Auth;
  let globex: Auth;

  before(async () => {
    h = await harness();
    ({ acme, globex } = await twoTenants(h, ['integrations.*']));
  });
  after(() => h.close());

  const write = (auth: Auth, method: 'PUT' | 'PATCH', id: string, payload: object) =>
    h.call(auth, { method, url: `/api/v1/integrations/${id}`, payload });
  const graphql = { connector: 'graphql-1.0.0', config: { base_url: 'https://crm.example.com/api' } };
  const soap = { connector: 'soap-1.0.0', config: { endpoint_url: 'https://erp.example.com/Service.asmx?WSDL' } };
  const defaults = { mcp: false, allow_writes: false, read_operations: [], documents: [], root_fields: false, descriptions: {} };

  test('an integration without one shows every field at its default, beside config', async () => {
    const res = await write(acme, 'PUT', 'plain', graphql);
    assert.equal(res.statusCode, 201);
    const data = body(res).data;
    assert.deepEqual(data.catalog, defaults);
    assert.deepEqual(Object.keys(data), ['id', 'name', 'connector', 'config', 'catalog', 'created_at', 'updated_at']);
  });

  test('PUT stores it whole; PATCH merges it field by field, descriptions name by name, null back to the default', async () => {
    let res = await write(acme, 'PUT', 'erp', {
      ...soap,
      catalog: { mcp: true, read_operations: ['GetOrder'], descriptions: { GetOrder: 'Reads one order.', Add: 'Adds.' } },
    });
    assert.equal(res.statusCode, 201);
    assert.deepEqual(body(res).data.catalog, {
      ...defaults,
      mcp: true,
      read_operations: ['GetOrder'],
      descriptions: { GetOrder: 'Reads one order.', Add: 'Adds.' },
    });
    res = await write(acme, 'PATCH', 'erp', { catalog: { allow_writes: true, descriptions: { Add: null, Sub: 'Subtracts.' } } });
    assert.equal(res.statusCode, 200);
    assert.deepEqual(body(res).data.catalog, {
      ...defaults,
      mcp: true,
      allow_writes: true,
      read_operations: ['GetOrder'],
      descriptions: { GetOrder: 'Reads one order.', Sub: 'Subtracts.' },
    });
    // A PATCH of config alone keeps the catalog; null puts a field back to its default.
    res = await write(acme, 'PATCH', 'erp', { config: { timeout_seconds: 5 } });
    assert.equal(body(res).data.catalog.mcp, true);
    res = await write(acme, 'PATCH', 'erp', { catalog: { read_operations: null } });
    assert.deepEqual(body(res).data.catalog.read_operations, []);
    // A PUT without it stores none: every field at its default.
    res = await write(acme, 'PUT', 'erp', soap);
    assert.deepEqual(body(res).data.catalog, defaults);
  });

  test('a catalog that does not fit is 400 validation_failed with every problem, and nothing changes', async () => {
    const created = await write(acme, 'PUT', 'strict', { ...soap, catalog: { mcp: true } });
    const etag = created.headers.etag;
    const cases: Array<[object, string[]]> = [
      [{ mcp: 'yes', allow_writes: 1 }, ['catalog.mcp', 'catalog.allow_writes']],
      [{ tools: true }, ['catalog.tools']],
      [{ read_operations: 'GetOrder' }, ['catalog.read_operations']],
      [{ read_operations: ['', 7] }, ['catalog.read_operations[0]', 'catalog.read_operations[1]']],
      [{ descriptions: { GetOrder: 'x'.repeat(1001) } }, ['catalog.descriptions.GetOrder']],
      [{ descriptions: ['x'] }, ['catalog.descriptions']],
      [{ documents: [{ name: 'q', document: '{ a }' }], root_fields: true }, ['catalog.documents', 'catalog.root_fields']],
    ];
    for (const [catalog, paths] of cases) {
      for (const method of ['PATCH', 'PUT'] as const) {
        const res = await write(acme, method, 'strict', method === 'PUT' ? { ...soap, catalog } : { catalog });
        assert.equal(res.statusCode, 400, `${method} ${JSON.stringify(catalog)}: ${res.body}`);
        const error = body(res).error;
        assert.equal(error.code, 'validation_failed');
        assert.deepEqual(
          error.details.issues.map((issue: { path: string }) => issue.path),
          paths,
          JSON.stringify(catalog),
        );
      }
    }
    const after = await h.call(acme, { method: 'GET', url: '/api/v1/integrations/strict' });
    assert.equal(after.headers.etag, etag);
    assert.deepEqual(body(after).data.catalog, { ...defaults, mcp: true });
  });

  test('GraphQL documents are checked when written: syntax, one operation, unique names', async () => {
    const documents = [
      { name: 'top', document: 'query top { customers { id } }' },
      { name: 'broken', document: 'query { customers { id }' },
      { name: 'top', document: 'query again { a }' },
      { name: 'has space', document: 'subscription s { a }' },
    ];
    const res = await write(acme, 'PATCH', 'plain', { catalog: { documents } });
    assert.equal(res.statusCode, 400, res.body);
    const paths = body(res).error.details.issues.map((issue: { path: string }) => issue.path);
    for (const path of [
      'catalog.documents[1].document',
      'catalog.documents[2].name',
      'catalog.documents[3].name',
      'catalog.documents[3].document',
    ]) {
      assert.ok(paths.includes(path), `${path} in ${paths.join(', ')}`);
    }
    assert.ok(!paths.some((path: string) => path.startsWith('catalog.documents[0]')), paths.join(', '));
    const ok = await write(acme, 'PATCH', 'plain', { catalog: { documents: documents.slice(0, 1), root_fields: true } });
    assert.equal(ok.statusCode, 200, ok.body);
    assert.deepEqual(body(ok).data.catalog.documents, documents.slice(0, 1));
  });

  test('a PATCH of documents is checked against the upstream schema kept for the integration, when one is kept', async () => {
    const upstream = await startGraphqlServer();
    try {
      await write(acme, 'PUT', 'users', { connector: 'graphql-1.0.0', config: { base_url: upstream.url } });
      const wrong = { documents: [{ name: 'ages', document: 'query ages { usersList { id age } }' }] };
      // Nothing kept yet: the document parses, and is taken (nothing is read from the upstream for a write).
      let res = await write(acme, 'PATCH', 'users', { catalog: wrong });
      assert.equal(res.statusCode, 200, res.body);
      // A call reads and keeps the schema; the same document is now refused by it, and nothing changes.
      const called = await h.call(acme, {
        method: 'POST',
        url: '/api/v1/integrations/users/execute',
        payload: { operation: 'receive', query: '{ usersList { id } }' },
      });
      assert.equal(called.statusCode, 200, called.body);
      res = await write(acme, 'PATCH', 'users', { catalog: { documents: [{ ...wrong.documents[0], name: 'ages2' }] } });
      assert.equal(res.statusCode, 400, res.body);
      const issue = body(res).error.details.issues[0];
      assert.equal(issue.path, 'catalog.documents[0].document');
      assert.match(issue.message, /age/);
      res = await write(acme, 'PATCH', 'users', {
        catalog: { documents: [{ name: 'names', document: 'query names { usersList { id name } }' }] },
      });
      assert.equal(res.statusCode, 200, res.body);
    } finally {
      await upstream.close();
    }
  });

  test('not an object is refused by the body schema', async () => {
    const res = await write(acme, 'PATCH', 'plain', { catalog: [] });
    assert.equal(res.statusCode, 400);
    assert.equal(body(res).error.code, 'validation_failed');
  });

  test("another tenant's integration has no operations to show it", async () => {
    const res = await h.call(globex, { method: 'GET', url: '/api/v1/integrations/erp/operations' });
    assert.equal(res.statusCode, 404);
    assert.equal(body(res).error.code, 'not_found');
  });
});
