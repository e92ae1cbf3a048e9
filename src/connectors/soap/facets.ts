import { RE2JS } from 're2js';
import { xsdNamespaces } from './namespaces.ts';
import type { XmlElement } from './xml-tree.ts';
import { xsdToRe2 } from './xsd-regex.ts';

/**
 * The constraining facets of a simple type's restrictions (XML Schema 2, §4.3), as WSDL mode checks params against
 * them before sending. A type restricted in several steps keeps every step's facets: the narrower bound holds, and a
 * value must match a pattern of every step (the patterns of one step are alternatives).
 */
export interface Facets {
  /**
   * Each step's patterns in RE2's syntax (xsd-regex.ts), matched whole by a linear-time engine; one of each step must
   * match. Text, not compiled objects, so that a model can be copied to a worker thread.
   */
  patterns?: string[][];
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
 * The facets of one `xs:restriction`, on top of those its base type has. A pattern RE2 cannot express (xsdToRe2) or
 * longer than `maxPatternSource` is left out, and one that does not compile within `maxPatternProgram` is never
 * applied: a value is never refused for it.
 *
 * @example readFacets(restriction, undefined) // { maxLength: 8, patterns: [['(?:[\\x{41}-\\x{5a}]+)']] }
 */
export function readFacets(restriction: XmlElement, base: Facets | undefined): Facets | undefined {
  const facets: Facets = { ...base };
  const patterns: string[] = [];
  const texts: string[] = [];
  let own = false;
  for (const child of restriction.children) {
    if (!xsdNamespaces.has(child.ns)) continue;
    const value = child.attributes.value;
    if (value === undefined) continue;
    if (child.local === 'pattern') {
      const pattern = checkablePattern(value);
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

/** The longest pattern source compiled: RE2 compiles in time linear in it, and a WSDL may hold many. */
export const maxPatternSource = 1000;
/** The largest compiled program kept (re2js's programSize): beyond it, the pattern is not checked. */
export const maxPatternProgram = 5000;
/**
 * The most matching work one value's check may take, as program size × text length: the engine's steps are linear in
 * both, and about a million of them is a few tens of milliseconds. A longer value is not checked against that pattern.
 */
export const maxPatternSteps = 1_000_000;

/** Compiled patterns by RE2 source, shared by every model: a WSDL's patterns compile once per process. */
class CompiledPatterns {
  readonly name = 'xsd-patterns';
  readonly #max: number;
  readonly #entries = new Map<string, RE2JS | null>();

  constructor(max: number) {
    this.#max = max;
  }

  /** The compiled pattern, or null when it does not compile or is too large. */
  get(source: string): RE2JS | null {
    let compiled = this.#entries.get(source);
    if (compiled === undefined) {
      try {
        compiled = RE2JS.compile(source);
        if (compiled.programSize() > maxPatternProgram) compiled = null;
      } catch {
        compiled = null;
      }
      if (this.#entries.size >= this.#max) this.#entries.delete(this.#entries.keys().next().value as string);
      this.#entries.set(source, compiled);
    }
    return compiled;
  }
}

const compiledPatterns = new CompiledPatterns(10_000);

/**
 * An XSD pattern as RE2 text, or undefined when it is not to be checked (too long, or not expressible). It is compiled
 * when a value is first checked against it, not when the WSDL is read: a WSDL may declare thousands of patterns its
 * calls never use, and compiling all of them would hold the event loop while it loads.
 */
function checkablePattern(xsd: string): string | undefined {
  return xsd.length > maxPatternSource ? undefined : xsdToRe2(xsd);
}

/**
 * Whether `text` matches `source` whole; undefined when the check would cost more than maxPatternSteps (not made).
 * Linear in the text: no pattern a WSDL holds can make it take longer.
 */
function patternMatches(source: string, text: string): boolean | undefined {
  const compiled = compiledPatterns.get(source);
  if (compiled === null || compiled.programSize() * Math.max(text.length, 1) > maxPatternSteps) return undefined;
  return compiled.matches(text);
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
  if (items === undefined && facets.patterns) {
    for (const [i, step] of facets.patterns.entries()) {
      const results = step.map((pattern) => patternMatches(pattern, text));
      // A step is failed only when every pattern of it was checked and none matched.
      if (results.every((matched) => matched === false)) {
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
