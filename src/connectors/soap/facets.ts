import { xsdNamespaces } from './namespaces.ts';
import type { XmlElement } from './xml-reader.ts';

/**
 * The constraining facets of a simple type's restrictions (XML Schema 2, §4.3), as WSDL mode checks params against
 * them before sending. A type restricted in several steps keeps every step's facets: the narrower bound holds, and a
 * value must match a pattern of every step (the patterns of one step are alternatives).
 */
export interface Facets {
  /** Each step's patterns, as JavaScript regular expressions anchored at both ends; one of each must match. */
  patterns?: RegExp[][];
  /** Each step's patterns as written, for messages. */
  patternTexts?: string[][];
  length?: number;
  minLength?: number;
  maxLength?: number;
  minInclusive?: number;
  maxInclusive?: number;
  minExclusive?: number;
  maxExclusive?: number;
  totalDigits?: number;
  fractionDigits?: number;
}

const numeric = ['length', 'minLength', 'maxLength', 'totalDigits', 'fractionDigits'] as const;
const bounds = ['minInclusive', 'maxInclusive', 'minExclusive', 'maxExclusive'] as const;

/**
 * The facets of one `xs:restriction`, on top of those its base type has. A pattern JavaScript cannot express (the
 * character class subtraction `[a-z-[aeiou]]`, `\i` and `\c`) is left out: a value is never refused for it.
 *
 * @example readFacets(restriction, undefined) // { maxLength: 8, patterns: [[/^(?:[A-Z]+[0-9]*)$/u]] }
 */
export function readFacets(restriction: XmlElement, base: Facets | undefined): Facets | undefined {
  const facets: Facets = { ...base };
  const patterns: RegExp[] = [];
  const texts: string[] = [];
  let own = false;
  for (const child of restriction.children) {
    if (!xsdNamespaces.has(child.ns)) continue;
    const value = child.attributes.value;
    if (value === undefined) continue;
    if (child.local === 'pattern') {
      const pattern = javascriptPattern(value);
      if (pattern !== undefined) {
        patterns.push(pattern);
        texts.push(value);
      }
    } else if ((numeric as readonly string[]).includes(child.local) || (bounds as readonly string[]).includes(child.local)) {
      const n = Number(value.trim());
      if (!Number.isFinite(n)) continue;
      const name = child.local as (typeof numeric)[number] | (typeof bounds)[number];
      facets[name] = narrower(name, facets[name], n);
      own = true;
    }
  }
  if (patterns.length > 0) {
    facets.patterns = [...(base?.patterns ?? []), patterns];
    facets.patternTexts = [...(base?.patternTexts ?? []), texts];
    own = true;
  }
  return own || base !== undefined ? facets : undefined;
}

/** Of a facet given by a base and by its restriction, the one that holds: the narrower. */
function narrower(name: string, base: number | undefined, own: number): number {
  if (base === undefined) return own;
  return name.startsWith('min') ? Math.max(base, own) : name === 'length' ? own : Math.min(base, own);
}

/**
 * An XML Schema regular expression (XML Schema 2, Appendix F) as a JavaScript one: implicitly anchored, `\d`, `\w`
 * and `\s` as Unicode classes, and undefined for what JavaScript cannot express.
 */
