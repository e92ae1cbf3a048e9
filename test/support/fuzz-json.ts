import fc from 'fast-check';

/**
 * JSON bodies for property tests, as compact descriptions that are serialized only when sent: a counterexample
 * prints as `repeated(200000, 0)` rather than as a megabyte of text, and holds what JSON.stringify cannot write
 * (`1e309`, `-0`, duplicate keys, a `__proto__` key).
 */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json } | JsonPiece;

/** Text written as is: a number JavaScript cannot hold, or no JSON at all. */
export class RawJson {
  readonly text: string;
  constructor(text: string) {
    this.text = text;
  }
  [fc.toStringMethod](): string {
    return `raw(${JSON.stringify(this.text)})`;
  }
}

/** An object written from its entries: duplicate keys and `__proto__` keys stay as given. */
export class JsonEntries {
  readonly entries: ReadonlyArray<readonly [string, Json]>;
  constructor(entries: ReadonlyArray<readonly [string, Json]>) {
    this.entries = entries;
  }
  [fc.toStringMethod](): string {
    return `entries(${fc.stringify(this.entries)})`;
  }
}

/** `inner` wrapped in `depth` arrays or single-key objects. */
export class Nested {
  readonly depth: number;
  readonly kind: 'array' | 'object';
  readonly inner: Json;
  constructor(depth: number, kind: 'array' | 'object', inner: Json) {
    this.depth = depth;
    this.kind = kind;
    this.inner = inner;
  }
  [fc.toStringMethod](): string {
    return `nested(${this.depth}, ${this.kind}, ${fc.stringify(this.inner)})`;
  }
}

/** An array of `count` copies of `item`. */
export class Repeated {
  readonly count: number;
  readonly item: Json;
  constructor(count: number, item: Json) {
    this.count = count;
    this.item = item;
  }
  [fc.toStringMethod](): string {
    return `repeated(${this.count}, ${fc.stringify(this.item)})`;
  }
}

/** A string of `length` copies of `unit`. */
export class LongString {
  readonly length: number;
  readonly unit: string;
  constructor(length: number, unit: string) {
    this.length = length;
    this.unit = unit;
  }
  toText(): string {
    return this.unit.repeat(this.length);
  }
  [fc.toStringMethod](): string {
    return `longString(${this.length}, ${JSON.stringify(this.unit)})`;
  }
}

/** A string built when sent (a deeply nested GraphQL document), shown by its label. */
export class BuiltString {
  readonly label: string;
  readonly build: () => string;
  constructor(label: string, build: () => string) {
    this.label = label;
    this.build = build;
  }
  [fc.toStringMethod](): string {
    return this.label;
  }
}

type JsonPiece = RawJson | JsonEntries | Nested | Repeated | LongString | BuiltString;

/** The JSON text of a description. */
export function jsonText(value: Json | undefined): string {
  if (value === undefined) return 'null';
  if (value instanceof RawJson) return value.text;
  if (value instanceof LongString) return JSON.stringify(value.toText());
  if (value instanceof BuiltString) return JSON.stringify(value.build());
  if (value instanceof JsonEntries) return `{${value.entries.map(([k, v]) => `${JSON.stringify(k)}:${jsonText(v)}`).join(',')}}`;
  if (value instanceof Nested) {
    const [open, close] = value.kind === 'array' ? ['[', ']'] : ['{"n":', '}'];
    return open.repeat(value.depth) + jsonText(value.inner) + close.repeat(value.depth);
  }
  if (value instanceof Repeated) {
    const item = jsonText(value.item);
    return value.count === 0 ? '[]' : `[${`${item},`.repeat(value.count - 1)}${item}]`;
  }
  if (Array.isArray(value)) return `[${value.map(jsonText).join(',')}]`;
  if (typeof value === 'object' && value !== null) {
    return `{${Object.entries(value)
      .map(([k, v]) => `${JSON.stringify(k)}:${jsonText(v)}`)
      .join(',')}}`;
  }
  return JSON.stringify(value);
}

