import { ApiError } from '../../errors.ts';
import { isJsonObject } from '../../json-object.ts';
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
 * - bounded as every XML answer is (docs/limits.md#upstreams): at most 1,000,000 values once resolved and 256 levels,
 *   else `upstream_invalid_response`, so a handful of references that each name the next twice cannot expand
 *   without bound.
 *
 * @example resolveReferences({ r: { $attributes: { href: '#a' } } }, new Map([['a', { $attributes: { id: 'a' }, x: '1' }]]))
 * // { r: { x: '1' } }
 */
export function resolveReferences(value: unknown, independent: ReadonlyMap<string, unknown>): unknown {
  const budget = { values: 0 };
  return resolve(value, independent, new Set(), 0, budget);
}

const maxValues = 1_000_000;
const maxDepth = 256;
/** Attributes of the encoding that say how the graph was written, not what the value is. */
const bookkeeping = new Set(['id', 'root', 'encodingStyle']);

function resolve(
  value: unknown,
  independent: ReadonlyMap<string, unknown>,
  resolving: Set<string>,
  depth: number,
  budget: { values: number },
): unknown {
  if (depth > maxDepth) throw tooLarge(`nest deeper than ${maxDepth} levels`);
  if (Array.isArray(value)) {
    count(budget);
    return value.map((item) => resolve(item, independent, resolving, depth + 1, budget));
  }
  if (!isJsonObject(value)) return value;
  count(budget);
  const attributes = isJsonObject(value.$attributes) ? value.$attributes : undefined;
  const href = attributes?.href;
  if (typeof href === 'string' && href.startsWith('#')) {
    const id = href.slice(1);
    const target = independent.get(id);
    if (target !== undefined && !resolving.has(id)) {
      resolving.add(id);
      try {
        const { href: _href, ...own } = attributes as Record<string, unknown>;
        return withAttributes(resolve(target, independent, resolving, depth + 1, budget), own);
      } finally {
        resolving.delete(id);
      }
    }
    return value;
  }
  const resolved: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) {
    const next = key === '$attributes' ? item : resolve(item, independent, resolving, depth + 1, budget);
    // defineProperty: an element named __proto__ (a valid XML name) stays an element.
    Object.defineProperty(resolved, key, { value: next, enumerable: true, writable: true, configurable: true });
  }
  carryXsiType(value, resolved);
  return resolved;
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

function count(budget: { values: number }): void {
  if (++budget.values > maxValues) throw tooLarge(`expand to more than ${maxValues} values`);
}

function tooLarge(what: string): ApiError {
  return new ApiError(
    'upstream_invalid_response',
    `The upstream answer's multi-reference values (href/id) ${what}, which is refused.`,
  );
}
