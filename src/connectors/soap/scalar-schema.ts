import type { JsonSchema } from '../catalog.ts';
import type { Facets } from './facets.ts';
import { atomicNumber, builtinRange, integerRange, numberBounds } from './number-schema.ts';
import { paramIssues } from './param-checks.ts';
import type { SchemaDefinitions } from './schema-definitions.ts';
import {
  anchored,
  base64LengthPattern,
  dateBody,
  dateTimeBody,
  decimalDigits,
  facetPattern,
  integerTextPattern,
  lexicalBodies,
  maxQuantifier,
  timeZone,
} from './text-patterns.ts';
import { type ComplexModel, integerBuiltins, type SimpleModel } from './type-model.ts';

/**
 * The JSON Schema of one simple value as execute's params check takes it (param-checks.ts `simpleProblem`): a string,
 * a number or a boolean (never an object or a list: a list type's list is an element's value, see params-schema.ts)
 * that fits the built-in type's lexical space, the enumeration (compared as `String(value)`) and the facets (on
 * `String(value)`). Exact, but where JSON Schema cannot see what the check sees, where it takes more:
 * - a JSON number's text (`String(5)`) is not constrained by length, pattern or digit facets, but for an integer
 *   type's `totalDigits` (a range);
 * - a string's value is not compared with `minInclusive` & co. unless the type is an integer (a string of an integer
 *   type is held to its range exactly: its decimal texts, as a pattern);
 * - a list type's text (`"1 2 3"`) is checked item by item only when the item type is an enumeration or a built-in
 *   without facets;
 * - a pattern facet is not checked on a text of more than half the length param-checks matches it up to (it matches no
 *   longer text: facets.ts `maxPatternSteps`), and one JavaScript cannot say is left out.
 * An enumeration, and the booleans, are what the check itself takes of their few candidates (`simpleFits`).
 */

/** Whether param-checks takes `value` for an element of type `model` (the one source of truth, asked of few values). */
export function simpleFits(model: SimpleModel, value: unknown): boolean {
  const holder: ComplexModel = {
    kind: 'complex',
    type: 'value',
    open: false,
    particles: [{ name: 'v', ns: '', required: true, repeated: false, nillable: false, model }],
  };
  return paramIssues(holder, { v: value }, 'v', 'value').length === 0;
}

/** Whether `{"$value": null}` (an element without text) fits: the check then sees `null`, taken by text types. */
export function nullFits(model: SimpleModel): boolean {
  return simpleFits(model, { $value: null });
}

/** The schema of one value of `model` (a `$ref` for a type that has more to say than its built-in). */
export function scalarSchema(model: SimpleModel, defs: SchemaDefinitions): JsonSchema {
  const alternatives = scalarAlternatives(model, defs);
  return alternatives.length === 1 ? alternatives[0] : { anyOf: alternatives };
}

/** The same as alternatives to list beside others in an `anyOf`. */
export function scalarAlternatives(model: SimpleModel, defs: SchemaDefinitions): JsonSchema[] {
  const render = () => renderBranches(branchesOf(model, defs), natural(model));
  if (restricted(model)) return [defs.ref(model, 'scalar', `${model.type}.value`, render)];
  const rendered = render();
  return rendered.anyOf !== undefined && Object.keys(rendered).length === 1 ? (rendered.anyOf as JsonSchema[]) : [rendered];
}

/** Whether a type restricts its built-in: an enumeration, facets, a list or a union. */
export function restricted(model: SimpleModel): boolean {
  return model.enumeration !== undefined || model.facets !== undefined || model.list !== undefined || model.union !== undefined;
}

/** The JSON type a value of the type is most naturally given as: listed first. */
function natural(model: SimpleModel): keyof Branches {
  const builtin = model.list === undefined && model.union === undefined ? model.builtin : model.union?.[0]?.builtin;
  if (builtin === undefined) return 'string';
  if (integerBuiltins.has(builtin) || ['decimal', 'float', 'double'].includes(builtin)) return 'number';
  return builtin === 'boolean' ? 'boolean' : 'string';
}

/** What one value of a type may be, by its JSON type: each a schema of that type alone (none: not taken). */
export interface Branches {
  string?: JsonSchema;
  number?: JsonSchema;
  boolean?: JsonSchema;
}

export function branchesOf(model: SimpleModel, defs: SchemaDefinitions): Branches {
  const booleans = [true, false].filter((b) => simpleFits(model, b));
  const boolean = booleans.length === 2 ? { type: 'boolean' } : booleans.length === 1 ? { const: booleans[0] } : undefined;
  if (model.list !== undefined) return { ...listBranches(model, model.list, defs), boolean };
  if (model.enumeration !== undefined) return { ...enumerationBranches(model), boolean };
  if (model.union !== undefined && model.union.length > 0) return { ...unionBranches(model, model.union, defs), boolean };
  return { string: atomicString(model), number: atomicNumber(model), boolean };
}

