import type { ValidationIssue } from '../../core/errors.ts';
import { isJsonObject } from '../../core/json-object.ts';
import { derivedType, typeKey, typeLabels } from './derived-types.ts';
import { valueKeys } from './envelope.ts';
import { facetProblem } from './facets.ts';
import { type ComplexModel, type Particle, particleIndex, type SimpleModel, type TypeModel } from './type-model.ts';

/**
 * Every problem of `value` (a params object) against the input's content model, at every depth, each with its full
 * path, list items by index as docs/execute.md#params-are-checked writes them (`params.order.lines[1].quantity`): names that are not elements of the type (unless it has `xsd:any`), missing
 * required elements, a list where one value fits, `null` for an element that is neither nillable nor optional,
 * an object where a simple value fits, and values that do not fit their built-in type, enumeration or facets (a list
 * type's items each, a union's value one of its members').
 *
 * @example paramIssues(model, { a: 'x' }, 'params', 'Multiply') // [{ path: 'params.a', message: 'must be an int (…)' }]
 */
export function paramIssues(model: ComplexModel, value: unknown, path: string, operation: string): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  checkComplex(model, value, path, operation, issues, 'parameter');
  return issues;
}

function checkComplex(
  model: ComplexModel,
  value: unknown,
  path: string,
  owner: string,
  issues: ValidationIssue[],
  noun: 'parameter' | 'element' = 'element',
): void {
  if (model.arrayOf) return; // SOAP-encoded arrays: node-soap takes several shapes for them; sent as given.
  if (model.text && (typeof value !== 'object' || value === null)) {
    checkSimple(model.text, value, path, issues);
    return;
  }
  if (!isJsonObject(value)) {
    issues.push({ path, message: `must be an object of the elements of ${owner}` });
    return;
  }
  if (Object.hasOwn(value, typeKey)) {
    const name = value[typeKey];
    const derived = typeof name === 'string' ? derivedType(model, name) : undefined;
    if (derived === undefined) {
      const types = typeLabels(model);
      const message =
        types.length === 0
          ? `names a type derived from ${model.type}, which has none`
          : `must name a type derived from ${model.type}: ${types.join(', ')}`;
      issues.push({ path: `${path}.${typeKey}`, message });
      return;
    }
    checkComplex(derived.model, withoutType(value), path, derived.local, issues, noun);
    return;
  }
  const { byName } = particleIndex(model);
  for (const key of Object.keys(value)) {
    const item = value[key];
    if (valueKeys.has(key)) {
      if (key === '$value' && model.text) checkSimple(model.text, item, `${path}.$value`, issues);
      if (key === '$attributes') checkAttributes(model, item, `${path}.$attributes`, owner, issues);
      continue;
    }
    const particle = byName.get(key);
    if (!particle) {
      if (!model.open) issues.push({ path: `${path}.${key}`, message: `is not ${article(noun)} ${noun} of ${owner}` });
      continue;
    }
    if (Array.isArray(item)) {
      // A SOAP-encoded array (soapenc:Array) is one element holding the list: given as the list itself.
      const model = particle.model;
      if (model.kind === 'complex' && model.arrayOf) continue;
      // A list type's value (xs:list) is one element holding the items, given as a list.
      if (model.kind === 'simple' && model.list !== undefined && !particle.repeated) {
        checkParticle(particle, item, `${path}.${key}`, issues);
        continue;
      }
      if (!particle.repeated) issues.push({ path: `${path}.${key}`, message: 'takes one value, not a list' });
      else for (let i = 0; i < item.length; i++) checkParticle(particle, item[i], `${path}.${key}[${i}]`, issues);
    } else {
      checkParticle(particle, item, `${path}.${key}`, issues);
    }
  }
  for (const particle of model.particles) {
    if (!particle.required || Object.hasOwn(value, particle.name)) continue;
    // A substitution group's member stands in for its head.
    const standIns = model.particles.filter((p) => p.substitutes === particle.name);
    if (standIns.some((p) => Object.hasOwn(value, p.name))) continue;
    const message = standIns.length === 0 ? 'is required' : `is required (or one of ${standIns.map((p) => p.name).join(', ')})`;
    issues.push({ path: `${path}.${particle.name}`, message });
  }
  if (!Object.hasOwn(value, '$attributes') && model.attributes?.some((a) => a.required)) {
    checkAttributes(model, {}, `${path}.$attributes`, owner, issues);
  }
}

