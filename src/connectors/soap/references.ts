import { ApiError } from '../../core/errors.ts';
import { isJsonObject } from '../../core/json-object.ts';
import { carryXsiType } from './xml-reader.ts';

/**
 * SOAP 1.1 encoding's multi-reference values (§5.4.1), resolved: an accessor `<return href="#id0"/>` stands for the
 * independent element `<multiRef id="id0">…</multiRef>` beside the Body's first child, as Axis 1 answers rpc/encoded
 * calls by default. Read values in (`elementValue`'s shape), resolved values out:
 *
 * - a reference is replaced by its element's value, without the encoding's bookkeeping attributes (`id`,
 *   `soapenc:root`, `encodingStyle`); the referencing accessor's other attributes are kept beside them;
 * - a value referenced twice is copied twice (JSON has no shared objects);
 * - a reference back to an element being resolved (a cycle) stays as read (`{$attributes: {href}}`): JSON has no cycles;
 * - a reference to an id the answer does not hold stays as read;
 * - bounded as every XML answer is (docs/limits.md#upstreams): at most 1,000,000 values once resolved (every object,
 *   array item and text counts, those a reference copies included), about `maxBytes` of JSON once resolved
 *   (IX_EXECUTE_MAX_BYTES) and 256 levels, else `upstream_invalid_response`, counted as the copies are made: N
 *   references to one element of M texts are refused before N×M values are spent, and a handful of references that
 *   each name the next twice cannot expand without bound.
 *
 * @example resolveReferences({ r: { $attributes: { href: '#a' } } }, new Map([['a', { $attributes: { id: 'a' }, x: '1' }]]))
 * // { r: { x: '1' } }
 */
export function resolveReferences(
  value: unknown,
  independent: ReadonlyMap<string, unknown>,
  options: { maxBytes?: number } = {},
): unknown {
  const maxBytes = options.maxBytes ?? defaultMaxBytes;
  // What the answer would resolve to, counted first in one pass over what was read (each element's cost once): a bomb
  // is refused before a single copy is made. The resolution counts again as it copies, exactly.
  const cost = costOf(value, independent, new Map(), new Set(), 0);
  if (cost.values > maxValues) throw tooLarge(`expand to more than ${maxValues} values`);
  if (cost.bytes > maxBytes) throw tooLarge(`expand to more than ${maxBytes} bytes (IX_EXECUTE_MAX_BYTES)`);
  const budget: Budget = { values: 0, bytes: 0, maxBytes };
  return resolve(value, independent, new Set(), 0, budget);
}

interface Cost {
  values: number;
  bytes: number;
}

/**
 * The values and bytes `value` resolves to, as `resolve` and `count` would count them; each referenced element's cost
 * is worked out once (`costs`), so the pass is linear in what was read however often an element is referenced. A
 * reference back into an element being costed (a cycle) costs what it is as read.
 */
function costOf(
  value: unknown,
  independent: ReadonlyMap<string, unknown>,
  costs: Map<string, Cost>,
  costing: Set<string>,
  depth: number,
): Cost {
  if (depth > maxDepth) throw tooLarge(`nest deeper than ${maxDepth} levels`);
  if (!isJsonObject(value) && !Array.isArray(value)) {
    return { values: 1, bytes: (typeof value === 'string' ? value.length : 8) + perValueBytes };
  }
  const total: Cost = { values: 1, bytes: perValueBytes };
  const add = (part: Cost) => {
    // Past every bound the sum stops mattering: capped, so no arithmetic runs away.
    total.values = Math.min(total.values + part.values, Number.MAX_SAFE_INTEGER);
    total.bytes = Math.min(total.bytes + part.bytes, Number.MAX_SAFE_INTEGER);
  };
  if (Array.isArray(value)) {
    for (const item of value) add(costOf(item, independent, costs, costing, depth + 1));
    return total;
  }
  const reference = referenceOf(value, independent, costing);
  if (reference !== undefined) {
    const [id, target] = reference;
    let known = costs.get(id);
    if (known === undefined) {
      costing.add(id);
      known = costOf(target, independent, costs, costing, depth + 1);
      costing.delete(id);
      costs.set(id, known);
    }
    return known;
  }
  for (const [key, item] of Object.entries(value)) {
    add({ values: 1, bytes: key.length + perValueBytes });
    if (key === '$attributes') {
      if (isJsonObject(item)) {
        for (const [name, text] of Object.entries(item)) {
          add({ values: 1, bytes: name.length + (typeof text === 'string' ? text.length : 8) + perValueBytes });
        }
      }
    } else {
      add(costOf(item, independent, costs, costing, depth + 1));
    }
  }
  return total;
}

interface Budget {
  values: number;
  /** About the JSON text the resolved value makes: every text's length, and a few bytes for each value and key. */
  bytes: number;
  maxBytes: number;
}

