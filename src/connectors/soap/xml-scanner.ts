import { ApiError } from '../../core/errors.ts';
import { xmlNamespace } from './namespaces.ts';

/**
 * The scanning both XML readers share (`readXml` in xml-reader.ts, `readXmlTree` in xml-tree.ts): tags, attributes,
 * XML names, line ends and references, and the error for a document that is not well-formed.
 */

/** The namespace prefixes in scope at the root: only `xml`, which is always bound. */
export const rootScope: ReadonlyMap<string, string> = new Map([['xml', xmlNamespace]]);

/** Where `closer` ends the construct begun before `from` (a comment, a CDATA section, a processing instruction). */
export function closedAt(text: string, from: number, closer: string, what: string, fail: (reason: string) => never): number {
  const close = text.indexOf(closer, from);
  if (close === -1) fail(`${what} is not closed`);
  return close;
}

/**
 * Reads the end tag at `open`, which must close the element `expected` (as written), and returns the index after it;
 * an end tag with no element open, another name, or no `>` fails with the reason. Both readers' one way to end an
 * element.
 */
export function scanEndTag(
  text: string,
  open: number,
  expected: string | undefined,
  fail: (reason: string, where?: number) => never,
): number {
  const nameEnd = nameEndAt(text, open + 2);
  if (nameEnd === -1) fail('an end tag without a valid name');
  if (expected === undefined || nameEnd - open - 2 !== expected.length || !text.startsWith(expected, open + 2)) {
    const found = text.slice(open + 2, nameEnd);
    fail(expected === undefined ? `the end tag </${found}> closes no element` : `expected </${expected}> but found </${found}>`);
  }
  const at = skipSpace(text, nameEnd);
  if (text.charCodeAt(at) !== 0x3e /* > */) fail('an end tag is not closed by >', at);
  return at + 1;
}

/** The attribute `scanAttribute` read last: its name and its value, both as written. */
export const scanned = { name: '', raw: '' };

/**
 * Reads the attribute of the tag `<tag …>` that starts at `at` (`name="value"` or with single quotes), after the
 * whitespace that began at `spaceFrom`, into `scanned`, and returns the index after it. Both readers' one way to read
 * an attribute: a tag that ends there, no whitespace before the name, a name that is no XML name, a missing `=`, an
 * unquoted or unclosed value fail with the reason. A shared object rather than a new one per attribute keeps a 10 MiB
 * answer's millions of attributes from costing an allocation each.
 */
export function scanAttribute(
  text: string,
  tag: string,
  spaceFrom: number,
  at: number,
  fail: (reason: string, where?: number) => never,
): number {
  if (at >= text.length) fail(`the tag <${tag}> is not closed`);
  if (at === spaceFrom) fail(`the tag <${tag}> needs whitespace before each attribute`, at);
  const nameEnd = nameEndAt(text, at);
  if (nameEnd === -1) fail(`the tag <${tag}> has an attribute without a valid name`, at);
  const name = text.slice(at, nameEnd);
  let pos = skipSpace(text, nameEnd);
  if (text.charCodeAt(pos) !== 0x3d /* = */) fail(`the attribute '${name}' has no value`, at);
  pos = skipSpace(text, pos + 1);
  const quote = text.charCodeAt(pos);
  if (quote !== 0x22 && quote !== 0x27) fail(`the value of the attribute '${name}' is not quoted`, pos);
  const close = text.indexOf(text[pos], pos + 1);
  if (close === -1) fail(`the value of the attribute '${name}' is not closed`, pos);
  scanned.name = name;
  scanned.raw = text.slice(pos + 1, close);
  return close + 1;
}

/** ASCII name characters: 1 may start a name (letters, `_`, `:`), 2 may only follow (digits, `-`, `.`). */
const asciiName = new Uint8Array(0x80);
for (let c = 0; c < 0x80; c++) {
  const ch = String.fromCharCode(c);
  if (/[A-Za-z_:]/.test(ch)) asciiName[c] = 1;
  else if (/[0-9.-]/.test(ch)) asciiName[c] = 2;
}

// The XML Name production as fast-xml-parser checked it (BMP only), for names with a non-ASCII character. Sticky: it
// matches at lastIndex or not at all, and a run of one character class cannot backtrack into anything slow.
const nameStart =
  ':A-Za-z_\\u00C0-\\u00D6\\u00D8-\\u00F6\\u00F8-\\u02FF\\u0370-\\u037D\\u037F-\\u1FFF\\u200C-\\u200D\\u2070-\\u218F\\u2C00-\\u2FEF\\u3001-\\uD7FF\\uF900-\\uFDCF\\uFDF0-\\uFFFD';
const xmlName = new RegExp(`[${nameStart}][${nameStart}\\-.0-9\\u00B7\\u0300-\\u036F\\u203F-\\u2040]*`, 'y');

