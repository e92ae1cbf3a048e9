import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { paramIssues } from '../../src/connectors/soap/param-checks.ts';
import { type ComplexModel, simpleModelOf } from '../../src/connectors/soap/schema-model.ts';

/** XML Schema's integer types and their ranges (XML Schema 2 §3.3.13–3.3.25), written out here independently. */
const ranges: Array<[string, bigint | undefined, bigint | undefined]> = [
  ['integer', undefined, undefined],
  ['long', -(2n ** 63n), 2n ** 63n - 1n],
  ['int', -(2n ** 31n), 2n ** 31n - 1n],
  ['short', -32768n, 32767n],
  ['byte', -128n, 127n],
  ['nonNegativeInteger', 0n, undefined],
  ['positiveInteger', 1n, undefined],
  ['nonPositiveInteger', undefined, 0n],
  ['negativeInteger', undefined, -1n],
  ['unsignedLong', 0n, 2n ** 64n - 1n],
  ['unsignedInt', 0n, 2n ** 32n - 1n],
  ['unsignedShort', 0n, 65535n],
  ['unsignedByte', 0n, 255n],
];

const model = (builtin: string): ComplexModel => ({
  kind: 'complex',
  type: 'Numbers',
  open: false,
  particles: [{ name: 'n', ns: '', required: true, repeated: true, nillable: false, model: simpleModelOf(builtin) }],
});

/** Whether a JSON value is in the range, decided with BigInt alone. */
function fits(value: number | string, low: bigint | undefined, high: bigint | undefined): boolean {
  const text = typeof value === 'number' ? (Number.isInteger(value) ? BigInt(value).toString() : undefined) : value.trim();
  if (text === undefined || !/^[+-]?\d+$/.test(text)) return false;
  const n = BigInt(text);
  return (low === undefined || n >= low) && (high === undefined || n <= high);
}

test('property: integer types take exactly the JSON numbers and texts in their range, at and beyond a double’s exact integers', () => {
  const edges = ranges.flatMap(([, low, high]) => [low, high].filter((b) => b !== undefined).flatMap((b) => [b - 1n, b, b + 1n]));
  const near = fc.constantFrom(...edges, 2n ** 53n - 1n, 2n ** 53n, -(2n ** 53n), 0n);
  const value = fc.oneof(
    near.map((n) => Number(n)),
    near.map((n) => n.toString()),
    near.map((n) => ` ${n} `),
    fc.bigInt({ min: -(2n ** 70n), max: 2n ** 70n }).map((n) => Number(n)),
    fc.integer(),
    fc.double(),
    fc.constantFrom('1.0', '1e3', '', '+5', '-0', 'x', Number.MAX_VALUE, -Number.MAX_VALUE),
  );
  for (const [builtin, low, high] of ranges) {
    fc.assert(
      fc.property(fc.array(value, { minLength: 1, maxLength: 5 }), (values) => {
        const refused = new Set(paramIssues(model(builtin), { n: values }, 'params', 'Op').map((issue) => issue.path));
        for (const [i, one] of values.entries()) {
          assert.equal(!refused.has(`params.n[${i}]`), fits(one, low, high), `${builtin}: ${JSON.stringify(one)}`);
        }
      }),
      { numRuns: 300 },
    );
  }
});
