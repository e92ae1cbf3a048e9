import type { ComplexModel } from './schema-model.ts';

/**
 * In WSDL mode, the key of a value's derived type (`xsi:type`): in params, `"$type": "Circle"` sends a Circle where
 * a Shape is declared, written and checked as a Circle; in answers, an element whose `xsi:type` names a derived type
 * is shaped by it and says which with `$type`. The name is the type's local name, or `{namespace}name` where two
 * derived types share a local name.
 */
export const typeKey = '$type';

/** A type derived from a declared one: its `{namespace}name` and its model. */
export interface DerivedType {
  ns: string;
  local: string;
  model: ComplexModel;
}

/**
 * The type derived from `declared` that `name` (a local name, or `{namespace}name`) names, or undefined when none
 * does (or a local name names several).
 *
 * @example derivedType(shape, 'Circle') // { ns: 'http://example.com/shapes', local: 'Circle', model: … }
 */
export function derivedType(declared: ComplexModel, name: string): DerivedType | undefined {
  const subtypes = declared.subtypes;
  if (subtypes === undefined) return undefined;
  const exact = subtypes.get(name);
  if (exact !== undefined) return { ...split(name), model: exact };
  let found: DerivedType | undefined;
  for (const [key, model] of subtypes) {
    const named = split(key);
    if (named.local !== name) continue;
    if (found !== undefined) return undefined;
    found = { ...named, model };
  }
  return found;
}

/** How `$type` names a derived type: its local name, or `{namespace}name` when another derived type shares it. */
export function typeLabel(declared: ComplexModel, ns: string, local: string): string {
  let same = 0;
  for (const key of declared.subtypes?.keys() ?? []) if (split(key).local === local) same++;
  return same > 1 ? `{${ns}}${local}` : local;
}

/** The names `$type` takes for `declared`, for messages. */
export function typeLabels(declared: ComplexModel): string[] {
  return [...(declared.subtypes?.keys() ?? [])].map((key) => {
    const { ns, local } = split(key);
    return typeLabel(declared, ns, local);
  });
}

function split(key: string): { ns: string; local: string } {
  const close = key.indexOf('}');
  return { ns: key.slice(1, close), local: key.slice(close + 1) };
}
