/**
 * XML Schema's regular expressions (XML Schema 2, Appendix F) in RE2's syntax, for a linear-time engine (re2js): a
 * WSDL is the upstream's to write, so its patterns are never given to a backtracking matcher.
 *
 * - Matching is of the whole value (XSD patterns are implicitly anchored; `^` and `$` are plain characters).
 * - `.` is any character but `\n` and `\r`; `\s` is space, tab, `\n` and `\r` only; `\d` is `\p{Nd}`; `\w` is every
 *   character outside the categories P, Z and C.
 * - `\i` and `\c` are XML 1.0's NameStartChar and NameChar (fifth edition), as code point ranges.
 * - Character class subtraction (`[a-z-[aeiou]]`) is worked out into ranges.
 * - What RE2 cannot express is not translated (undefined; the facet is then not checked): a subtraction involving
 *   a category (`[\p{L}-[a]]`), `\w` within a negated class, Unicode blocks (`\p{IsBasicLatin}`), malformed patterns.
 *
 * @example xsdToRe2('[A-Z]{2}\\d+') // '[\\x{41}-\\x{5a}]{2}\\p{Nd}+'
 */
export function xsdToRe2(xsd: string): string | undefined {
  try {
    return new Translator(xsd).pattern();
  } catch (error) {
    if (error instanceof Untranslatable) return undefined;
    throw error;
  }
}

class Untranslatable extends Error {}

type Range = readonly [number, number];

/** A set of characters: code point ranges, Unicode categories in or out, and `\w` (which no one class can say). */
interface CharSet {
  ranges: Range[];
  /** `\p{X}` and `\P{X}` as RE2 writes them. */
  properties: string[];
  word: boolean;
}

const maxCodePoint = 0x10ffff;

/** XML 1.0 (fifth edition) NameStartChar. */
const nameStart: Range[] = [
  [0x3a, 0x3a],
  [0x41, 0x5a],
  [0x5f, 0x5f],
  [0x61, 0x7a],
  [0xc0, 0xd6],
  [0xd8, 0xf6],
  [0xf8, 0x2ff],
  [0x370, 0x37d],
  [0x37f, 0x1fff],
  [0x200c, 0x200d],
  [0x2070, 0x218f],
  [0x2c00, 0x2fef],
  [0x3001, 0xd7ff],
  [0xf900, 0xfdcf],
  [0xfdf0, 0xfffd],
  [0x10000, 0xeffff],
];
/** XML 1.0 (fifth edition) NameChar. */
const nameChar: Range[] = normalize([...nameStart, [0x2d, 0x2e], [0x30, 0x39], [0xb7, 0xb7], [0x300, 0x36f], [0x203f, 0x2040]]);
const xsdSpace: Range[] = [
  [0x09, 0x0a],
  [0x0d, 0x0d],
  [0x20, 0x20],
];

/** Ranges sorted and merged. */
function normalize(ranges: readonly Range[]): Range[] {
  const sorted = [...ranges].sort((a, b) => a[0] - b[0]);
  const merged: Array<[number, number]> = [];
  for (const [lo, hi] of sorted) {
    const last = merged.at(-1);
    if (last && lo <= last[1] + 1) last[1] = Math.max(last[1], hi);
    else merged.push([lo, hi]);
  }
  return merged;
}

function complement(ranges: readonly Range[]): Range[] {
  const out: Range[] = [];
  let next = 0;
  for (const [lo, hi] of normalize(ranges)) {
    if (lo > next) out.push([next, lo - 1]);
    next = hi + 1;
  }
  if (next <= maxCodePoint) out.push([next, maxCodePoint]);
  return out;
}

function subtract(from: readonly Range[], minus: readonly Range[]): Range[] {
  return normalize(from).flatMap(([lo, hi]) => {
    let pieces: Range[] = [[lo, hi]];
    for (const [mlo, mhi] of minus) {
      pieces = pieces.flatMap(([plo, phi]): Range[] => {
        if (mhi < plo || mlo > phi) return [[plo, phi]];
        return [...(mlo > plo ? [[plo, mlo - 1] as Range] : []), ...(mhi < phi ? [[mhi + 1, phi] as Range] : [])];
      });
    }
    return pieces;
  });
}

const hex = (cp: number) => `\\x{${cp.toString(16)}}`;

function rangesText(ranges: readonly Range[]): string {
  return normalize(ranges)
    .map(([lo, hi]) => (lo === hi ? hex(lo) : `${hex(lo)}-${hex(hi)}`))
    .join('');
}

/** A class in RE2: ranges and categories in one `[…]`, `\w` beside it as an alternative. */
function setText(set: CharSet, negated: boolean): string {
  const inside = rangesText(set.ranges) + set.properties.join('');
  if (negated) {
    if (set.word) throw new Untranslatable();
    return inside === '' ? '[\\x{0}-\\x{10ffff}]' : `[^${inside}]`;
  }
  const word = '[^\\p{P}\\p{Z}\\p{C}]';
  if (!set.word) return inside === '' ? '[^\\x{0}-\\x{10ffff}]' : `[${inside}]`;
  return inside === '' ? word : `(?:[${inside}]|${word})`;
}

/** Category names RE2 knows that XSD writes the same way (general categories); blocks (`IsXxx`) are not among them. */
const category = /^(?:L[ultmo]?|M[nce]?|N[dlo]?|P[cdseifo]?|Z[slp]?|S[mcko]?|C[cfon]?)$/;

class Translator {
  readonly #source: string;
  #at = 0;

