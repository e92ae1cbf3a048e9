import fc from 'fast-check';
import { type Json, junkValue, mutate, mutations, oddString, stressValue } from './fuzz-json.ts';

/** Who a request claims to be; the test resolves each to headers. */
export const authVariants = [
  'star',
  'narrow',
  'legacy',
  'sandbox',
  'revoked',
  'expired',
  'other-tenants-key',
  'key-with-other-tenant',
  'odd-tenant',
  'no-key',
  'no-tenant',
  'bad-checksum',
  'malformed-key',
  'key-in-bearer',
  'junk-bearer',
] as const;
export type AuthVariant = (typeof authVariants)[number];

export type FuzzBody =
  | { kind: 'none' }
  | { kind: 'json'; value: Json; contentType: string | null }
  | { kind: 'raw'; text: string; contentType: string | null }
  | { kind: 'bytes'; hex: string; contentType: string | null };

/** One generated request; `path` and `query` are already percent-encoded (or deliberately not). */
export interface FuzzRequest {
  route: string;
  method: string;
  path: string;
  query: string;
  auth: AuthVariant;
  /** Header value for the odd-tenant and malformed variants. */
  authJunk: string;
  headers: Record<string, string>;
  body: FuzzBody;
}

/** What one route's requests look like. */
export interface RouteSpec {
  route: string;
  method: string;
  path: fc.Arbitrary<string>;
  /** Query parameter names the route knows. */
  query?: readonly string[];
  /** A plausible body and the dotted paths its mutations aim at. */
  body?: { base: fc.Arbitrary<Json>; paths: readonly string[] };
}

/** A header value as HTTP can carry it: visible ASCII, space, tab and Latin-1 (obs-text). */
const headerChar = fc
  .oneof(fc.integer({ min: 0x20, max: 0x7e }), fc.integer({ min: 0x80, max: 0xff }), fc.constant(0x09))
  .map((c) => String.fromCharCode(c));
export const headerValue = fc.oneof(
  { arbitrary: fc.string({ unit: headerChar, minLength: 1, maxLength: 20 }), weight: 4 },
  { arbitrary: fc.constantFrom(1, 128, 129, 255, 256, 2000).map((n) => 'a'.repeat(n)), weight: 1 },
);

const requestIds = fc.oneof(
  fc.constantFrom('wf-1.abc', 'a:b_c-d.e', 'x'.repeat(128), 'x'.repeat(129), ' padded ', 'two words', 'é', '', '<script>'),
  headerValue,
);
const idempotencyKeys = fc.oneof(
  { arbitrary: fc.uuid(), weight: 4 },
  { arbitrary: fc.constantFrom('k1', 'k2', 'k3'), weight: 2 },
  { arbitrary: fc.constantFrom('', ' ', 'a'.repeat(255), 'a'.repeat(256), 'b'.repeat(4000)), weight: 1 },
  { arbitrary: headerValue, weight: 1 },
);
const contentTypes = fc.oneof(
  { arbitrary: fc.constantFrom('application/json', 'application/json; charset=utf-8'), weight: 30 },
  {
    arbitrary: fc.constantFrom(
      'APPLICATION/JSON',
      'application/json; charset=latin1',
      'application/json;charset=UTF-8;foo=bar',
      'application/json, text/plain',
      'text/plain',
      'text/json',
      'application/x-www-form-urlencoded',
      'multipart/form-data; boundary=x',
      'application/jsonx',
      'application/vnd.api+json',
      'application/merge-patch+json',
      '*/*',
      ';',
      '',
    ),
    weight: 2,
  },
  { arbitrary: headerValue, weight: 1 },
  { arbitrary: fc.constant(null), weight: 1 },
);

const extraHeaders = fc.record(
  {
    'x-request-id': requestIds,
    'idempotency-key': idempotencyKeys,
    accept: fc.constantFrom('application/json', 'text/html', '*/*', 'application/xml', ''),
    'content-encoding': fc.constantFrom('gzip', 'br', 'identity', 'x'),
    'x-forwarded-for': fc.constantFrom('1.2.3.4', 'junk', '::1, 10.0.0.1', ''),
  },
  { requiredKeys: [] },
);

