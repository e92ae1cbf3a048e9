import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type Auth, body, type Harness, harness } from '../support/harness.ts';

/**
 * Conditional writes on integrations (docs/api.md#conditional-requests): `If-None-Match: *` creates only, every answer
 * carries the integration's `ETag`, and `If-Match` refuses a write based on a version that is no longer current. A
 * refused write is `412 precondition_failed` and changes nothing: name, connector, config and stored secrets stay.
 */
describe('integrations: ETag, If-Match and If-None-Match', () => {
  let h: Harness;
  let auth: Auth;

  before(async () => {
    h = await harness();
    await h.tenant('acme');
    auth = await h.auth('acme', ['integrations.*']);
  });
  after(() => h.close());

  const url = (id: string) => `/api/v1/integrations/${encodeURIComponent(id)}`;
  const graphql = (name: string, token: string) => ({
    name,
    connector: 'graphql-1.0.0',
    config: { base_url: 'https://crm.example.com/api', token },
  });
  const call = (method: 'GET' | 'PUT' | 'PATCH' | 'DELETE', id: string, headers: Record<string, string> = {}, payload?: object) =>
    h.call(auth, { method, url: url(id), headers, ...(payload && { payload }) });
  /** The row as stored, secrets (ciphertexts) included: what a refused write must leave as it was. */
  const stored = (id: string) =>
    h.storage.db.selectFrom('integrations').selectAll().where('tenant_id', '=', 'acme').where('id', '=', id).executeTakeFirst();
  const refused = (res: Awaited<ReturnType<typeof call>>, header: string) => {
    assert.equal(res.statusCode, 412, res.body);
    const error = body(res).error;
    assert.equal(error.code, 'precondition_failed');
    assert.equal(error.details.header, header);
    return error;
  };

  test('If-None-Match: * creates once; over an existing integration it is 412 and name, connector and secrets stay', async () => {
    const created = await call('PUT', 'crm', { 'if-none-match': '*' }, graphql('CRM', 'first-token'));
    assert.equal(created.statusCode, 201, created.body);
    const etag = created.headers.etag as string;
    assert.match(etag, /^"[0-9]+\.[0-9a-z]+"$/);
    const before = await stored('crm');
    // What the console's "New integration" did to an existing id: a SOAP one of another name, its secret cleared.
    const again = await call(
      'PUT',
      'crm',
      { 'if-none-match': '*' },
      { name: 'Replaced', connector: 'soap-1.0.0', config: { wsdl_url: 'https://x.example.com/?wsdl' } },
    );
    const error = refused(again, 'If-None-Match');
    assert.equal(error.details.etag, etag);
    assert.deepEqual(await stored('crm'), before, 'nothing changed');
    const read = await call('GET', 'crm');
    assert.equal(read.headers.etag, etag);
    assert.equal(body(read).data.config.token_set, true);
  });

  test('every write gives a new ETag; If-Match with a stale one is 412 on PUT, PATCH and DELETE, with the current one it goes', async () => {
    const v1 = (await call('PUT', 'erp', {}, graphql('ERP', 't1'))).headers.etag as string;
    const patched = await call('PATCH', 'erp', { 'if-match': v1 }, { name: 'ERP 2' });
    assert.equal(patched.statusCode, 200, patched.body);
    const v2 = patched.headers.etag as string;
    assert.notEqual(v2, v1);
    assert.equal((await call('GET', 'erp')).headers.etag, v2);
    const before = await stored('erp');
    // Someone read v1, then another changed it: each of their writes is refused.
    refused(await call('PUT', 'erp', { 'if-match': v1 }, graphql('Mine', 't-mine')), 'If-Match');
    refused(await call('PATCH', 'erp', { 'if-match': v1 }, { config: { token: null } }), 'If-Match');
    refused(await call('DELETE', 'erp', { 'if-match': v1 }), 'If-Match');
    // A weak tag never matches If-Match (strong comparison), and a list matches if it holds the current one.
    refused(await call('PATCH', 'erp', { 'if-match': `W/${v2}` }, { name: 'weak' }), 'If-Match');
    assert.deepEqual(await stored('erp'), before, 'nothing changed');
    const replaced = await call('PUT', 'erp', { 'if-match': `${v1}, ${v2}` }, graphql('ERP 3', 't3'));
    assert.equal(replaced.statusCode, 200, replaced.body);
    const v3 = replaced.headers.etag as string;
    assert.equal((await call('DELETE', 'erp', { 'if-match': v3 })).statusCode, 200);
    assert.equal((await call('GET', 'erp')).statusCode, 404);
  });

  test('an integration deleted and created again has a new ETag: the old one matches nothing', async () => {
    const first = (await call('PUT', 'gone', {}, graphql('Gone', 't'))).headers.etag as string;
    assert.equal((await call('DELETE', 'gone')).statusCode, 200);
    const second = (await call('PUT', 'gone', {}, graphql('Gone', 't'))).headers.etag as string;
    assert.equal(body(await call('GET', 'gone')).data.name, 'Gone');
    assert.notEqual(second, first, 'both are version 1, of two objects');
    refused(await call('PATCH', 'gone', { 'if-match': first }, { name: 'x' }), 'If-Match');
  });

  test('If-Match on what does not exist: PUT is 412 and creates nothing; PATCH and DELETE are 404 as without it', async () => {
    refused(await call('PUT', 'absent', { 'if-match': '*' }, graphql('A', 't')), 'If-Match');
    refused(await call('PUT', 'absent', { 'if-match': '"1.abc"' }, graphql('A', 't')), 'If-Match');
    assert.equal(await stored('absent'), undefined);
    assert.equal((await call('PATCH', 'absent', { 'if-match': '"1.abc"' }, { name: 'x' })).statusCode, 404);
    assert.equal((await call('DELETE', 'absent', { 'if-match': '*' })).statusCode, 404);
    // If-Match: * on one that exists goes.
    await call('PUT', 'present', {}, graphql('P', 't'));
    assert.equal((await call('PATCH', 'present', { 'if-match': '*' }, { name: 'P2' })).statusCode, 200);
  });

  test('a malformed If-Match or If-None-Match is 400 validation_failed naming the header; nothing changes', async () => {
    const etag = (await call('PUT', 'typo', {}, graphql('Typo', 't'))).headers.etag as string;
    const before = await stored('typo');
    for (const [header, value] of [
      ['if-match', etag.slice(1, -1)],
      ['if-match', `${etag},`],
      ['if-none-match', 'anything'],
      ['if-match', Array.from({ length: 101 }, () => etag).join(', ')],
    ]) {
      const res = await call('PATCH', 'typo', { [header]: value }, { name: 'changed' });
      assert.equal(res.statusCode, 400, `${header}: ${value.slice(0, 40)} → ${res.body}`);
      const error = body(res).error;
      assert.equal(error.code, 'validation_failed');
      assert.equal(error.details.issues[0].path, header === 'if-match' ? 'If-Match' : 'If-None-Match');
    }
    assert.deepEqual(await stored('typo'), before);
  });

  test('twenty creates at once with If-None-Match: *: one 201, nineteen 412; twenty PATCHes on one ETag: one 200', async () => {
    const creates = await Promise.all(
      Array.from({ length: 20 }, (_, i) => call('PUT', 'race', { 'if-none-match': '*' }, graphql(`Race ${i}`, `t${i}`))),
    );
    const statuses = creates.map((res) => res.statusCode).sort();
    assert.deepEqual(statuses, [201, ...Array(19).fill(412)]);
    const winner = creates.find((res) => res.statusCode === 201);
    assert.equal(body(await call('GET', 'race')).data.name, body(winner as (typeof creates)[number]).data.name);
    const etag = (winner as (typeof creates)[number]).headers.etag as string;
    const patches = await Promise.all(
      Array.from({ length: 20 }, (_, i) => call('PATCH', 'race', { 'if-match': etag }, { name: `Patch ${i}` })),
    );
    assert.deepEqual(patches.map((res) => res.statusCode).sort(), [200, ...Array(19).fill(412)]);
  });

  test('the OpenAPI document names the headers and the 412', async () => {
    const doc = JSON.parse((await h.call(null, { method: 'GET', url: '/api/v1/openapi.json' })).body);
    const path = doc.paths['/api/v1/integrations/{id}'];
    const headerNames = (op: { parameters: Array<{ in: string; name: string }> }) =>
      op.parameters.filter((p) => p.in === 'header').map((p) => p.name.toLowerCase());
    assert.deepEqual(headerNames(path.put).sort(), ['if-match', 'if-none-match']);
    assert.deepEqual(headerNames(path.patch), ['if-match']);
    assert.deepEqual(headerNames(path.delete), ['if-match']);
    for (const op of [path.put, path.patch, path.delete]) assert.ok(op.responses['412'], 'documents 412');
    assert.ok(path.get.responses['200'].headers.ETag);
  });
});
