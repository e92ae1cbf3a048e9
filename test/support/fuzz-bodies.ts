import fc from 'fast-check';
import { BuiltString, type Json, jsonString, junkValue, oddNumber, oddString } from './fuzz-json.ts';

/** Plausible request bodies per route, for property tests: mostly valid values, sometimes odd ones. */

function often<T>(usual: fc.Arbitrary<T>, odd: fc.Arbitrary<T>): fc.Arbitrary<T> {
  return fc.oneof({ arbitrary: usual, weight: 4 }, { arbitrary: odd, weight: 1 });
}

const dayMs = 86_400_000;
const dates = often(
  fc.constantFrom<Json>(
    new Date(Date.now() + dayMs).toISOString(),
    new Date(Date.now() + 400 * dayMs).toISOString(),
    '9999-12-31T23:59:59Z',
    null,
  ),
  fc.constantFrom<Json>(
    new Date(Date.now() - dayMs).toISOString(),
    '2030-02-30T00:00:00Z',
    '2030-01-01',
    '2030-01-01T00:00:00',
    '2030-01-01T00:00:00+14:00',
    '2030-06-30T23:59:60Z',
    '2030-01-01T00:00:00.123456789Z',
    '+275760-09-13T00:00:00.000Z',
    'tomorrow',
    '',
  ),
);
const scopes = often(
  fc.constantFrom(
    '*',
    'entities.read',
    'entities.*',
    'integrations.execute',
    'integrations.*',
    'api_keys.read',
    'api_keys.write',
    'executions.read',
    'processflow.run',
  ),
  fc.oneof(fc.constantFrom('bogus.read', 'entities', 'ENTITIES.READ', '', '.', 'entities.', '*.*', 'a'.repeat(65)), oddString),
);
const names = often(fc.string({ minLength: 1, maxLength: 20 }), jsonString);

export const apiKeyBody = fc.record(
  {
    name: names,
    scopes: fc.array(scopes, { maxLength: 4 }),
    expires_at: dates,
    rate_limit_per_minute: often(fc.integer({ min: 1, max: 1_000_000 }), oddNumber),
  },
  { requiredKeys: ['scopes'] },
);

export const rotateBody = fc.oneof(
  fc.record({ overlap_seconds: often(fc.integer({ min: 0, max: 604_800 }), oddNumber) }, { requiredKeys: [] }),
  fc.constant(null),
);

const statuses = often(fc.constantFrom('active', 'inactive', 'archived'), oddString);

export function entityBody(ids: readonly string[]) {
  const entityId = often(
    fc.oneof(fc.constantFrom(...ids), fc.string({ unit: 'grapheme', minLength: 1, maxLength: 20 })),
    oddString,
  );
  return fc.record({ entity_id: entityId, name: names, status: statuses }, { requiredKeys: ['name'] });
}
export const entityPatch = fc.record({ name: names, status: statuses }, { requiredKeys: [] });

/** Upstream URLs for configs: `usual` ones answer; `rare` ones are refused, unreachable or invalid. */
export interface UrlPool {
  usual: readonly string[];
  rare: readonly string[];
}

function connectorConfigs(urls: UrlPool) {
  // Unreachable upstreams are kept rare: a receive from one is retried after 200-400 ms.
  const url = fc.oneof(
    { arbitrary: fc.constantFrom(...urls.usual), weight: 8 },
    { arbitrary: fc.constantFrom(...urls.rare), weight: 2 },
    { arbitrary: oddString, weight: 1 },
  );
  const secret = often(fc.constantFrom<Json>('s3cret-token', '', null), fc.oneof(fc.constant<Json>('a\r\nb'), jsonString));
  const timeout = often(fc.integer({ min: 1, max: 300 }), fc.oneof(fc.constantFrom<Json>(0, 301, '30', 1.5), oddNumber));
  const graphql = fc.record({ base_url: url, token: secret, timeout_seconds: timeout }, { requiredKeys: [] });
  const soap = fc.record(
    {
      endpoint_url: url,
      auth_header: often(fc.constantFrom('X-Auth', 'Authorization'), fc.constantFrom('bad header', '', 'X\r\nY', 'é')),
      auth_value: secret,
      timeout_seconds: timeout,
      namespace: often(fc.constantFrom('urn:x', 'http://example.com/ns'), fc.constantFrom('', 'not a uri', '"><x')),
      soap_version: often(fc.constantFrom<Json>('1.1', '1.2'), fc.constantFrom<Json>('1.3', 1.1, null)),
      service_url: url,
    },
    { requiredKeys: [] },
  );
  return { graphql, soap };
}