/** A value without its `$type` (checked against the type it names). */
function withoutType(value: Record<string, unknown>): Record<string, unknown> {
  const { [typeKey]: _type, ...rest } = value;
  return rest;
}

/**
 * `$attributes` against the type's declared attributes: values against their types, required ones present, and no
 * unprefixed name the type does not declare (unless it has `anyAttribute`). Prefixed names (`xsi:type`, `p:x`) and
 * namespace declarations are the caller's own: their namespaces cannot be told from the name.
 */
function checkAttributes(model: ComplexModel, value: unknown, path: string, owner: string, issues: ValidationIssue[]): void {
  if (!isJsonObject(value)) return; // the writer reports a $attributes that is no object
  const declared = new Map((model.attributes ?? []).map((a) => [a.name, a]));
  for (const [name, item] of Object.entries(value)) {
    const attribute = declared.get(name);
    if (attribute) {
      if (item !== null && item !== undefined) checkSimple(attribute.model, item, `${path}.${name}`, issues);
    } else if (!name.includes(':') && name !== 'xmlns' && !model.anyAttribute) {
      issues.push({ path: `${path}.${name}`, message: `is not an attribute of ${owner}` });
    }
  }
  for (const attribute of model.attributes ?? []) {
    if (attribute.required && (value[attribute.name] === undefined || value[attribute.name] === null)) {
      issues.push({ path: `${path}.${attribute.name}`, message: 'is a required attribute' });
    }
  }
}

function checkParticle(particle: Particle, value: unknown, path: string, issues: ValidationIssue[]): void {
  if (value === null || value === undefined) {
    if (!particle.nillable && particle.required) issues.push({ path, message: 'is not nillable' });
    return;
  }
  const model: TypeModel = particle.model;
  if (model.kind === 'simple') checkSimple(model, value, path, issues);
  else checkComplex(model, value, path, model.type, issues);
}

function checkSimple(model: SimpleModel, value: unknown, path: string, issues: ValidationIssue[]): void {
  if (typeof value === 'object' && value !== null && !(Array.isArray(value) && model.list !== undefined)) {
    // A simple element may still carry attributes: { $value, $attributes }.
    if (isJsonObject(value) && Object.keys(value).every((k) => valueKeys.has(k))) {
      if (value.$value !== undefined) checkSimple(model, value.$value, `${path}.$value`, issues);
      return;
    }
    issues.push({ path, message: `must be a single ${model.type} value, not ${Array.isArray(value) ? 'a list' : 'an object'}` });
    return;
  }
  const problem = simpleProblem(model, value);
  if (problem !== undefined) issues.push({ path, message: problem });
}

/** What is wrong with a scalar (or, for a list type, a list of scalars) as a value of `model`, or undefined. */
function simpleProblem(model: SimpleModel, value: unknown): string | undefined {
  if (model.list !== undefined) return listProblem(model, model.list, value);
  if (Array.isArray(value)) return `must be a single ${model.type} value, not a list`;
  if (model.union !== undefined && model.union.length > 0) {
    if (model.union.every((member) => simpleProblem(member, value) !== undefined)) {
      return `must be a value of one of ${model.union.map((member) => member.type).join(', ')}`;
    }
  } else {
    const fits = lexicalChecks[model.builtin];
    if (fits && !fits(value)) return `must be ${article(model.builtin)} ${model.builtin} (${describe(model.builtin)})`;
  }
  if (model.enumeration && !model.enumeration.includes(String(value))) {
    const shown = model.enumeration.slice(0, 20).map((v) => JSON.stringify(v));
    return `must be one of ${shown.join(', ')}${model.enumeration.length > 20 ? `, … (${model.enumeration.length} values)` : ''}`;
  }
  return model.facets === undefined ? undefined : facetProblem(model.facets, model.builtin, String(value));
}

/** A list type's value: its items as a JSON list, or as one text separated by whitespace; each item checked. */
function listProblem(model: SimpleModel, item: SimpleModel, value: unknown): string | undefined {
  const items = Array.isArray(value) ? value : typeof value === 'string' ? value.split(/\s+/).filter(Boolean) : [value];
  for (const [i, one] of items.entries()) {
    if (typeof one === 'object' && one !== null) return `item ${i} must be a single ${item.type} value`;
    const problem = simpleProblem(item, one);
    if (problem !== undefined) return `item ${i} ${problem}`;
  }
  return model.facets === undefined ? undefined : facetProblem(model.facets, model.builtin, '', items.length);
}