/** The index just past the XML name starting at `from`, or -1 when none starts there. */
export function nameEndAt(text: string, from: number): number {
  let at = from;
  for (let c = text.charCodeAt(at); c < 0x80 && asciiName[c] !== 0; c = text.charCodeAt(++at)) {
    if (at === from && asciiName[c] !== 1) return -1;
  }
  if (!(text.charCodeAt(at) >= 0x80)) return at === from ? -1 : at;
  xmlName.lastIndex = from;
  return xmlName.test(text) ? xmlName.lastIndex : -1;
}

/** The text with each CR LF and lone CR as LF, as an XML processor reads line ends. */
export function normalizeNewlines(value: string): string {
  return value.includes('\r') ? value.replace(/\r\n?/g, '\n') : value;
}

export function skipSpace(text: string, from: number): number {
  let at = from;
  for (let c = text.charCodeAt(at); c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d; c = text.charCodeAt(++at));
  return at;
}

/** Element text decoded, refusing an `&` that opens no reference (`runEnd` places the error). */
export function decodeText(run: string, text: string, runEnd: number): string {
  const decoded = decodeReferences(run, true);
  if (decoded === undefined) notWellFormed(text, runEnd, "an '&' that opens no reference");
  return decoded as string;
}

/**
 * Decodes the five predefined entities and character references in one pass (`&amp;lt;` → `&lt;`); others stay as
 * written (`&foo;`, `&#0;`), since no DTD defines anything more. Decoding can only shorten a text. When `strict`,
 * an `&` that opens no reference at all (`a & b`) makes the result undefined.
 */
export function decodeReferences(value: string, strict: true): string | undefined;
export function decodeReferences(value: string): string;
export function decodeReferences(value: string, strict = false): string | undefined {
  let ampersand = value.indexOf('&');
  if (ampersand === -1) return value;
  let decoded = '';
  let copied = 0;
  while (ampersand !== -1) {
    const end = referenceEnd(value, ampersand);
    if (end === -1) {
      if (strict) return undefined;
      ampersand = value.indexOf('&', ampersand + 1);
      continue;
    }
    const character = referenceValue(value, ampersand, end);
    if (character !== undefined) {
      decoded += value.slice(copied, ampersand) + character;
      copied = end + 1;
    }
    ampersand = value.indexOf('&', end + 1);
  }
  return decoded + value.slice(copied);
}

/** The index of the `;` ending the reference at `ampersand` (`&name;`, `&#10;`, `&#xA;`), or -1 when there is none. */
function referenceEnd(value: string, ampersand: number): number {
  let at = ampersand + 1;
  let c = value.charCodeAt(at);
  if (c === 0x23 /* # */) {
    const hex = value.charCodeAt(at + 1) === 0x78; /* x */
    at += hex ? 2 : 1;
    const digits = at;
    for (c = value.charCodeAt(at); isDigit(c) || (hex && isHexLetter(c)); c = value.charCodeAt(++at));
    return at > digits && c === 0x3b /* ; */ ? at : -1;
  }
  if (!(c < 0x80 && asciiName[c] === 1)) return -1;
  for (; c < 0x80 && asciiName[c] !== 0; c = value.charCodeAt(++at));
  return c === 0x3b ? at : -1;
}

/** The character a reference stands for, or undefined to keep it as written. */
function referenceValue(value: string, ampersand: number, end: number): string | undefined {
  if (value.charCodeAt(ampersand + 1) === 0x23 /* # */) {
    const hex = value.charCodeAt(ampersand + 2) === 0x78;
    const digits = end - ampersand - (hex ? 3 : 2);
    if (digits > (hex ? 6 : 7)) return undefined;
    const code = Number.parseInt(value.slice(end - digits, end), hex ? 16 : 10);
    return isXmlChar(code) ? String.fromCodePoint(code) : undefined;
  }
  switch (value.slice(ampersand + 1, end)) {
    case 'lt':
      return '<';
    case 'gt':
      return '>';
    case 'amp':
      return '&';
    case 'quot':
      return '"';
    case 'apos':
      return "'";
    default:
      return undefined;
  }
}

const isDigit = (c: number) => c >= 0x30 && c <= 0x39;
const isHexLetter = (c: number) => (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66);

function isXmlChar(code: number): boolean {
  return (
    code === 0x9 ||
    code === 0xa ||
    code === 0xd ||
    (code >= 0x20 && code <= 0xd7ff) ||
    (code >= 0xe000 && code <= 0xfffd) ||
    (code >= 0x10000 && code <= 0x10ffff)
  );
}

/** XML that is not well-formed: `upstream_invalid_response`, told apart from a DTD or a bound by its class. */
export class XmlNotWellFormed extends ApiError {
  constructor(line: number, reason: string) {
    super('upstream_invalid_response', `The upstream answer is not well-formed XML (line ${line}: ${reason}).`);
  }
}

export function notWellFormed(text: string, at: number, reason: string): never {
  let line = 1;
  for (let newline = text.indexOf('\n'); newline !== -1 && newline < at; newline = text.indexOf('\n', newline + 1)) line++;
  throw new XmlNotWellFormed(line, reason);
}
