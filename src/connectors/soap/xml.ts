import { ApiError } from '../../core/errors.ts';
import { isJsonObject } from '../../core/json-object.ts';
import { checkXmlBounds } from './xml-bounds.ts';
import { attributePrefix, carryXsiType, readXml, textKey } from './xml-reader.ts';

export { attributePrefix, textKey };

/**
 * Parses XML from upstream safely, or throws `upstream_invalid_response`.
 *
 * First the bounds of docs/limits.md#upstreams (`checkXmlBounds`: nesting, attributes per element, elements and attributes in
 * all), then one strict forward pass (`readXml`), both linear in the length of the text: a 10 MiB answer is read in
 * well under half a second whatever it holds. (fast-xml-parser, used before, took 2 s on 10 MiB of ordinary records
 * and 9 s on 800,000 attributes of one element.)
 *
 * Any `<!` that opens neither a comment nor a CDATA section (`<!DOCTYPE`, `<!ENTITY`…, in any case, wherever it is)
 * is refused: no DTD means no external entity (XXE) and no entity expansion (billion laughs), so memory stays
 * proportional to the input. The five predefined entities and character references are decoded, which can only
 * shorten a text; other references stay as written. Malformed XML is `upstream_invalid_response` too; nothing else
 * is thrown.
 *
 * The result is the object fast-xml-parser gave: namespace prefixes and `xmlns` declarations removed, attributes
 * under `attributePrefix`, text under `textKey` when the element also has attributes or children, element and
 * attribute values as trimmed strings, repeated siblings as arrays. CDATA sections become ordinary (trimmed) text.
 * Elements named `__proto__`, `constructor` or `prototype` are refused; other names (`toString`…) are kept as they are.
 *
 * @example parseXml('<m:R xmlns:m="urn:x"><m:a id="1">5</m:a></m:R>') // { R: { a: { '#text': '5', '@_id': '1' } } }
 */
export function parseXml(text: string): unknown {
  const source = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  if (source.trim() === '') throw new ApiError('upstream_invalid_response', 'The upstream answer is empty, not XML.');
  checkXmlBounds(source);
  return readXml(source);
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
  // Most texts need neither replacement, and a test is cheaper than a replace that copies the text.
  return escapeMarkup(xmlIllegalCharacter.test(text) ? text.replace(xmlIllegalCharacters, '\ufffd') : text);
}

/** `escapeXml` of a text known to hold only characters XML can carry (`hasXmlIllegalCharacter` said so). */
export function escapeMarkup(text: string): string {
  return escaped.test(text) ? text.replace(escapedAll, (c) => escapes[c]) : text;
}

const escaped = /[&<>"'\t\n\r]/;
const escapedAll = new RegExp(escaped.source, 'g');

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
  if (!isJsonObject(node)) return node === undefined || node === null ? '' : String(node);
  const keys = Object.keys(node);
  let attributes: Record<string, string> | undefined;
  let text: string | undefined;
  let children = 0;
  for (const key of keys) {
    if (key === textKey) text = String(node[key]);
    else if (!key.startsWith(attributePrefix)) children++;
    else {
      attributes ??= {};
      setOwn(attributes, key.slice(attributePrefix.length), String(node[key]));
    }
  }
  if (children === 0 && text === undefined && (attributes?.nil === 'true' || attributes?.nil === '1')) return null;
  if (children === 0 && attributes === undefined) return text ?? '';
  const value: Record<string, unknown> = {};
  if (attributes !== undefined) value.$attributes = attributes;
  if (text !== undefined) value.$value = text;
  for (const key of keys) {
    if (key !== textKey && !key.startsWith(attributePrefix)) setOwn(value, key, elementValue(node[key]));
  }
  carryXsiType(node, value);
  return value;
}

/** Sets an own property; a key `__proto__` (a valid XML name) is defined, so it cannot reach the prototype. */
function setOwn(target: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__') Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
  else target[key] = value;
}

/** The first child element `name` of a parsed element (the first of repeated ones), if any. */
export function childElement(node: unknown, name: string): unknown {
  if (!isJsonObject(node) || !Object.hasOwn(node, name)) return undefined;
  const child = node[name];
  return Array.isArray(child) ? child[0] : child;
}

/** The text of a parsed element: itself when a string, its `textKey` when it has attributes or children, else `""`. */
export function elementText(node: unknown): string {
  if (Array.isArray(node)) return elementText(node[0]);
  if (isJsonObject(node)) return typeof node[textKey] === 'string' ? node[textKey] : '';
  return typeof node === 'string' ? node : '';
}