function article(word: string): string {
  return /^[aeiou]/i.test(word) ? 'an' : 'a';
}

const integerText = /^[+-]?\d+$/;
const decimalText = /^[+-]?(\d+(\.\d*)?|\.\d+)$/;
const floatText = /^([+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?|[+-]?INF|NaN)$/;
const dateText = /^-?\d{4,}-\d{2}-\d{2}(Z|[+-]\d{2}:\d{2})?$/;
const dateTimeText = /^-?\d{4,}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})?$/;
const timeText = /^\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})?$/;
const durationText = /^-?P(?=\d|T\d)(\d+Y)?(\d+M)?(\d+D)?(T(?=\d)(\d+H)?(\d+M)?(\d+(\.\d+)?S)?)?$/;
const base64Text = /^[A-Za-z0-9+/\s]*={0,2}\s*$/;

/** An integer within [min, max], given as a JSON number or as its text (long values exceed a double). */
function integerIn(min: bigint, max: bigint) {
  // A safe integer (the usual JSON number) is compared as a number. A bound beyond the safe range rounds (or becomes
  // ±Infinity), but stays beyond it, so every safe integer is on the same side of it as of the bound itself.
  const low = Number(min);
  const high = Number(max);
  return (value: unknown): boolean => {
    let n: bigint;
    if (typeof value === 'number') {
      if (Number.isSafeInteger(value)) return value >= low && value <= high;
      if (!Number.isInteger(value)) return false;
      n = BigInt(value);
    } else if (typeof value === 'string' && integerText.test(value.trim())) {
      n = BigInt(value.trim());
    } else return false;
    return n >= min && n <= max;
  };
}

const unbounded = 10n ** 1000n;
const isText = (pattern: RegExp) => (value: unknown) => typeof value === 'string' && pattern.test(value.trim());
const isNumberOr = (pattern: RegExp) => (value: unknown) =>
  (typeof value === 'number' && Number.isFinite(value)) || isText(pattern)(value);

/** Whether a JSON value fits a built-in type's lexical space; types not listed take any scalar. */
const lexicalChecks: Record<string, (value: unknown) => boolean> = {
  boolean: (v) => typeof v === 'boolean' || (typeof v === 'string' && ['true', 'false', '1', '0'].includes(v.trim())),
  integer: integerIn(-unbounded, unbounded),
  long: integerIn(-(2n ** 63n), 2n ** 63n - 1n),
  int: integerIn(-(2n ** 31n), 2n ** 31n - 1n),
  short: integerIn(-32768n, 32767n),
  byte: integerIn(-128n, 127n),
  nonNegativeInteger: integerIn(0n, unbounded),
  positiveInteger: integerIn(1n, unbounded),
  nonPositiveInteger: integerIn(-unbounded, 0n),
  negativeInteger: integerIn(-unbounded, -1n),
  unsignedLong: integerIn(0n, 2n ** 64n - 1n),
  unsignedInt: integerIn(0n, 2n ** 32n - 1n),
  unsignedShort: integerIn(0n, 65535n),
  unsignedByte: integerIn(0n, 255n),
  decimal: isNumberOr(decimalText),
  float: isNumberOr(floatText),
  double: isNumberOr(floatText),
  date: isText(dateText),
  dateTime: isText(dateTimeText),
  time: isText(timeText),
  duration: isText(durationText),
  base64Binary: isText(base64Text),
  hexBinary: isText(/^([0-9a-fA-F]{2})*$/),
};

function describe(builtin: string): string {
  if (builtin === 'boolean') return 'true or false';
  if (builtin === 'date') return 'e.g. "2024-01-31"';
  if (builtin === 'dateTime') return 'e.g. "2024-01-31T12:00:00Z"';
  if (builtin === 'time') return 'e.g. "12:00:00"';
  if (builtin === 'duration') return 'e.g. "P1DT2H"';
  if (['decimal', 'float', 'double'].includes(builtin)) return 'a number';
  if (builtin.endsWith('Binary')) return 'encoded text';
  return 'a whole number in its range';
}