  constructor(source: string) {
    this.#source = source;
  }

  pattern(): string {
    let out = '';
    let depth = 0;
    while (this.#at < this.#source.length) {
      const c = this.#take();
      if (c === '\\') out += this.#escapeOutside();
      else if (c === '[') out += this.#classExpression();
      else if (c === '.') out += '[^\\n\\r]';
      else if (c === '^' || c === '$') out += `\\${c}`;
      else if (c === '(') {
        depth++;
        out += '(?:';
      } else if (c === ')') {
        if (--depth < 0) throw new Untranslatable();
        out += ')';
      } else if (c === ']') throw new Untranslatable();
      else out += c;
    }
    if (depth !== 0) throw new Untranslatable();
    return out;
  }

  #take(): string {
    const cp = this.#source.codePointAt(this.#at);
    if (cp === undefined) throw new Untranslatable();
    const c = String.fromCodePoint(cp);
    this.#at += c.length;
    return c;
  }

  #peek(): string | undefined {
    const cp = this.#source.codePointAt(this.#at);
    return cp === undefined ? undefined : String.fromCodePoint(cp);
  }

  /** An escape outside a class, as RE2 writes it. */
  #escapeOutside(): string {
    const set = this.#escapeSet();
    if (set === undefined) return `\\${this.#source[this.#at - 1]}`;
    return setText(set, false);
  }

  /**
   * The escape just read (after `\`) as a character set, or undefined for a single-character escape whose character
   * was consumed (the caller writes it escaped).
   */
  #escapeSet(): CharSet | undefined {
    const c = this.#take();
    const set = (ranges: Range[], properties: string[] = [], word = false): CharSet => ({ ranges, properties, word });
    switch (c) {
      case 'd':
        return set([], ['\\p{Nd}']);
      case 'D':
        return set([], ['\\P{Nd}']);
      case 's':
        return set(xsdSpace);
      case 'S':
        return set(complement(xsdSpace));
      case 'i':
        return set(nameStart);
      case 'I':
        return set(complement(nameStart));
      case 'c':
        return set(nameChar);
      case 'C':
        return set(complement(nameChar));
      case 'w':
        return set([], [], true);
      case 'W':
        return set([], ['\\p{P}', '\\p{Z}', '\\p{C}']);
      case 'p':
      case 'P':
        return set([], [this.#property(c)]);
      case 'n':
      case 'r':
      case 't':
      case '\\':
      case '|':
      case '.':
      case '-':
      case '^':
      case '?':
      case '*':
      case '+':
      case '{':
      case '}':
      case '(':
      case ')':
      case '[':
      case ']':
        return undefined;
      default:
        throw new Untranslatable();
    }
  }

  #property(kind: string): string {
    if (this.#take() !== '{') throw new Untranslatable();
    const end = this.#source.indexOf('}', this.#at);
    if (end < 0) throw new Untranslatable();
    const name = this.#source.slice(this.#at, end);
    this.#at = end + 1;
    if (!category.test(name)) throw new Untranslatable();
    return `\\${kind}{${name}}`;
  }

  /** A character class after its `[`, with a subtraction if it has one, as RE2 text. */
  #classExpression(): string {
    const { set, negated } = this.#classBody();
    return setText(set, negated);
  }

  /** `[^…]` or `[…]`, with `-[…]` subtraction, up to and including its `]`. */
  #classBody(): { set: CharSet; negated: boolean } {
    const negated = this.#peek() === '^';
    if (negated) this.#at++;
    const set: CharSet = { ranges: [], properties: [], word: false };
    let first = true;
    for (;;) {
      const c = this.#take();
      if (c === ']' && !first) return { set, negated };
      if (c === '-' && this.#peek() === '[') {
        this.#at++;
        const minus = this.#classBody();
        if (this.#take() !== ']') throw new Untranslatable();
        if (set.properties.length > 0 || set.word || minus.set.properties.length > 0 || minus.set.word) {
          throw new Untranslatable();
        }
        const removed = minus.negated ? complement(minus.set.ranges) : minus.set.ranges;
        const base = negated ? complement(set.ranges) : set.ranges;
        return { set: { ranges: subtract(base, removed), properties: [], word: false }, negated: false };
      }
      first = false;
      let lo: number;
      if (c === '\\') {
        const escaped = this.#escapeSet();
        if (escaped) {
          set.ranges.push(...escaped.ranges);
          set.properties.push(...escaped.properties);
          set.word ||= escaped.word;
          continue;
        }
        lo = this.#source.codePointAt(this.#at - 1) as number;
        lo = { n: 0x0a, r: 0x0d, t: 0x09 }[String.fromCodePoint(lo)] ?? lo;
      } else if (c === '[') {
        throw new Untranslatable();
      } else {
        lo = c.codePointAt(0) as number;
      }
      // A range `a-z`: a `-` followed by neither `]` nor `[`.
      if (this.#peek() === '-' && this.#source[this.#at + 1] !== ']' && this.#source[this.#at + 1] !== '[') {
        this.#at++;
        let h = this.#take();
        let hi: number;
        if (h === '\\') {
          h = this.#take();
          hi = { n: 0x0a, r: 0x0d, t: 0x09 }[h] ?? (h.codePointAt(0) as number);
          if (/[dDsSiIcCwWpP]/.test(h)) throw new Untranslatable();
        } else {
          hi = h.codePointAt(0) as number;
        }
        if (hi < lo) throw new Untranslatable();
        set.ranges.push([lo, hi]);
      } else {
        set.ranges.push([lo, lo]);
      }
    }
  }
}
