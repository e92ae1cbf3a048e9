import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { ApiError } from '../../errors.ts';

/** Attributes of a parsed element are its keys with this prefix (`@_id`); namespace prefixes are removed first. */
export const attributePrefix = '@_';
/** The text of a parsed element that also has attributes or children. */
export const textKey = '#text';

/**
 * The one parser configuration for XML from upstream. Entity processing is off, so the parser never expands
 * anything; the five predefined entities and character references are decoded by `decodeReferences` instead, which
 * can only shorten a text. Values stay strings. Elements named `__proto__`, `constructor` or `prototype` make the
 * parser throw (its prototype-pollution guard); other names (`toString`…) are kept as they are, not renamed.
 */
const parser = new XMLParser({
  processEntities: false,
  htmlEntities: false,
  removeNSPrefix: true,
  ignoreAttributes: false,
  attributeNamePrefix: attributePrefix,
  textNodeName: textKey,
  parseTagValue: false,
  parseAttributeValue: false,
  trimValues: true,
  ignoreDeclaration: true,
  ignorePiTags: true,
  tagValueProcessor: (_name, value) => decodeReferences(value),
  attributeValueProcessor: (_name, value) => decodeReferences(value),
  onDangerousProperty: (name) => name,
});

/**
 * Parses XML from upstream safely, or throws `upstream_invalid_response`.
 *
 * Any `<!` that opens neither a comment nor a CDATA section (`<!DOCTYPE`, `<!ENTITY`…, in any case, wherever it is)
 * is refused before parsing: no DTD means no external entity (XXE) and no entity expansion (billion laughs), so
 * memory stays proportional to the input. Malformed XML (checked by `XMLValidator`, so the lenient parser never
 * guesses) and the parser's own refusals are `upstream_invalid_response` too; nothing else is thrown.
 *
 * The result is fast-xml-parser's object: namespace prefixes and `xmlns` declarations removed, attributes under
 * `attributePrefix`, text under `textKey` when the element also has attributes or children, element and attribute
 * values as trimmed strings, repeated siblings as arrays. CDATA sections become ordinary (trimmed) text.
 *
 * @example parseXml('<m:R xmlns:m="urn:x"><m:a id="1">5</m:a></m:R>') // { R: { a: { '#text': '5', '@_id': '1' } } }
 */
export function parseXml(text: string): unknown {
  const source = withCdataAsText(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text);
  if (source.trim() === '') throw unreadable('The upstream answer is empty, not XML.');
  let document: unknown;
  try {
    const validation = XMLValidator.validate(source);
    if (validation !== true) {
      const { msg, line } = validation.err;
      throw unreadable(`The upstream answer is not well-formed XML (line ${line}: ${msg.replace(/\.$/, '')}).`);
    }
    document = parser.parse(source);
  } catch (error) {
    if (error instanceof ApiError) throw error;
    const reason = error instanceof Error ? error.message.slice(0, 200) : 'unknown error';
    throw unreadable(`The upstream answer could not be read as XML (${reason.replace(/\.$/, '')}).`);
  }
  // The validator lets several self-closing roots through (`<a/><b/>`); a document has exactly one.
  const roots = isXmlRecord(document) ? Object.values(document) : [];
  if (roots.length !== 1 || Array.isArray(roots[0])) {
    throw unreadable('The upstream answer is not well-formed XML (it must have exactly one root element).');
  }
  return document;
}

/**
 * Escapes text for XML element content and for attribute values in either quote: `& < > " '`, plus tab, newline
 * and carriage return as character references (attribute-value normalisation would turn them into spaces and a
 * parser turns a carriage return into a newline). Characters XML 1.0 cannot carry at all (most C0 controls, U+FFFE,
 * U+FFFF, lone surrogates) become U+FFFD; `buildEnvelope` refuses them before they get here.
 *
 * @example escapeXml(`<a href="x">&'`) // '&lt;a href=&quot;x&quot;&gt;&amp;&apos;'
 */
export function escapeXml(text: string): string {
  return text.replace(xmlIllegalCharacters, '\ufffd').replace(/[&<>"'\t\n\r]/g, (c) => escapes[c]);
}

/**
 * Whether the text holds a character XML 1.0 cannot carry, not even as a character reference.
 *
 * @example hasXmlIllegalCharacter('a\u0000b') // true
 */
export function hasXmlIllegalCharacter(text: string): boolean {
  return xmlIllegalCharacter.test(text);
}

// In a `u` regex a surrogate range matches only lone surrogates: a valid pair is read as one code point.
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding the control characters XML 1.0 forbids is the point.
const xmlIllegalCharacter = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\ud800-\udfff\ufffe\uffff]/u;
const xmlIllegalCharacters = new RegExp(xmlIllegalCharacter.source, 'gu');

const escapes: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&apos;',
  '\t': '&#9;',
  '\n': '&#10;',
  '\r': '&#13;',
};

