import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type Auth, body, type Harness, harness, twoTenants } from '../support/harness.ts';

describe('entities', () => {
  let h: Harness;
  let acme: Auth;
  let other: Auth;

  before(async () => {
    h = await harness();
    ({ acme, globex: other } = await twoTenants(h, ['entities.*']));
  });
  after(() => h.close());

  test('create, get by ?id=, patch, delete', async () => {
    const created = await h.call(acme, { method: 'POST', url: '/api/v1/entities', payload: { entity_id: 'e1', name: 'One' } });
    assert.equal(created.statusCode, 201);
    assert.deepEqual(body(created), { success: true, data: { entity_id: 'e1', name: 'One', status: 'active' } });

    const got = await h.call(acme, { method: 'GET', url: '/api/v1/entities?id=e1' });
    assert.deepEqual(body(got), { success: true, data: { entity_id: 'e1', name: 'One', status: 'active' } });

    const patched = await h.call(acme, { method: 'PATCH', url: '/api/v1/entities/e1', payload: { status: 'archived' } });
    assert.deepEqual(body(patched).data, { entity_id: 'e1', name: 'One', status: 'archived' });

    const deleted = await h.call(acme, { method: 'DELETE', url: '/api/v1/entities/e1' });
    assert.deepEqual(body(deleted), { success: true, data: { entity_id: 'e1', deleted: true } });
    assert.equal((await h.call(acme, { method: 'GET', url: '/api/v1/entities?id=e1' })).statusCode, 404);
  });

  test('another tenant never sees or changes an entity', async () => {
    await h.call(acme, { method: 'POST', url: '/api/v1/entities', payload: { entity_id: 'shared-id', name: 'Acme' } });
    assert.equal((await h.call(other, { method: 'GET', url: '/api/v1/entities?id=shared-id' })).statusCode, 404);
    assert.equal(
      (await h.call(other, { method: 'PATCH', url: '/api/v1/entities/shared-id', payload: { name: 'x' } })).statusCode,
      404,
    );
    assert.equal((await h.call(other, { method: 'DELETE', url: '/api/v1/entities/shared-id' })).statusCode, 404);
    // The same id may exist in both tenants.
    const own = await h.call(other, {
      method: 'POST',
      url: '/api/v1/entities',
      payload: { entity_id: 'shared-id', name: 'Globex' },
    });
    assert.equal(own.statusCode, 201);
    assert.equal(body(await h.call(acme, { method: 'GET', url: '/api/v1/entities?id=shared-id' })).data.name, 'Acme');
  });

  test('list pages with a cursor and filters by status', async () => {
    for (const id of ['p1', 'p2', 'p3', 'p4', 'p5']) {
      await h.call(other, {
        method: 'POST',
        url: '/api/v1/entities',
        payload: { entity_id: id, name: id, status: id === 'p3' ? 'inactive' : 'active' },
      });
    }
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const url: string = `/api/v1/entities?limit=2${cursor ? `&cursor=${cursor}` : ''}`;
      const page = body(await h.call(other, { method: 'GET', url }));
      assert.ok(page.data.length <= 2);
      seen.push(...page.data.map((e: { entity_id: string }) => e.entity_id));
      cursor = page.pagination.next_cursor;
    } while (cursor);
    assert.deepEqual(seen, ['p1', 'p2', 'p3', 'p4', 'p5', 'shared-id']);
    const inactive = body(await h.call(other, { method: 'GET', url: '/api/v1/entities?status=inactive' }));
    assert.deepEqual(inactive.data, [{ entity_id: 'p3', name: 'p3', status: 'inactive' }]);
  });

  test('a generated id when none is given; a taken id is 409', async () => {
    const created = body(await h.call(acme, { method: 'POST', url: '/api/v1/entities', payload: { name: 'Auto' } }));
    assert.match(created.data.entity_id, /^ent_[0-9a-z]+$/);
    const again = await h.call(acme, {
      method: 'POST',
      url: '/api/v1/entities',
      payload: { entity_id: created.data.entity_id, name: 'Dup' },
    });
    assert.equal(again.statusCode, 409);
    assert.equal(body(again).error.code, 'conflict');
  });

  test('bad input lists every problem, strictly typed', async () => {
    const res = await h.call(acme, {
      method: 'POST',
      url: '/api/v1/entities',
      payload: { entity_id: 5, status: 'gone', extra: true },
    });
    assert.equal(res.statusCode, 400);
    const error = body(res).error;
    assert.equal(error.code, 'validation_failed');
    const paths = error.details.issues.map((i: { path: string }) => i.path).sort();
    assert.deepEqual(paths, ['entity_id', 'extra', 'name', 'status']);
    const bad = await h.call(acme, { method: 'GET', url: '/api/v1/entities?limit=500' });
    assert.equal(body(bad).error.details.issues[0].path, 'limit');
    const badCursor = await h.call(acme, { method: 'GET', url: '/api/v1/entities?cursor=!!' });
    assert.equal(body(badCursor).error.code, 'validation_failed');
    const emptyPatch = await h.call(acme, { method: 'PATCH', url: '/api/v1/entities/x', payload: {} });
    assert.equal(body(emptyPatch).error.code, 'validation_failed');
  });

  test('ids with slashes, spaces and non-ASCII round-trip as one path segment', async () => {
    const id = 'a/b c·ü';
    await h.call(acme, { method: 'POST', url: '/api/v1/entities', payload: { entity_id: id, name: 'odd' } });
    const got = await h.call(acme, { method: 'GET', url: `/api/v1/entities/${encodeURIComponent(id)}` });
    assert.equal(body(got).data.entity_id, id);
    const query = await h.call(acme, { method: 'GET', url: `/api/v1/entities?id=${encodeURIComponent(id)}` });
    assert.equal(body(query).data.entity_id, id);
  });
});