/** PUT bodies: mostly a connector with its own config, sometimes a mix or an unknown connector. */
export function integrationPut(urls: UrlPool) {
  const { graphql, soap } = connectorConfigs(urls);
  const body = (connector: fc.Arbitrary<string>, config: fc.Arbitrary<Json>) =>
    fc.record({ name: names, connector, config }, { requiredKeys: ['connector'] });
  return fc.oneof(
    { arbitrary: body(fc.constant('graphql-1.0.0'), graphql), weight: 3 },
    { arbitrary: body(fc.constant('soap-1.0.0'), soap), weight: 3 },
    { arbitrary: body(often(fc.constantFrom('graphql-1.0.0', 'soap-1.0.0'), oddString), fc.oneof(graphql, soap)), weight: 1 },
  );
}

export function integrationPatch(urls: UrlPool) {
  const { graphql, soap } = connectorConfigs(urls);
  return fc.record({ name: names, config: fc.oneof(graphql, soap) }, { requiredKeys: [] });
}

/** `{a{a{a…}}}`: a document nested deeper than any parser's stack should be trusted with. */
const deepDocument = fc
  .constantFrom(100, 1000, 5000, 50_000)
  .map((n) => new BuiltString(`deepDocument(${n})`, () => `query ${'{a'.repeat(n)}${'}'.repeat(n)}`));
const queries = often(
  fc.constantFrom(
    'query { items { edges { node { id } } totalCount } }',
    'query Q1 { a } query Q2 { b }',
    'query ($after: String) { items(after: $after) { edges { node { id } } pageInfo { hasNextPage endCursor } } }',
    'fragment F on Query { a } query { ...F }',
    '{ a }',
  ),
  fc.oneof(
    fc.constantFrom('mutation { create(input: {name: "x"}) { id } }', 'subscription { s }', '{', '', 'query { a(x: "\\u0000") }'),
    deepDocument,
    jsonString,
  ),
);
const mutationDocuments = often(
  fc.constantFrom(
    'mutation { create(input: {name: "x"}) { id } }',
    'mutation M { a } mutation N { b }',
    'mutation ($v: String) { set(v: $v) { ok } }',
  ),
  fc.oneof(fc.constant('query { a }'), deepDocument, jsonString),
);
const variables = often(fc.constant<Json>({ after: 'c1', v: 'x' }), junkValue(['after', 'v']));
const operationName = often(fc.constantFrom('Q1', 'Q2', 'M', 'N'), fc.oneof(fc.constant('Nope'), oddString));
const recordsPath = often(
  fc.constantFrom('items', 'items.edges'),
  fc.oneof(fc.constantFrom('a.b.c', '', '__proto__', 'constructor.prototype'), oddString),
);
const paginate = often(
  fc.oneof(
    fc.constant<Json>(true),
    fc.constant<Json>(false),
    fc.record({ max_pages: fc.integer({ min: 1, max: 100 }), cursor_variable: fc.constant('after') }, { requiredKeys: [] }),
  ),
  fc.record({ max_pages: fc.oneof(fc.constantFrom(0, 101), oddNumber), cursor_variable: fc.constant('') }, { requiredKeys: [] }),
);
const gqlSend = fc.record(
  { mutation: mutationDocuments, variables, operation_name: operationName },
  { requiredKeys: ['mutation'] },
);
const gqlReceive = fc.record(
  { query: queries, variables, operation_name: operationName, records_path: recordsPath, paginate },
  { requiredKeys: ['query'] },
);
const soapCall = fc.record(
  {
    method: often(
      fc.constantFrom('Echo', 'GetItems', 'Add'),
      fc.oneof(fc.constantFrom('', '1bad', 'a:b', '<x/>', 'x y'), oddString),
    ),
    params: often(
      fc.constantFrom<Json>({ a: '1', b: { c: ['x', 'y'] } }, { item: { $attributes: { id: '1' }, $value: 'v' } }),
      fc.oneof(fc.constant<Json>({ item: { $attributes: { 'bad name': 'x' } } }), junkValue(['$attributes', '$value', 'a'])),
    ),
    soap_action: often(fc.constantFrom('', 'urn:x/Echo'), fc.constantFrom('"q"', 'a\r\nb')),
    namespace: often(fc.constant('urn:x'), fc.constantFrom('', 'not a uri')),
    soap_headers: often(fc.constant<Json>({ Auth: { token: 't' } }), junkValue()),
  },
  { requiredKeys: ['method'] },
);
/** A WSDL-mode call: chooses an overload, a service and a port. */
const wsdlCall = fc
  .tuple(
    soapCall,
    fc.record(
      { input: fc.constantFrom('EchoRequest', ''), service: fc.constantFrom('S', ''), port: fc.constantFrom('P', '') },
      { requiredKeys: [] },
    ),
  )
  .map(([call, choice]): Json => ({ ...(call as object), ...choice }));
