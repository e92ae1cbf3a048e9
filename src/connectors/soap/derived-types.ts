import { append } from './append.ts';
import type { ComplexModel } from './type-model.ts';

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

/** A declared type's derived types by `{namespace}name` and by local name, and the label `$type` gives each. */
interface Names {
  byLocal: Map<string, string[]>;
  labels: Map<string, string>;
}

/** Per declared type, computed once: an answer may name a derived type on each of a million elements. */
const namesOf = new WeakMap<ComplexModel, Names>();

function names(declared: ComplexModel): Names {
  let found = namesOf.get(declared);
  if (found === undefined) {
    const byLocal = new Map<string, string[]>();
    for (const key of declared.subtypes?.keys() ?? []) append(byLocal, split(key).local, key);
    const labels = new Map<string, string>();
    for (const [local, keys] of byLocal) for (const key of keys) labels.set(key, keys.length > 1 ? key : local);
    found = { byLocal, labels };
    namesOf.set(declared, found);
  }
  return found;
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
  const keys = subtypes.has(name) ? [name] : names(declared).byLocal.get(name);
  if (keys?.length !== 1) return undefined;
  const model = subtypes.get(keys[0]);
  return model === undefined ? undefined : { ...split(keys[0]), model };
}

/** How `$type` names a derived type: its local name, or `{namespace}name` when another derived type shares it. */
export function typeLabel(declared: ComplexModel, ns: string, local: string): string {
  return names(declared).labels.get(`{${ns}}${local}`) ?? local;
}

/** The names `$type` takes for `declared`, for messages and signatures. */
export function typeLabels(declared: ComplexModel): string[] {
  return [...names(declared).labels.values()];
}

function split(key: string): { ns: string; local: string } {
  const close = key.indexOf('}');
  return { ns: key.slice(1, close), local: key.slice(close + 1) };
}
