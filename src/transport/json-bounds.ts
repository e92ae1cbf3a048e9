/**
 * Levels of nesting in one upstream JSON answer (docs/limits.md#upstreams). Each object or array is one level deeper than the
 * one holding it: `{}` and `[]` are depth 1, `{"a":[1]}` is depth 2, a bare scalar is depth 0.
 */
export const maxJsonDepth = 256;
/**
 * Objects and arrays in one upstream JSON answer. A 10 MiB answer of ordinary records holds a few hundred thousand;
 * V8 spends about a quarter of a microsecond on each nested empty array, so 10 MiB of `[[[]]],` held the event loop
 * for two seconds, parsed, extracted and serialised, where a million of them stay within a fraction of one.
 */
export const maxJsonContainers = 1_000_000;

/**
 * The bound of docs/limits.md#upstreams that JSON text exceeds, described for an error message ("nests objects and arrays deeper
 * than 256 levels"), or undefined. Decided in one forward pass before the text is parsed: V8's JSON.parse copes
 * with any depth but spends over a second on 10 MiB of `[[[…`, and what it returns would overflow the stack of every
 * recursive reader after it (JSON.stringify included). Strings are skipped whole, so brackets inside them do not
 * count. A character JSON cannot hold outside a string (an HTML page's `<`) ends the scan with undefined: text that
 * is not JSON is for JSON.parse to refuse, not a bound to report.
 *
 * @example jsonBoundExceeded(`${'['.repeat(257)}${']'.repeat(257)}`) // 'nests objects and arrays deeper than 256 levels'
 */
export function jsonBoundExceeded(text: string): string | undefined {
  let depth = 0;
  let containers = 0;
  for (let at = 0; at < text.length; at++) {
    const c = text.charCodeAt(at);
    if (c === 0x7b /* { */ || c === 0x5b /* [ */) {
      if (++depth > maxJsonDepth) return `nests objects and arrays deeper than ${maxJsonDepth} levels`;
      if (++containers > maxJsonContainers) return `holds more than ${maxJsonContainers} objects and arrays`;
    } else if (c === 0x7d /* } */ || c === 0x5d /* ] */) {
      depth--;
    } else if (c === 0x22 /* " */) {
      at = closingQuote(text, at + 1);
      if (at === -1) return undefined;
    } else if (c >= 0x80 || outsideStrings[c] === 0) {
      return undefined;
    }
  }
  return undefined;
}

/** Characters JSON allows outside strings besides brackets and quotes: whitespace, `,:`, numbers, true/false/null. */
const outsideStrings = new Uint8Array(0x80);
for (const c of ' \t\n\r,:0123456789+-.eEtrufalsn') outsideStrings[c.charCodeAt(0)] = 1;

/** The index of the quote that ends a string whose content starts at `from` (one preceded by an even run of backslashes). */
function closingQuote(text: string, from: number): number {
  for (let at = text.indexOf('"', from); at !== -1; at = text.indexOf('"', at + 1)) {
    let backslashes = 0;
    while (text.charCodeAt(at - 1 - backslashes) === 0x5c) backslashes++;
    if (backslashes % 2 === 0) return at;
  }
  return -1;
}
