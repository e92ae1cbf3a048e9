import { RE2JS } from 're2js';
import { maxPatternProgram, maxPatternSteps } from './facets.ts';

/**
 * The texts param-checks takes for XML Schema's built-in types, as JSON Schema patterns (ECMA-262, `u` flag): the
 * same regular expressions (param-checks.ts `lexicalChecks`, matched after `trim()`, whose white space is `\s`'s),
 * integers in a range as exactly the decimal texts of that range, and a facet's XSD pattern (RE2 text, facets.ts) in
 * JavaScript's syntax. Patterns are bodies, without anchors; `anchored` adds them.
 */

/** The time zone a date or dateTime may end with, which RFC 3339's `date-time` requires and `date` refuses. */
export const timeZone = '(?:Z|[+-]\\d{2}:\\d{2})';
/** A date and a dateTime without their time zone. */
export const dateBody = '-?\\d{4,}-\\d{2}-\\d{2}';
export const dateTimeBody = `${dateBody}T\\d{2}:\\d{2}:\\d{2}(?:\\.\\d+)?`;

/** The lexical forms of the built-ins param-checks checks (other than the integers), as param-checks writes them. */
export const lexicalBodies: Readonly<Record<string, string>> = {
  boolean: 'true|false|1|0',
  decimal: '[+-]?(?:\\d+(?:\\.\\d*)?|\\.\\d+)',
  float: '[+-]?(?:\\d+(?:\\.\\d*)?|\\.\\d+)(?:[eE][+-]?\\d+)?|[+-]?INF|NaN',
  double: '[+-]?(?:\\d+(?:\\.\\d*)?|\\.\\d+)(?:[eE][+-]?\\d+)?|[+-]?INF|NaN',
  date: `${dateBody}${timeZone}?`,
  dateTime: `${dateTimeBody}${timeZone}?`,
  time: `\\d{2}:\\d{2}:\\d{2}(?:\\.\\d+)?${timeZone}?`,
  duration: '-?P(?=\\d|T\\d)(?:\\d+Y)?(?:\\d+M)?(?:\\d+D)?(?:T(?=\\d)(?:\\d+H)?(?:\\d+M)?(?:\\d+(?:\\.\\d+)?S)?)?',
  base64Binary: '[A-Za-z0-9+/\\s]*={0,2}',
  hexBinary: '(?:[0-9a-fA-F]{2})*',
};

/** A body matched whole, with the white space `trim()` removes around it. */
export function anchored(body: string, trimmed = true): string {
  return trimmed ? `^\\s*(?:${body})\\s*$` : `^(?:${body})$`;
}

/**
 * The decimal texts of the integers in [lo, hi] (either end open when undefined) as param-checks reads them (`+` or
 * `-`, leading zeros: `-007`, `+0`), or undefined when the range is empty. Exact, as BigInt compares them.
 *
 * @example integerTextPattern(0n, 255n) // '\\+?0*(?:[1-9]|[1-9]\\d|(?:1\\d{2}|2(?:[0-4]\\d|5[0-5])))|-0+|…'
 */
export function integerTextPattern(lo: bigint | undefined, hi: bigint | undefined): string | undefined {
  if (lo !== undefined && hi !== undefined && lo > hi) return undefined;
  const parts: string[] = [];
  const positiveFrom = lo === undefined || lo < 1n ? 1n : lo;
  if (hi === undefined || hi >= positiveFrom) parts.push(`\\+?0*(?:${magnitudes(positiveFrom, hi)})`);
  const negativeFrom = hi === undefined || hi > -1n ? 1n : -hi;
  if (lo === undefined || -lo >= negativeFrom) {
    parts.push(`-0*(?:${magnitudes(negativeFrom, lo === undefined ? undefined : -lo)})`);
  }
  if ((lo === undefined || lo <= 0n) && (hi === undefined || hi >= 0n)) parts.push('[+-]?0+');
  return parts.join('|');
}

/** The texts without leading zeros of the whole numbers in [a, b], 1 ≤ a (b undefined: no end), as alternatives. */
function magnitudes(a: bigint, b: bigint | undefined): string {
  const low = a.toString();
  const nines = (n: number) => '9'.repeat(n);
  if (b === undefined) return `${sameLength(low, nines(low.length))}|[1-9]\\d{${low.length},}`;
  const high = b.toString();
  if (low.length === high.length) return sameLength(low, high);
  const parts = [sameLength(low, nines(low.length))];
  if (high.length - low.length > 1) parts.push(`[1-9]\\d{${low.length},${high.length - 2}}`);
  parts.push(sameLength(`1${'0'.repeat(high.length - 1)}`, high));
  return parts.join('|');
}