/**
 * A parsed element as API output: text stays a string (`""` when empty); an element with attributes or children
 * becomes an object with `$attributes` (names without prefix), `$value` (its text, when it has any) and one key per
 * child, repeated children as arrays — the same `$attributes`/`$value` keys the request side accepts, which no XML
 * name can clash with. An empty element marked `xsi:nil="true"` (seen as `nil` once prefixes are removed) is null.
 *
 * @example elementValue({ '#text': '5', '@_unit': 'cm' }) // { $attributes: { unit: 'cm' }, $value: '5' }
 */
export function elementValue(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(elementValue);
  if (!isXmlRecord(node)) return node === undefined || node === null ? '' : String(node);
  const attributes: Array<[string, string]> = [];
  const children: Array<[string, unknown]> = [];
  let text: string | undefined;
  for (const [key, value] of Object.entries(node)) {
    if (key === textKey) text = String(value);
    else if (key.startsWith(attributePrefix)) attributes.push([key.slice(attributePrefix.length), String(value)]);
    else children.push([key, elementValue(value)]);
  }
  const nil = attributes.some(([name, value]) => name === 'nil' && (value === 'true' || value === '1'));
  if (nil && children.length === 0 && text === undefined) return null;
  if (attributes.length === 0 && children.length === 0) return text ?? '';
  // Object.fromEntries defines own properties, so an attribute or element named `__proto__` cannot touch a prototype.
  return Object.fromEntries([
    ...(attributes.length > 0 ? [['$attributes', Object.fromEntries(attributes)]] : []),
    ...(text === undefined ? [] : [['$value', text]]),
    ...children,
  ]);
}

/** The first child element `name` of a parsed element (the first of repeated ones), if any. */
export function childElement(node: unknown, name: string): unknown {
  if (!isXmlRecord(node) || !Object.hasOwn(node, name)) return undefined;
  const child = node[name];
  return Array.isArray(child) ? child[0] : child;
}

/** The text of a parsed element: itself when a string, its `textKey` when it has attributes or children, else `""`. */
export function elementText(node: unknown): string {
  if (Array.isArray(node)) return elementText(node[0]);
  if (isXmlRecord(node)) return typeof node[textKey] === 'string' ? node[textKey] : '';
  return typeof node === 'string' ? node : '';
}

/** Whether a parsed node is an element with attributes or children (an object), not text or a list of repeats. */
export function isXmlRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

const references = /&(?:(lt|gt|amp|quot|apos)|#([0-9]{1,7})|#x([0-9a-fA-F]{1,6}));/g;
const predefined: Record<string, string> = { lt: '<', gt: '>', amp: '&', quot: '"', apos: "'" };

/** Decodes the five predefined entities and character references in one pass (`&amp;lt;` → `&lt;`); others stay. */
function decodeReferences(value: string): string {
  if (!value.includes('&')) return value;
  return value.replace(references, (whole, name: string | undefined, decimal: string | undefined, hex: string | undefined) => {
    if (name !== undefined) return predefined[name];
    const code = decimal !== undefined ? Number.parseInt(decimal, 10) : Number.parseInt(hex ?? '', 16);
    return isXmlChar(code) ? String.fromCodePoint(code) : whole;
  });
}

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

/**
 * The text with every CDATA section replaced by its escaped content (so `decodeReferences` cannot misread a literal
 * `&amp;` inside CDATA), refusing any other `<!` declaration; comments are left for the parser to skip.
 */
function withCdataAsText(text: string): string {
  let result = '';
  let copiedUpTo = 0;
  let at = text.indexOf('<!');
  while (at !== -1) {
    if (text.startsWith('<!--', at)) {
      const end = text.indexOf('-->', at + 4);
      if (end === -1) throw unreadable('The upstream answer is not well-formed XML (a comment is not closed).');
      at = text.indexOf('<!', end + 3);
    } else if (text.startsWith('<![CDATA[', at)) {
      const end = text.indexOf(']]>', at + 9);
      if (end === -1) throw unreadable('The upstream answer is not well-formed XML (a CDATA section is not closed).');
      result += text.slice(copiedUpTo, at) + text.slice(at + 9, end).replace(/[&<>]/g, (c) => escapes[c]);
      copiedUpTo = end + 3;
      at = text.indexOf('<!', copiedUpTo);
    } else {
      throw unreadable('The upstream answer declares a DTD, which is refused.');
    }
  }
  return copiedUpTo === 0 ? text : result + text.slice(copiedUpTo);
}

function unreadable(message: string): ApiError {
  return new ApiError('upstream_invalid_response', message);
}