const rawBodies = fc.oneof(
  fc.constantFrom(
    '',
    ' ',
    '{',
    '{"name": ',
    'nul',
    'NaN',
    '[1,]',
    '{"a":1,}',
    "{'a':1}",
    '\u0000',
    '\ufeff{}',
    ' {} ',
    '{}garbage',
    '{}{}',
    'name=x',
    '"str"',
    '123',
    'true',
    'null',
    '[]',
    '{"a":"\\ud800"}',
    '{"a":"\\u0000"}',
    '{"a\\u0000":1}',
    '{"a":"\\x41"}',
    '{"__proto__":{"x":1}}',
    '{"constructor":{"prototype":{"x":1}}}',
    '{"a":1e309}',
    '{"a":-0}',
    '{"a":01}',
  ),
  fc.string({ unit: 'binary', maxLength: 30 }),
);

const hex = (text: string) => Buffer.from(text, 'latin1').toString('hex');
/** Bytes that are not UTF-8 (bad sequences inside JSON strings, UTF-16, a BOM, gzip magic), as hex. */
const rawBytes = fc.constantFrom(
  'ff',
  'fffe7b007d00',
  'efbbbf7b7d',
  '1f8b0800000000000003',
  hex('{"name":"a\xc0\xafb"}'),
  hex('{"name":"a\xed\xa0\x80b"}'),
  hex('{"name":"a\xf4\x90\x80\x80b"}'),
  hex('{"name":"a\x80b"}'),
  hex('{"name":"a\xe2\x82"}'),
  hex('{"operation":"test","x":"\xff"}'),
);

/** Path segments that break decoders and routers: NUL, encoded slash, bad UTF-8, over-long, dots. */
const junkSegments = fc.oneof(
  fc.constantFrom(
    '%00',
    'a%00b',
    '%2F',
    'a%2Fb',
    '%2f..%2f',
    '%',
    '%zz',
    '%E0%A4%A',
    '%ED%A0%80',
    '%FF',
    '%C0%AF',
    '%F4%90%80%80',
    '%EF%BF%BF',
    '%2e%2e',
    '..',
    '.',
    '%20',
    '%09',
    '%0A',
    '%7F',
    '%F0%9F%98%80',
    '%25',
    '%u0041',
    'key_',
    'exe_',
    ';x=1',
    '*',
    '~',
    '%5B%5D',
  ),
  fc.constantFrom(127, 128, 129, 2047, 2048, 2049, 3000).map((n) => 'a'.repeat(n)),
  fc.constantFrom(1000).map((n) => '%41'.repeat(n)),
  fc.string({ unit: 'grapheme', minLength: 1, maxLength: 10 }).map(encodeURIComponent),
  fc.string({ unit: 'binary-ascii', minLength: 1, maxLength: 6 }).map(encodeURIComponent),
);

/** One of `pool`'s ids as it is when the value is generated: the pool may grow while a property runs. */
export function livePool(pool: readonly string[]): fc.Arbitrary<string> {
  return fc.nat({ max: 1_000_000 }).map((i) => pool[i % pool.length]);
}

/** A path segment: mostly an id that exists (encoded), else junk. */
export function idSegment(known: readonly string[] | fc.Arbitrary<string>): fc.Arbitrary<string> {
  const ids = Array.isArray(known) ? fc.constantFrom(...known) : (known as fc.Arbitrary<string>);
  return fc.oneof({ arbitrary: ids.map(encodeURIComponent), weight: 4 }, { arbitrary: junkSegments, weight: 1 });
}

const cursorOf = (text: string) => Buffer.from(text, 'utf8').toString('base64url');
const queryValues = fc.oneof(
  {
    arbitrary: fc.constantFrom(
      '',
      '0',
      '1',
      '20',
      '100',
      '101',
      '366',
      '367',
      '-1',
      '1.5',
      '1e2',
      '0x10',
      '%2010',
      '10%20',
      'NaN',
      'Infinity',
      '99999999999999999999',
      'abc',
      '%00',
      'a%00',
      '%FF',
      '%',
      '%ED%A0%80',
      '+',
      'active',
      'inactive',
      'archived',
      'succeeded',
      'failed',
      'e1',
      'gql-ok',
      'true',
    ),
    weight: 4,
  },
  {
    arbitrary: fc
      .oneof(
        fc.constantFrom('e1', 'gql-ok', 'w1', '\u0000', 'a\u0000b', '😀', '\ud800', '\u0001', 'x'.repeat(400), ''),
        oddString,
      )
      .map(cursorOf),
    weight: 2,
  },
  { arbitrary: fc.string({ unit: 'grapheme', maxLength: 8 }).map(encodeURIComponent), weight: 1 },
);