/** The digit strings of one length from `low` to `high` (leading zeros counted as digits), as one group. */
function sameLength(low: string, high: string): string {
  if (low === high) return literal(low);
  let common = 0;
  while (low[common] === high[common]) common++;
  const x = Number(low[common]);
  const y = Number(high[common]);
  const lowRest = low.slice(common + 1);
  const highRest = high.slice(common + 1);
  const rest = lowRest.length;
  const fromZero = /^0*$/.test(lowRest);
  const toNine = /^9*$/.test(highRest);
  const parts: string[] = [];
  if (!fromZero) parts.push(`${x}${sameLength(lowRest, '9'.repeat(rest))}`);
  const first = fromZero ? x : x + 1;
  const last = toNine ? y : y - 1;
  if (first <= last) parts.push(`${first === last ? first : `[${first}-${last}]`}${digits(rest)}`);
  if (!toNine) parts.push(`${y}${sameLength('0'.repeat(rest), highRest)}`);
  const group = parts.length === 1 ? parts[0] : `(?:${parts.join('|')})`;
  return literal(low.slice(0, common)) + group;
}

const digits = (n: number) => (n === 0 ? '' : n === 1 ? '\\d' : `\\d{${n}}`);
/** Digits as written, runs of one digit shortened (`10{1000}`). */
const literal = (text: string) => text.replace(/(\d)\1{3,}/g, (run, digit) => `${digit}{${run.length}}`);

/**
 * The texts of base64Binary whose decoded length (as facets.ts counts it: 3 bytes per 4 characters, less the padding)
 * is within [min, max] bytes, white space anywhere: exactly what the lexical check and the length facets take.
 */
export function base64LengthPattern(min: number | undefined, max: number | undefined): string | undefined {
  // Characters before the padding: `=` alone counts -1 byte, as facets.ts counts it.
  const bytes = (characters: number, padding: number) => Math.floor(((characters + padding) * 3) / 4) - padding;
  const parts: string[] = [];
  for (const padding of [0, 1, 2]) {
    // bytes() grows by 3 every 4 characters: start a few below where it reaches the bound, then step.
    const near = (n: number) => Math.max(0, Math.floor((4 * (n + padding)) / 3) - padding - 4);
    let from = 0;
    if (min !== undefined && min < maxQuantifier) for (from = near(min); bytes(from, padding) < min; ) from++;
    let to: number | undefined;
    if (max !== undefined && max < maxQuantifier) {
      if (bytes(from, padding) > max) continue;
      to = Math.max(from, near(max));
      while (bytes(to + 1, padding) <= max) to++;
    }
    parts.push(`(?:[A-Za-z0-9+/]\\s*){${from},${to ?? ''}}${'='.repeat(padding)}`);
  }
  return parts.length === 0 ? undefined : parts.join('|');
}

/** A length beyond this is taken as no bound (a quantifier's count must stay within what a JavaScript engine takes). */
export const maxQuantifier = 1_000_000;

/**
 * A facet pattern (RE2 text, as facets.ts keeps it) in JavaScript's syntax, and the longest text (in UTF-16 code
 * units) param-checks matches it against (facets.ts `maxPatternSteps`: a longer text is not checked); undefined when
 * param-checks never applies it (it does not compile, or is too large) or JavaScript cannot say it.
 */
export function facetPattern(re2: string): { pattern: string; longest: number } | undefined {
  let size: number;
  try {
    size = RE2JS.compile(re2).programSize();
  } catch {
    return undefined;
  }
  if (size > maxPatternProgram) return undefined;
  let js = '';
  for (let at = 0; at < re2.length; at++) {
    const c = re2[at];
    if (c !== '\\') {
      js += c;
      continue;
    }
    const next = re2[++at];
    const hex = next === 'x' ? /^\{([0-9a-fA-F]+)\}/.exec(re2.slice(at + 1)) : null;
    if (hex) {
      js += `\\u{${hex[1]}}`;
      at += hex[0].length;
    } else {
      // `\-` is no escape JavaScript takes outside a class (the translator writes classes as ranges).
      js += next === '-' ? '\\x2d' : `\\${next}`;
    }
  }
  const pattern = anchored(js, false);
  try {
    new RegExp(pattern, 'u');
  } catch {
    return undefined;
  }
  return { pattern, longest: Math.floor(maxPatternSteps / size) };
}

/**
 * The decimal texts whose digits fit `totalDigits` and `fractionDigits` as facets.ts counts them: leading zeros of the
 * whole part and trailing zeros of the fraction do not count.
 */
export function decimalDigits(total: number | undefined, fraction: number | undefined): string {
  const fractionPart = (k: number | undefined) =>
    k === undefined ? '(?:\\.\\d*)?' : k === 0 ? '(?:\\.0*)?' : `(?:\\.(?:\\d{0,${k - 1}}[1-9])?0*)?`;
  const wholePart = (w: number) => (w === 0 ? '' : `[1-9]\\d{${w - 1}}`);
  if (total === undefined) return `[+-]?0*(?:[1-9]\\d*)?${fractionPart(fraction)}`;
  const options: string[] = [];
  for (let w = 0; w <= Math.min(total, 400); w++) {
    options.push(`${wholePart(w)}${fractionPart(Math.min(fraction ?? total, total - w))}`);
  }
  return `[+-]?0*(?:${options.join('|')})`;
}