function javascriptPattern(xsd: string): RegExp | undefined {
  if (/\\[iIcC]/.test(xsd) || /-\[/.test(xsd) || mayBacktrackBadly(xsd)) return undefined;
  const translated = xsd
    .replace(/\\d/g, '\\p{Nd}')
    .replace(/\\w/g, '[^\\p{P}\\p{Z}\\p{C}]')
    .replace(/\\W/g, '[\\p{P}\\p{Z}\\p{C}]');
  try {
    return new RegExp(`^(?:${translated})$`, 'u');
  } catch {
    return undefined;
  }
}

/** The longest text checked against a pattern: with at most two unbounded repeats, matching stays near 4 million steps. */
export const maxPatternText = 2000;

/**
 * Whether a pattern could make JavaScript's backtracking matcher take time out of proportion to the text (a WSDL
 * is the upstream's to write, and a check must not hold the event loop): a repeated group that itself repeats or
 * alternates (`(a+)+`, `(a|a)*`: exponential), or more than two unbounded repeats (`\d*\d*\d*`: a high power).
 * Such patterns are not checked.
 */
function mayBacktrackBadly(source: string): boolean {
  const groups: boolean[] = [];
  let unbounded = 0;
  let inClass = false;
  for (let i = 0; i < source.length; i++) {
    const c = source[i];
    if (c === '\\') {
      i++;
      continue;
    }
    if (inClass) {
      if (c === ']') inClass = false;
      continue;
    }
    const next = source[i + 1];
    const repeatsNext = next === '*' || next === '+' || (next === '{' && /^\{\d+,\d*\}/.test(source.slice(i + 1)));
    if (c === '[') inClass = true;
    else if (c === '(') groups.push(false);
    else if (c === ')') {
      const inner = groups.pop() ?? false;
      if (inner && repeatsNext) return true;
      if (inner && groups.length > 0) groups[groups.length - 1] = true;
    } else if (c === '*' || c === '+' || c === '|' || (c === '{' && /^\{\d+,\d*\}/.test(source.slice(i)))) {
      if (groups.length > 0) groups[groups.length - 1] = true;
      if (c !== '|' && !(c === '{' && /^\{\d+,\d+\}/.test(source.slice(i)))) unbounded++;
    }
  }
  return unbounded > 2;
}

/**
 * What is wrong with a value's text against facets (a message), or undefined when it fits. `builtin` tells how
 * length counts (octets for binary types, characters otherwise) and whether bounds and digits apply (numbers only);
 * `items`: the number of items of a list type, which its length facets count instead.
 *
 * @example facetProblem({ maxLength: 3 }, 'string', 'abcd') // 'must be at most 3 characters long (maxLength)'
 */
export function facetProblem(facets: Facets, builtin: string, text: string, items?: number): string | undefined {
  const unit = items !== undefined ? 'items' : builtin.endsWith('Binary') ? 'bytes' : 'characters';
  const size = items ?? lengthOf(builtin, text);
  if (facets.length !== undefined && size !== facets.length) return `must be exactly ${facets.length} ${unit} long (length)`;
  if (facets.minLength !== undefined && size < facets.minLength) {
    return `must be at least ${facets.minLength} ${unit} long (minLength)`;
  }
  if (facets.maxLength !== undefined && size > facets.maxLength) {
    return `must be at most ${facets.maxLength} ${unit} long (maxLength)`;
  }
  if (items === undefined && facets.patterns && text.length <= maxPatternText) {
    for (const [i, step] of facets.patterns.entries()) {
      if (!step.some((pattern) => pattern.test(text))) {
        return `must match the pattern ${facets.patternTexts?.[i]?.join(' or ') ?? ''} (pattern)`;
      }
    }
  }
  const n = Number(text.trim());
  if (items !== undefined || text.trim() === '' || !Number.isFinite(n)) return undefined;
  if (facets.minInclusive !== undefined && n < facets.minInclusive)
    return `must be at least ${facets.minInclusive} (minInclusive)`;
  if (facets.maxInclusive !== undefined && n > facets.maxInclusive)
    return `must be at most ${facets.maxInclusive} (maxInclusive)`;
  if (facets.minExclusive !== undefined && n <= facets.minExclusive) {
    return `must be greater than ${facets.minExclusive} (minExclusive)`;
  }
  if (facets.maxExclusive !== undefined && n >= facets.maxExclusive) {
    return `must be less than ${facets.maxExclusive} (maxExclusive)`;
  }
  const digits = /^[+-]?0*(\d*?)(?:\.(\d*?)0*)?$/.exec(text.trim());
  if (digits) {
    const [, whole, fraction = ''] = digits;
    if (facets.totalDigits !== undefined && whole.length + fraction.length > facets.totalDigits) {
      return `must have at most ${facets.totalDigits} digits (totalDigits)`;
    }
    if (facets.fractionDigits !== undefined && fraction.length > facets.fractionDigits) {
      return `must have at most ${facets.fractionDigits} digits after the point (fractionDigits)`;
    }
  }
  return undefined;
}

/** A value's length as XML Schema counts it: octets for hexBinary and base64Binary, characters (code points) else. */
function lengthOf(builtin: string, text: string): number {
  if (builtin === 'hexBinary') return Math.floor(text.trim().length / 2);
  if (builtin === 'base64Binary') {
    const compact = text.replace(/\s/g, '');
    return Math.floor((compact.length * 3) / 4) - (compact.endsWith('==') ? 2 : compact.endsWith('=') ? 1 : 0);
  }
  let count = 0;
  for (const _ of text) count++;
  return count;
}