const soapFields = often(soapCall, wsdlCall);

const primitive = often(fc.constantFrom('send', 'receive'), fc.constantFrom('sync', 'x'));
const operations = often(fc.constantFrom('send', 'receive', 'sync', 'batch', 'test'), oddString);

/** Execute bodies of one connector's fields: `send` takes `sendFields`, `receive` takes `receiveFields`. */
function executeBodies(sendFields: fc.Arbitrary<Json>, receiveFields: fc.Arbitrary<Json>): fc.Arbitrary<Json> {
  const withOperation = (operation: string, fields: Json): Json => ({ operation, ...(fields as object) });
  const part = often(fc.oneof(sendFields, receiveFields), fc.constantFrom<Json>({}, null));
  const entry = often(
    fc.oneof(
      fc.record({ operation: primitive, data: fc.oneof(sendFields, receiveFields) }, { requiredKeys: [] }),
      fc.tuple(primitive, receiveFields).map(([type, fields]): Json => ({ type, ...(fields as object) })),
    ),
    junkValue(),
  );
  const manyEntries = fc
    .constantFrom(100, 101)
    .map((n) => Array.from({ length: n }, (): Json => ({ operation: 'receive', data: { query: '{ a }', method: 'Echo' } })));
  const entries = often(fc.array(entry, { minLength: 1, maxLength: 4 }), fc.oneof(fc.constantFrom<Json>([], 'x'), manyEntries));
  return fc.oneof(
    { arbitrary: fc.constant<Json>({ operation: 'test' }), weight: 2 },
    { arbitrary: sendFields.map((fields) => withOperation('send', fields)), weight: 3 },
    { arbitrary: receiveFields.map((fields) => withOperation('receive', fields)), weight: 3 },
    {
      arbitrary: fc.record({ operation: fc.constant('sync'), outbound: part, inbound: part }, { requiredKeys: ['operation'] }),
      weight: 2,
    },
    {
      arbitrary: fc.record(
        { operation: fc.constant('batch'), operations: entries, stop_on_error: often(fc.boolean(), junkValue()) },
        { requiredKeys: ['operation', 'operations'] },
      ),
      weight: 2,
    },
    {
      arbitrary: fc
        .tuple(operations, fc.oneof(sendFields, receiveFields))
        .map(([operation, fields]) => withOperation(operation, fields)),
      weight: 1,
    },
  );
}

export const graphqlExecuteBody = executeBodies(gqlSend, gqlReceive);
export const soapExecuteBody = executeBodies(soapFields, soapFields);
export const anyExecuteBody = executeBodies(fc.oneof(gqlSend, soapFields), fc.oneof(gqlReceive, soapFields));

export const executePaths = [
  'operation',
  'query',
  'mutation',
  'variables',
  'operation_name',
  'records_path',
  'paginate',
  'paginate.max_pages',
  'outbound',
  'outbound.mutation',
  'inbound',
  'inbound.query',
  'operations',
  'stop_on_error',
  'method',
  'params',
  'soap_action',
  'namespace',
  'soap_headers',
];