/** A query string: the route's parameters and others, repeated, odd, or bare names. */
export function queryString(names: readonly string[]): fc.Arbitrary<string> {
  const name = fc.oneof(
    { arbitrary: fc.constantFrom(...names, 'limit', 'cursor'), weight: 6 },
    { arbitrary: fc.constantFrom('foo', '__proto__', 'constructor', 'limit[]', 'a[b]', '', '%00', 'LIMIT'), weight: 1 },
  );
  const pair = fc.tuple(name, fc.option(queryValues, { freq: 8 })).map(([n, v]) => (v === null ? n : `${n}=${v}`));
  return fc.oneof(
    { arbitrary: fc.constant(''), weight: 2 },
    { arbitrary: fc.array(pair, { minLength: 1, maxLength: 4 }).map((p) => p.join('&')), weight: 3 },
  );
}

function bodyFor(spec: RouteSpec): fc.Arbitrary<FuzzBody> {
  const junk = fc.oneof({ arbitrary: junkValue(), weight: 5 }, { arbitrary: stressValue, weight: 1 });
  const json = spec.body
    ? fc.tuple(spec.body.base, mutations(spec.body.paths)).map(([base, changes]) => mutate(base, changes))
    : junk;
  return fc.oneof(
    {
      arbitrary: fc.record({ kind: fc.constant('json' as const), value: json, contentType: contentTypes }),
      weight: spec.body ? 12 : 1,
    },
    { arbitrary: fc.record({ kind: fc.constant('raw' as const), text: rawBodies, contentType: contentTypes }), weight: 1 },
    { arbitrary: fc.record({ kind: fc.constant('bytes' as const), hex: rawBytes, contentType: contentTypes }), weight: 1 },
    { arbitrary: fc.constant({ kind: 'none' as const }), weight: spec.body ? 1 : 6 },
  );
}

/**
 * Requests for one route. A third are well-formed (the all-scopes key, JSON, the plausible body unmutated), so that
 * calls get past validation and build up state; the rest vary everything: method, key, headers, body, encoding.
 */
export function requestsFor(spec: RouteSpec): fc.Arbitrary<FuzzRequest> {
  const common = {
    route: fc.constant(spec.route),
    path: spec.path,
    query: queryString(spec.query ?? []),
    authJunk: fc.constant(''),
  };
  const wellFormed = fc.record({
    ...common,
    method: fc.constant(spec.method),
    auth: fc.constant('star' as const),
    headers: fc.record({ 'x-request-id': requestIds, 'idempotency-key': fc.uuid() }, { requiredKeys: [] }),
    body: spec.body
      ? spec.body.base.map((value): FuzzBody => ({ kind: 'json', value, contentType: 'application/json' }))
      : fc.constant<FuzzBody>({ kind: 'none' }),
  });
  const varied = fc.record({
    ...common,
    method: fc.oneof(
      { arbitrary: fc.constant(spec.method), weight: 19 },
      // Not DELETE: another route's path may name a fixture the other properties need (the calling key itself).
      { arbitrary: fc.constantFrom('GET', 'POST', 'PUT', 'PATCH', 'OPTIONS', 'HEAD'), weight: 1 },
    ),
    auth: fc.oneof(
      { arbitrary: fc.constant('star' as const), weight: authVariants.length * 2 },
      { arbitrary: fc.constantFrom(...authVariants), weight: authVariants.length },
    ),
    authJunk: headerValue,
    headers: extraHeaders,
    body: bodyFor(spec),
  });
  return fc.oneof({ arbitrary: wellFormed, weight: 1 }, { arbitrary: varied, weight: 2 }).map(withSummary);
}

/** Long runs of one character (a 3000-character id) shown as `a×3000`, so that a counterexample stays readable. */
export function abbreviate(text: string): string {
  return text.replace(/(.)\1{19,}/gsu, (run, unit: string) => `${unit}×${[...run].length}`);
}

/** The request, printed by fast-check as one readable line rather than as its full value. */
function withSummary(request: FuzzRequest): FuzzRequest {
  Object.defineProperty(request, fc.toStringMethod, {
    enumerable: false,
    value: () =>
      abbreviate(
        `${request.method} ${request.path}${request.query ? `?${request.query}` : ''} auth=${request.auth}` +
          ` headers=${JSON.stringify(request.headers)} body=${fc.stringify(request.body)}`,
      ),
  });
  return request;
}