/** One schema of the branches: one `enum`, one `type`, or `anyOf` them. */
export function renderBranches(branches: Branches, first: keyof Branches = 'string'): JsonSchema {
  const order: Array<keyof Branches> = [first, ...(['string', 'number', 'boolean'] as const).filter((k) => k !== first)];
  const present = order.map((key) => branches[key]).filter((b): b is JsonSchema => b !== undefined);
  if (present.length === 0) return { not: {} };
  if (present.length === 1) return present[0];
  const only = (schema: JsonSchema, key: string) => Object.keys(schema).length === 1 && key in schema;
  if (present.every((b) => only(b, 'enum') || only(b, 'const'))) {
    return { enum: present.flatMap((b) => (only(b, 'enum') ? (b.enum as unknown[]) : [b.const])) };
  }
  return { anyOf: present };
}

/** An enumeration's values, as strings, and as numbers where a number's text is one of them: each one the check takes. */
function enumerationBranches(model: SimpleModel): Branches {
  const values = model.enumeration ?? [];
  const strings = values.filter((value) => simpleFits(model, value));
  const numbers = values
    .filter((value) => value.trim() !== '' && String(Number(value)) === value)
    .map(Number)
    .filter((n) => simpleFits(model, n));
  return {
    ...(strings.length > 0 && { string: { enum: [...new Set(strings)] } }),
    ...(numbers.length > 0 && { number: { enum: [...new Set(numbers)] } }),
  };
}

/**
 * A union: a value of one of its members (by JSON type, the members' branches), then its own facets (an enumeration of
 * its own is an enumeration, above).
 */
function unionBranches(model: SimpleModel, members: SimpleModel[], defs: SchemaDefinitions): Branches {
  const each = members.map((member) => branchesOf(member, defs));
  const pick = (key: 'string' | 'number') => {
    const found = each.map((b) => b[key]).filter((b): b is JsonSchema => b !== undefined);
    if (found.length === 0) return undefined;
    const plain = found.find((b) => Object.keys(b).length === 1 && b.type === key);
    const base = plain ?? (found.length === 1 ? found[0] : { anyOf: found });
    const own = key === 'string' ? stringFacets(model.facets, model.builtin) : numberBounds(model.facets);
    if (Object.keys(own).length === 0) return base;
    const allOf = [...(base === plain ? [] : [base]), ...((own.allOf as JsonSchema[] | undefined) ?? [])];
    return { ...own, type: key, ...(allOf.length > 0 && { allOf }) };
  };
  return { string: pick('string'), number: pick('number') };
}

/**
 * A list type's value given as one scalar: a text of items separated by white space, or one number or boolean (one
 * item); its length facets count the items.
 */
function listBranches(model: SimpleModel, item: SimpleModel, defs: SchemaDefinitions): Branches {
  const min = model.facets?.length ?? model.facets?.minLength;
  const max = model.facets?.length ?? model.facets?.maxLength;
  const items = branchesOf(item, defs);
  const token = tokenPattern(item);
  const count = (n: number) => (min === undefined || n >= min) && (max === undefined || n <= max);
  let string: JsonSchema = { type: 'string' };
  if (token !== undefined) {
    const repeats = (from: number, to: number | undefined) => `(?:${token})(?:\\s+(?:${token})){${from},${to ?? ''}}`;
    const low = min ?? 0;
    const high = max !== undefined && max < maxQuantifier ? max : undefined;
    if (high !== undefined && high < low) string = { not: {} };
    else if (high === 0) string = { type: 'string', pattern: '^\\s*$' };
    else {
      const body = repeats(Math.max(low - 1, 0), high === undefined ? undefined : high - 1);
      string = { type: 'string', pattern: anchored(low === 0 ? `(?:${body})?` : body) };
    }
  }
  return { string, number: count(1) ? items.number : undefined };
}

/**
 * A pattern for one item of a list's text (one run of non-space characters), when the item type is one a pattern says
 * exactly: an enumeration, or a built-in without facets (not a binary one, whose pattern takes white space or nothing).
 */
function tokenPattern(item: SimpleModel): string | undefined {
  if (item.list !== undefined || item.union !== undefined || item.facets !== undefined) return undefined;
  if (item.builtin.endsWith('Binary')) return undefined;
  if (item.enumeration !== undefined) {
    const tokens = item.enumeration.filter((value) => /^\S+$/.test(value) && simpleFits(item, value));
    return tokens.length === 0 ? '(?!)' : tokens.map(escapeRegExp).join('|');
  }
  if (integerBuiltins.has(item.builtin)) return integerTextPattern(...builtinRange(item.builtin)) ?? '(?!)';
  return lexicalBodies[item.builtin] ?? '\\S+';
}

