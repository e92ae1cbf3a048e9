import type { JsonSchema } from '../catalog.ts';
import type { Facets } from './facets.ts';
import { lexicalBodies } from './text-patterns.ts';
import { integerBuiltins, type SimpleModel } from './type-model.ts';

/**
 * The numbers of the simple types' schemas (scalar-schema.ts) and the integer ranges of their texts: exact, as
 * param-checks compares them (an integer type's range as BigInt; a facet's bound as `Number(String(value))`).
 */

/** The numbers an atomic type takes: none for a text type, integers in its range, or any number; bounds as facets say. */
export function atomicNumber(model: SimpleModel): JsonSchema | undefined {
  const { builtin, facets } = model;
  if (lexicalBodies[builtin] !== undefined && !['decimal', 'float', 'double'].includes(builtin)) return undefined;
  if (!integerBuiltins.has(builtin)) return { type: 'number', ...numberBounds(facets) };
  const [lo, hi] = builtinRange(builtin);
  const range: JsonSchema = { type: 'integer', ...numberBounds(facets) };
  const low = lo === undefined ? undefined : doubleAtLeast(lo);
  const high = hi === undefined ? undefined : doubleAtMost(hi);
  if (low !== undefined && (range.minimum === undefined || low > (range.minimum as number))) range.minimum = low;
  if (high !== undefined && (range.maximum === undefined || high < (range.maximum as number))) range.maximum = high;
  const total = facets?.totalDigits;
  if (total === undefined || 10 ** total > 1e21) return range;
  // Within 1e21 a number's text is its digits, which totalDigits counts; from 1e21 on it has an exponent, and is not.
  const digits = doubleAtMost(10n ** BigInt(total) - 1n) as number;
  return {
    anyOf: [narrowed(range, -digits, digits), narrowed(range, 1e21, undefined), narrowed(range, undefined, -1e21)].filter(
      (r): r is JsonSchema => r !== undefined,
    ),
  };
}

/** A range narrowed to [low, high]; undefined when nothing is left. */
function narrowed(range: JsonSchema, low: number | undefined, high: number | undefined): JsonSchema | undefined {
  const out = { ...range };
  if (low !== undefined && (out.minimum === undefined || low > (out.minimum as number))) out.minimum = low;
  if (high !== undefined && (out.maximum === undefined || high < (out.maximum as number))) out.maximum = high;
  const min = Math.max(
    (out.minimum as number | undefined) ?? -Infinity,
    (out.exclusiveMinimum as number | undefined) ?? -Infinity,
  );
  const max = Math.min((out.maximum as number | undefined) ?? Infinity, (out.exclusiveMaximum as number | undefined) ?? Infinity);
  return min > max ? undefined : out;
}

/** The bound facets as JSON Schema's: param-checks compares `Number(String(value))`, a number's own value. */
export function numberBounds(facets: Facets | undefined): JsonSchema {
  const bounds: JsonSchema = {};
  if (facets?.minInclusive !== undefined) bounds.minimum = facets.minInclusive;
  if (facets?.maxInclusive !== undefined) bounds.maximum = facets.maxInclusive;
  if (facets?.minExclusive !== undefined) bounds.exclusiveMinimum = facets.minExclusive;
  if (facets?.maxExclusive !== undefined) bounds.exclusiveMaximum = facets.maxExclusive;
  return bounds;
}

/**
 * The integers an integer type's text may be: its built-in range and what its bound and digit facets leave of it,
 * each bound where `Number(text)` (as facets.ts compares) crosses it.
 */
export function integerRange(builtin: string, facets: Facets | undefined): [bigint | undefined, bigint | undefined] {
  let [lo, hi] = builtinRange(builtin);
  const raise = (n: bigint) => {
    if (lo === undefined || n > lo) lo = n;
  };
  const lower = (n: bigint) => {
    if (hi === undefined || n < hi) hi = n;
  };
  if (facets?.minInclusive !== undefined) raise(lastIntegerBelow(facets.minInclusive, true) + 1n);
  if (facets?.minExclusive !== undefined) raise(lastIntegerBelow(facets.minExclusive, false) + 1n);
  if (facets?.maxInclusive !== undefined) lower(lastIntegerBelow(facets.maxInclusive, false));
  if (facets?.maxExclusive !== undefined) lower(lastIntegerBelow(facets.maxExclusive, true));
  if (facets?.totalDigits !== undefined) {
    raise(1n - 10n ** BigInt(facets.totalDigits));
    lower(10n ** BigInt(facets.totalDigits) - 1n);
  }
  return [lo, hi];
}

/** XML Schema's integer types' ranges, as param-checks.ts `lexicalChecks` holds them (`integer`: ±10^1000). */
export function builtinRange(builtin: string): [bigint | undefined, bigint | undefined] {
  const unbounded = 10n ** 1000n;
  const ranges: Record<string, [bigint, bigint]> = {
    integer: [-unbounded, unbounded],
    long: [-(2n ** 63n), 2n ** 63n - 1n],
    int: [-(2n ** 31n), 2n ** 31n - 1n],
    short: [-32768n, 32767n],
    byte: [-128n, 127n],
    nonNegativeInteger: [0n, unbounded],
    positiveInteger: [1n, unbounded],
    nonPositiveInteger: [-unbounded, 0n],
    negativeInteger: [-unbounded, -1n],
    unsignedLong: [0n, 2n ** 64n - 1n],
    unsignedInt: [0n, 2n ** 32n - 1n],
    unsignedShort: [0n, 65535n],
    unsignedByte: [0n, 255n],
  };
  return ranges[builtin] ?? [undefined, undefined];
}

/** The least double at or above an integer (undefined beyond the doubles: no bound). */
function doubleAtLeast(n: bigint): number | undefined {
  const high = doubleAtMost(-n);
  return high === undefined ? undefined : -high;
}

/** The greatest double at or below an integer (undefined beyond the doubles: no bound). */
function doubleAtMost(n: bigint): number | undefined {
  const d = Number(n);
  if (!Number.isFinite(d)) return undefined;
  if (BigInt(d) <= n) return d;
  // Rounded up: the double next below d, one step of its bits (towards zero for d > 0, away from it for d < 0).
  const view = new DataView(new ArrayBuffer(8));
  view.setFloat64(0, d);
  view.setBigUint64(0, view.getBigUint64(0) + (d > 0 ? -1n : 1n));
  return view.getFloat64(0);
}

/**
 * The largest integer whose nearest double is below (`strict`) or at most `bound`: where a facet's bound, compared as
 * param-checks compares it (`Number(text)`), cuts the integers' texts.
 */
export function lastIntegerBelow(bound: number, strict: boolean): bigint {
  const fits = (v: bigint) => (strict ? Number(v) < bound : Number(v) <= bound);
  let low = BigInt(Math.floor(bound));
  for (let step = 1n; !fits(low); step *= 2n) low -= step;
  let high = low + 1n;
  for (let step = 1n; fits(high); step *= 2n) {
    low = high;
    high += step;
  }
  while (high - low > 1n) {
    const middle = (low + high) / 2n;
    if (fits(middle)) low = middle;
    else high = middle;
  }
  return low;
}