/** Pieces of text that break things: NUL, lone surrogates, controls, bidi overrides, emoji, quotes, injection. */
export const oddStringParts = [
  '\u0000',
  '\ud800',
  '\udfff',
  'a\ud83d',
  '\ude00b',
  '😀',
  '👩‍👩‍👧',
  '\u202e',
  '\ufeff',
  '\u0001',
  '\u001f',
  '\u007f',
  '\u0085',
  '\u2028',
  '\r\n',
  '\t',
  '"',
  '\\',
  '<script>',
  "' OR 1=1 --",
  '%00',
  '%2F',
  '../',
  'null',
  '{}',
  ' ',
  'é',
  'ÿ',
  '\uffff',
  '𝕏',
  '__proto__',
];

/** A short string that may hold any of the odd parts. */
export const oddString: fc.Arbitrary<string> = fc.oneof(
  { arbitrary: fc.string({ maxLength: 12 }), weight: 3 },
  { arbitrary: fc.string({ unit: 'binary', maxLength: 12 }), weight: 2 },
  {
    arbitrary: fc
      .array(fc.oneof(fc.constantFrom(...oddStringParts), fc.string({ maxLength: 3 })), { minLength: 1, maxLength: 5 })
      .map((parts) => parts.join('')),
    weight: 3,
  },
);

/** A string near or past a length limit (64, 128, 200, 255, 256, 512 …), possibly of a multi-unit character. */
export const longString: fc.Arbitrary<LongString> = fc
  .tuple(
    fc.constantFrom(63, 64, 65, 127, 128, 129, 200, 201, 255, 256, 257, 512, 513, 2049, 70_000),
    fc.constantFrom('a', 'é', '😀', '\u0000', '\ud800'),
  )
  .map(([length, unit]) => new LongString(length, unit));

export const jsonString: fc.Arbitrary<string | LongString> = fc.oneof(
  { arbitrary: oddString, weight: 9 },
  { arbitrary: longString, weight: 1 },
);

/** Numbers, including the ones JSON can write but JavaScript cannot hold. */
export const oddNumber: fc.Arbitrary<number | RawJson> = fc.oneof(
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.constantFrom(0, 1, -1, 2 ** 31, 2 ** 53, 2 ** 53 + 2, -(2 ** 53), 0.5, 1e21, 5e-324, 1_000_000, 1_000_001, 604_801),
  fc
    .constantFrom('1e309', '-1e309', '-0', '1e-400', '123456789012345678901234567890', '1E2', '-0.0e0', '1.0', '30.000')
    .map((t) => new RawJson(t)),
);

/** A key of a JSON object: a field some route knows, or an odd one. */
export function jsonKey(fields: readonly string[]): fc.Arbitrary<string> {
  return fc.oneof(
    { arbitrary: fc.constantFrom('name', ...fields), weight: 3 },
    { arbitrary: fc.constantFrom('__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty', ''), weight: 1 },
    { arbitrary: oddString, weight: 2 },
  );
}

/** Any JSON value, a few levels deep, with odd strings, numbers and keys. */
export function junkValue(fields: readonly string[] = []): fc.Arbitrary<Json> {
  const scalar: fc.Arbitrary<Json> = fc.oneof(
    jsonString,
    oddNumber,
    fc.boolean(),
    fc.constant(null),
    fc.constantFrom('30', '1', 'true', 'null', '', '2020-01-01T00:00:00Z'),
  );
  return fc.letrec<{ value: Json }>((tie) => ({
    value: fc.oneof(
      { maxDepth: 3, depthSize: 'small' },
      { arbitrary: scalar, weight: 4 },
      { arbitrary: fc.array(tie('value'), { maxLength: 4 }), weight: 1 },
      { arbitrary: fc.dictionary(jsonKey(fields), tie('value'), { maxKeys: 4 }) as fc.Arbitrary<Json>, weight: 1 },
    ),
  })).value;
}