function escapeRegExp(text: string): string {
  return text.replace(/[\\^$.*+?()[\]{}|/-]/g, (c) => (c === '-' ? '\\x2d' : c === '/' ? '/' : `\\${c}`));
}

/** The strings an atomic type takes: its lexical space, then the facets on the text as given. */
function atomicString(model: SimpleModel): JsonSchema | undefined {
  const { builtin, facets } = model;
  const schema: JsonSchema = { type: 'string' };
  const patterns: JsonSchema[] = [];
  if (integerBuiltins.has(builtin)) {
    const [lo, hi] = integerRange(builtin, facets);
    const body = integerTextPattern(lo, hi);
    if (body === undefined) return undefined;
    schema.pattern = anchored(body);
  } else if (builtin === 'dateTime' || builtin === 'date') {
    schema.anyOf = datesWithFormat(builtin);
  } else if (builtin === 'base64Binary') {
    schema.contentEncoding = 'base64';
    const length = binaryLength(facets);
    const body = length ? base64LengthPattern(length.min, length.max) : lexicalBodies.base64Binary;
    if (body === undefined) return undefined;
    schema.pattern = anchored(body);
  } else if (builtin === 'hexBinary') {
    const length = binaryLength(facets);
    const min = length?.min !== undefined && length.min < maxQuantifier ? Math.max(length.min, 0) : 0;
    const max = length?.max !== undefined && length.max < maxQuantifier ? length.max : '';
    if (max !== '' && max < min) return undefined;
    schema.pattern = anchored(length ? `(?:[0-9a-fA-F]{2}){${min},${max}}` : lexicalBodies.hexBinary);
  } else if (lexicalBodies[builtin] !== undefined) {
    schema.pattern = anchored(lexicalBodies[builtin]);
  }
  if (builtin === 'decimal' && (facets?.totalDigits !== undefined || facets?.fractionDigits !== undefined)) {
    patterns.push({ pattern: anchored(decimalDigits(facets.totalDigits, facets.fractionDigits)) });
  }
  const own = stringFacets(facets, builtin);
  if (own.allOf) patterns.push(...(own.allOf as JsonSchema[]));
  return { ...schema, ...own, ...(patterns.length > 0 && { allOf: patterns }) };
}

/**
 * A dateTime or date text with its JSON Schema `format`, said only of the texts that are one: RFC 3339's `date-time`
 * requires the time zone param-checks leaves optional, `date` refuses it, and neither takes white space around or a
 * year of other than four digits. Where the format is an annotation (2020-12's default), the two branches are the
 * check's pattern exactly; where a validator asserts it (the MCP server's Ajv does), it holds to it only the texts in
 * RFC 3339's own shape, which then must also be a real date and time (no 2024-02-30), never the others.
 */
function datesWithFormat(builtin: 'dateTime' | 'date'): JsonSchema[] {
  const formatted =
    builtin === 'dateTime'
      ? { pattern: `^${dateTimeBody.replace('-?\\d{4,}', '\\d{4}')}${timeZone}$`, format: 'date-time' }
      : { pattern: `^${dateBody.replace('-?\\d{4,}', '\\d{4}')}$`, format: 'date' };
  return [formatted, { pattern: anchored(lexicalBodies[builtin]), not: { pattern: formatted.pattern } }];
}

/**
 * What facets say of a string as JSON Schema keywords: lengths in characters (code points, as both count them; a
 * binary type's are bytes, in its pattern) and the pattern facets (each restriction step's patterns are alternatives).
 */
function stringFacets(facets: Facets | undefined, builtin: string): JsonSchema {
  if (facets === undefined) return {};
  const own: JsonSchema = {};
  if (!builtin.endsWith('Binary')) {
    const min = facets.length ?? facets.minLength;
    const max = facets.length ?? facets.maxLength;
    if (min !== undefined) own.minLength = min;
    if (max !== undefined) own.maxLength = max;
  }
  const steps: JsonSchema[] = [];
  for (const step of facets.patterns ?? []) {
    const translated = step.map(facetPattern);
    // A step with a pattern the check does not apply never fails.
    if (translated.some((p) => p === undefined)) continue;
    const checked = translated as Array<{ pattern: string; longest: number }>;
    // Past `longest` code units the check does not match (a code point is at most two of them).
    const unchecked = Math.ceil((Math.min(...checked.map((p) => p.longest)) + 1) / 2);
    steps.push({ anyOf: [...checked.map((p) => ({ pattern: p.pattern })), { minLength: unchecked }] });
  }
  if (steps.length > 0) own.allOf = steps;
  return own;
}

/** A binary type's length facets in bytes, when it has any. */
function binaryLength(facets: Facets | undefined): { min?: number; max?: number } | undefined {
  const min = facets?.length ?? facets?.minLength;
  const max = facets?.length ?? facets?.maxLength;
  return min === undefined && max === undefined ? undefined : { min, max };
}
