import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { buildSchema, introspectionFromSchema } from 'graphql';
import { SchemaCache, type UpstreamSchema } from '../../src/connectors/graphql/schema-cache.ts';
import { type Auth, body, type Harness, harness } from '../support/harness.ts';
import { type CountingGraphqlServer, startYogaServer } from '../support/yoga-server.ts';

/**
 * The bounds of schema-aware checking (docs/limits.md#upstreams): an introspection answer over 5 MiB or with type
 * references deeper than any introspection query follows is not used (calls go out, checked for syntax only, and
 * `test` says why); the schemas kept are bounded by bytes, however many integrations there are.
 */

const small = buildSchema('type Query { hello: String, items: [String] }');

/** An upstream that answers the introspection query with `introspection()` and any other document with data. */
async function fakeUpstream(introspection: () => string) {
  const seen = { requests: 0, introspections: 0 };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk) => chunks.push(chunk));
    req.on('end', () => {
      seen.requests++;
      const query = String(JSON.parse(Buffer.concat(chunks).toString('utf8')).query);
      res.setHeader('content-type', 'application/json');
      if (query.includes('__schema')) {
        seen.introspections++;
        res.end(introspection());
      } else res.end('{"data":{"hello":"world"}}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/graphql`,
    seen,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** The small schema's introspection with `items` typed `[[[…String…]]]`, `depth` lists deep. */
function deepIntrospection(depth: number): string {
  const answer = introspectionFromSchema(small) as unknown as { __schema: { types: Array<Record<string, unknown>> } };
  const query = answer.__schema.types.find((type) => type.name === 'Query') as { fields: Array<{ name: string; type: unknown }> };
  let type: unknown = { kind: 'SCALAR', name: 'String', ofType: null };
  for (let i = 0; i < depth; i++) type = { kind: 'LIST', name: null, ofType: type };
  const items = query.fields.find((field) => field.name === 'items');
  if (items) items.type = type;
  return JSON.stringify({ data: answer });
}

/** The small schema's introspection padded past 5 MiB with a description (valid, only too large). */
function hugeIntrospection(): string {
  const answer = introspectionFromSchema(small) as unknown as { __schema: { description?: string } };
  answer.__schema.description = 'x'.repeat(5 * 1024 * 1024 + 1);
  return JSON.stringify({ data: answer });
}

/** The small schema's introspection with an object type that has no fields, which the specification forbids. */
function fieldlessIntrospection(): string {
  const answer = introspectionFromSchema(small) as unknown as { __schema: { types: unknown[] } };
  answer.__schema.types.push({ kind: 'OBJECT', name: 'Empty', description: null, fields: [], interfaces: [] });
  return JSON.stringify({ data: answer });
}

describe('introspection answers that are not used', () => {
  let h: Harness;
  let auth: Auth;
  const closers: Array<() => Promise<void>> = [];

  before(async () => {
    h = await harness();
    await h.tenant('acme');
    auth = await h.auth('acme', ['integrations.*']);
  });
  after(async () => {
    await Promise.all(closers.map((close) => close()));
    await h.close();
  });

  const cases = [
    { name: 'over 5 MiB', answer: hugeIntrospection, reason: /larger than 5242880 bytes/ },
    { name: 'type references 20 lists deep', answer: () => deepIntrospection(20), reason: /deeper than 16 levels in Query/ },
    // graphql-js builds it, then its validate throws on every document checked against it (a 500 before).
    {
      name: 'an object type without fields',
      answer: fieldlessIntrospection,
      reason: /breaks the GraphQL specification: Type Empty must define one or more fields/,
    },
  ];
  for (const { name, answer, reason } of cases) {
    test(`${name}: test says why; calls go out checked for syntax only`, async () => {
      const text = answer();
      const upstream = await fakeUpstream(() => text);
      closers.push(upstream.close);
      const id = `bounded-${cases.findIndex((c) => c.name === name)}`;
      const put = await h.call(auth, {
        method: 'PUT',
        url: `/api/v1/integrations/${id}`,
        payload: { connector: 'graphql-1.0.0', config: { base_url: upstream.url } },
      });
      assert.equal(put.statusCode, 201);
      const execute = (payload: object) => h.call(auth, { method: 'POST', url: `/api/v1/integrations/${id}/execute`, payload });

      const tested = await execute({ operation: 'test' });
      assert.equal(tested.statusCode, 200, tested.body.slice(0, 500));
      const schema = body(tested).data.details.schema;
      assert.equal(schema.available, false);
      assert.match(schema.reason, reason);

      // test kept "no schema": calls do not introspect again, and a document the schema would refuse goes out.
      const answered = await execute({ operation: 'receive', query: '{ hello nope }' });
      assert.equal(answered.statusCode, 200, answered.body);
      // test's probe and its introspection, then the call.
      assert.deepEqual(upstream.seen, { requests: 3, introspections: 2 });
    });
  }

  test('a schema whose enum default does not fit its type (graphene 2 sends one) is still used', async () => {
    const schema = buildSchema('enum Tier { FREE PRO } input In { tier: Tier = FREE } type Query { hello(input: In): String }');
    const answer = introspectionFromSchema(schema) as unknown as { __schema: { types: Array<Record<string, unknown>> } };
    const input = answer.__schema.types.find((type) => type.name === 'In') as { inputFields: Array<{ defaultValue: string }> };
    input.inputFields[0].defaultValue = '"\\"FREE\\""';
    const upstream = await fakeUpstream(() => JSON.stringify({ data: answer }));
    closers.push(upstream.close);
    await h.call(auth, {
      method: 'PUT',
      url: '/api/v1/integrations/odd-default',
      payload: { connector: 'graphql-1.0.0', config: { base_url: upstream.url } },
    });
    const refused = await h.call(auth, {
      method: 'POST',
      url: '/api/v1/integrations/odd-default/execute',
      payload: { operation: 'receive', query: '{ hello(input: {tier: GOLD}) }' },
    });
    assert.equal(refused.statusCode, 400, refused.body);
    assert.equal(body(refused).error.code, 'graphql_validation_failed');
  });
});

describe('the schemas kept are bounded by bytes', () => {
  let h: Harness;
  let auth: Auth;
  let yoga: CountingGraphqlServer;

  before(async () => {
    // 1 MiB: room for about a dozen of the realistic schema (its introspection answer is ~25 KB, counted 3x).
    h = await harness({ IX_GRAPHQL_SCHEMA_CACHE_MB: '1' });
    await h.tenant('acme');
    auth = await h.auth('acme', ['integrations.*']);
    yoga = await startYogaServer();
  });
  after(async () => {
    await yoga.close();
    await h.close();
  });

  async function metric(name: string): Promise<number> {
    const text = (await h.app.inject({ method: 'GET', url: '/metrics' })).body;
    const line = text.split('\n').find((l) => l.startsWith(`${name}{connector="graphql-1.0.0"}`));
    return line === undefined ? 0 : Number(line.slice(line.lastIndexOf(' ') + 1));
  }

  test('150 integrations with schemas: the cache stays under its bound; an evicted one is read again', async () => {
    const ids = Array.from({ length: 150 }, (_, i) => `many-${i}`);
    let peakBytes = 0;
    for (const id of ids) {
      const put = await h.call(auth, {
        method: 'PUT',
        url: `/api/v1/integrations/${id}`,
        payload: { connector: 'graphql-1.0.0', config: { base_url: yoga.url } },
      });
      assert.equal(put.statusCode, 201);
      const res = await h.call(auth, {
        method: 'POST',
        url: `/api/v1/integrations/${id}/execute`,
        payload: { operation: 'receive', query: '{ serverTime }' },
      });
      assert.equal(res.statusCode, 200, res.body);
      peakBytes = Math.max(peakBytes, await metric('ix_connector_cache_bytes'));
    }
    assert.equal(yoga.introspections, 150);
    assert.ok(peakBytes > 0 && peakBytes <= 1024 * 1024, `at most 1 MiB kept (peak ${peakBytes})`);
    const entries = await metric('ix_connector_cache_entries');
    assert.ok(entries >= 2 && entries < 150, `some kept, most dropped (${entries})`);
    // The last one is kept; the first was dropped and is read again.
    await h.call(auth, {
      method: 'POST',
      url: '/api/v1/integrations/many-149/execute',
      payload: { operation: 'receive', query: '{ serverTime }' },
    });
    assert.equal(yoga.introspections, 150);
    await h.call(auth, {
      method: 'POST',
      url: '/api/v1/integrations/many-0/execute',
      payload: { operation: 'receive', query: '{ serverTime }' },
    });
    assert.equal(yoga.introspections, 151);
  });
});

describe('SchemaCache', () => {
  const schema = (bytes: number): UpstreamSchema<string> => ({ available: true, schema: 's', fetchedAt: '', bytes });
  const none = (): UpstreamSchema<string> => ({ available: false, reason: 'refused', fetchedAt: '', bytes: 100 });

  test('concurrent gets share one load; a current entry is answered by peek without a promise', async () => {
    const cache = new SchemaCache<string>({ maxBytes: 1000 });
    let loads = 0;
    const load = async () => {
      loads++;
      return schema(10);
    };
    await Promise.all([cache.get('a', 'v1', 60_000, load), cache.get('a', 'v1', 60_000, load)]);
    assert.equal(loads, 1);
    assert.equal(cache.peek('a', 'v1')?.available, true);
    assert.equal(cache.peek('a', 'v2'), undefined, 'another version is not the same schema');
  });

  test('the TTL; "no schema" is kept 60 s at most whatever the TTL', async () => {
    const cache = new SchemaCache<string>({ maxBytes: 1000 });
    await cache.get('a', 'v', 600_000, async () => schema(10), 0);
    await cache.get('b', 'v', 600_000, async () => none(), 0);
    assert.ok(cache.peek('a', 'v', 599_999));
    assert.equal(cache.peek('a', 'v', 600_000), undefined);
    assert.ok(cache.peek('b', 'v', 59_999));
    assert.equal(cache.peek('b', 'v', 60_000), undefined);
  });

  test('a failed load is not kept', async () => {
    const cache = new SchemaCache<string>({ maxBytes: 1000 });
    await assert.rejects(cache.get('a', 'v', 60_000, () => Promise.reject(new Error('unreachable'))));
    assert.equal(cache.size, 0);
    assert.equal((await cache.get('a', 'v', 60_000, async () => schema(1))).available, true);
  });

  test('bounded by bytes: the least recently used go first; one larger than the bound is not kept', async () => {
    const cache = new SchemaCache<string>({ maxBytes: 100 });
    for (const key of ['a', 'b', 'c']) await cache.get(key, 'v', 60_000, async () => schema(40));
    assert.equal(cache.bytes, 80);
    assert.deepEqual(
      ['a', 'b', 'c'].map((key) => cache.peek(key, 'v') !== undefined),
      [false, true, true],
    );
    cache.peek('b', 'v');
    await cache.get('d', 'v', 60_000, async () => schema(40));
    assert.deepEqual(
      ['b', 'c', 'd'].map((key) => cache.peek(key, 'v') !== undefined),
      [true, false, true],
    );
    const huge = await cache.get('e', 'v', 60_000, async () => schema(101));
    assert.equal(huge.available, true, 'used for its call');
    assert.equal(cache.peek('e', 'v'), undefined);
    assert.ok(cache.bytes <= 100);
  });

  test('a thousand keys of random sizes never hold more than the bound', async () => {
    const cache = new SchemaCache<string>({ maxBytes: 10_000 });
    for (let i = 0; i < 1000; i++) {
      await cache.get(`k${i}`, 'v', 60_000, async () => schema(1 + ((i * 7919) % 3000)));
      assert.ok(cache.bytes <= 10_000, `${cache.bytes} after ${i}`);
    }
    assert.ok(cache.size < 1000);
  });
});