/** Structures that stress the parser and the limits: deep nesting around 64 levels, huge arrays near 1 MiB. */
export const stressValue: fc.Arbitrary<Json> = fc.oneof(
  fc
    .tuple(
      fc.oneof(fc.integer({ min: 2, max: 130 }), fc.constantFrom(63, 64, 65, 66, 100)),
      fc.constantFrom('array' as const, 'object' as const),
      fc.constantFrom<Json>(1, 'x', '\u0000', null, {}),
    )
    .map(([depth, kind, inner]) => new Nested(depth, kind, inner)),
  fc
    .tuple(
      fc.constantFrom(101, 1000, 50_000, 150_000, 400_000, 600_000),
      fc.constantFrom<Json>(0, 'a', '\u0000', null, {}, [], new RawJson('1e309')),
    )
    .map(([count, item]) => new Repeated(count, item)),
);

/** One change to an otherwise plausible body object. */
export type Mutation =
  | { op: 'set'; path: string; value: Json }
  | { op: 'delete'; path: string }
  | { op: 'proto' | 'constructor' }
  | { op: 'duplicate'; key: string; value: Json }
  | { op: 'replace'; value: Json }
  | { op: 'wrap' };

/** Mutations at `paths` (dotted, into nested objects) of a body whose fields are `fields`. */
export function mutations(paths: readonly string[]): fc.Arbitrary<Mutation[]> {
  const fields = [...new Set(paths.flatMap((p) => p.split('.')))];
  const path = fc.oneof(fc.constantFrom(...paths), jsonKey(fields));
  const value = fc.oneof({ arbitrary: junkValue(fields), weight: 9 }, { arbitrary: stressValue, weight: 1 });
  const mutation: fc.Arbitrary<Mutation> = fc.oneof(
    { arbitrary: fc.record({ op: fc.constant('set' as const), path, value }), weight: 6 },
    { arbitrary: fc.record({ op: fc.constant('delete' as const), path }), weight: 2 },
    { arbitrary: fc.record({ op: fc.constantFrom('proto' as const, 'constructor' as const) }), weight: 1 },
    { arbitrary: fc.record({ op: fc.constant('duplicate' as const), key: fc.constantFrom(...fields), value }), weight: 1 },
    { arbitrary: fc.record({ op: fc.constant('replace' as const), value }), weight: 1 },
    { arbitrary: fc.record({ op: fc.constant('wrap' as const) }), weight: 1 },
  );
  return fc.oneof(
    { arbitrary: fc.constant<Mutation[]>([]), weight: 2 },
    { arbitrary: fc.array(mutation, { minLength: 1, maxLength: 3 }), weight: 1 },
  );
}

function isPlainObject(value: Json | undefined): value is { [key: string]: Json } {
  return (
    typeof value === 'object' && value !== null && !Array.isArray(value) && Object.getPrototypeOf(value) === Object.prototype
  );
}

/** A copy of `target` with `value` at the dotted `path` (objects made on the way); `undefined` deletes. */
function setAt(target: Json, path: string[], value: Json | undefined): Json {
  const base: { [key: string]: Json } = isPlainObject(target) ? { ...target } : {};
  const [head, ...rest] = path;
  if (rest.length === 0) {
    if (value === undefined) delete base[head];
    else Object.defineProperty(base, head, { value, enumerable: true, writable: true, configurable: true });
  } else {
    Object.defineProperty(base, head, {
      value: setAt(Object.hasOwn(base, head) ? base[head] : {}, rest, value),
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return base;
}

/** Applies the mutations in order; the base is left as it was. */
export function mutate(base: Json, changes: readonly Mutation[]): Json {
  let body = base;
  for (const change of changes) {
    const entries = (): Array<[string, Json]> => (isPlainObject(body) ? Object.entries(body) : []);
    switch (change.op) {
      case 'set':
        body = setAt(body, change.path.split('.'), change.value);
        break;
      case 'delete':
        body = setAt(body, change.path.split('.'), undefined);
        break;
      case 'proto':
        body = new JsonEntries([['__proto__', { admin: true, scopes: ['*'] }], ...entries()]);
        break;
      case 'constructor':
        body = new JsonEntries([...entries(), ['constructor', { prototype: { admin: true } }]]);
        break;
      case 'duplicate':
        body = new JsonEntries([...entries(), [change.key, change.value]]);
        break;
      case 'replace':
        body = change.value;
        break;
      case 'wrap':
        body = [body];
        break;
    }
  }
  return body;
}