const maxValues = 1_000_000;
/** IX_EXECUTE_MAX_BYTES's default, for a caller that names none. */
const defaultMaxBytes = 32 * 1024 * 1024;
/** What a value costs in JSON beside its text: quotes, a separator, a key's quotes and colon. */
const perValueBytes = 4;
const maxDepth = 256;
/** Attributes of the encoding that say how the graph was written, not what the value is. */
const bookkeeping = new Set(['id', 'root', 'encodingStyle']);

function resolve(
  value: unknown,
  independent: ReadonlyMap<string, unknown>,
  resolving: Set<string>,
  depth: number,
  budget: Budget,
): unknown {
  if (depth > maxDepth) throw tooLarge(`nest deeper than ${maxDepth} levels`);
  if (Array.isArray(value)) {
    count(budget, 0);
    return value.map((item) => resolve(item, independent, resolving, depth + 1, budget));
  }
  if (!isJsonObject(value)) {
    count(budget, typeof value === 'string' ? value.length : 8);
    return value;
  }
  count(budget, 0);
  const attributes = isJsonObject(value.$attributes) ? value.$attributes : undefined;
  if (typeof attributes?.href === 'string' && attributes.href.startsWith('#')) {
    const reference = referenceOf(value, independent, resolving);
    if (reference === undefined) return value;
    const [id, target] = reference;
    resolving.add(id);
    try {
      const { href: _href, ...own } = attributes;
      return withAttributes(resolve(target, independent, resolving, depth + 1, budget), own);
    } finally {
      resolving.delete(id);
    }
  }
  const resolved: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) {
    count(budget, key.length);
    const next = key === '$attributes' ? attributesOf(item, budget) : resolve(item, independent, resolving, depth + 1, budget);
    // defineProperty: an element named __proto__ (a valid XML name) stays an element.
    Object.defineProperty(resolved, key, { value: next, enumerable: true, writable: true, configurable: true });
  }
  carryXsiType(value, resolved);
  return resolved;
}

/**
 * The element an accessor (`{$attributes: {href: '#id'}}`) refers to, with its id; undefined when `value` is no
 * reference, names no element of the answer, or names one being worked on (`open`: a cycle).
 */
function referenceOf(
  value: Record<string, unknown>,
  independent: ReadonlyMap<string, unknown>,
  open: ReadonlySet<string>,
): [string, unknown] | undefined {
  const href = isJsonObject(value.$attributes) ? value.$attributes.href : undefined;
  if (typeof href !== 'string' || !href.startsWith('#')) return undefined;
  const id = href.slice(1);
  const target = independent.get(id);
  return target === undefined || open.has(id) ? undefined : [id, target];
}

/** A resolved value with its element's bookkeeping attributes dropped and the accessor's own attributes added. */
function withAttributes(value: unknown, accessor: Record<string, unknown>): unknown {
  if (!isJsonObject(value)) return value;
  const referenced = isJsonObject(value.$attributes) ? value.$attributes : {};
  const attributes = Object.fromEntries(
    [...Object.entries(referenced), ...Object.entries(accessor)].filter(([name]) => !bookkeeping.has(name)),
  );
  const { $attributes: _dropped, ...rest } = value;
  const keys = Object.keys(attributes);
  if (keys.length === 0) {
    const restKeys = Object.keys(rest);
    // A text value whose only attributes were bookkeeping is its text, as an element without attributes reads.
    if (restKeys.length === 1 && restKeys[0] === '$value') return rest.$value;
    if (restKeys.length > 0) carryXsiType(value, rest);
    return restKeys.length === 0 ? '' : rest;
  }
  const withOwn = { $attributes: attributes, ...rest };
  carryXsiType(value, withOwn);
  return withOwn;
}

/** Attributes are copied as they are: their names and texts count. */
function attributesOf(attributes: unknown, budget: Budget): unknown {
  if (isJsonObject(attributes)) {
    for (const [name, text] of Object.entries(attributes))
      count(budget, name.length + (typeof text === 'string' ? text.length : 8));
  }
  return attributes;
}

/** One more value of about `bytes` bytes of text in the resolved answer; beyond the bounds, refused. */
function count(budget: Budget, bytes: number): void {
  if (++budget.values > maxValues) throw tooLarge(`expand to more than ${maxValues} values`);
  budget.bytes += bytes + perValueBytes;
  if (budget.bytes > budget.maxBytes) throw tooLarge(`expand to more than ${budget.maxBytes} bytes (IX_EXECUTE_MAX_BYTES)`);
}

function tooLarge(what: string): ApiError {
  return new ApiError(
    'upstream_invalid_response',
    `The upstream answer's multi-reference values (href/id) ${what}, which is refused.`,
  );
}
