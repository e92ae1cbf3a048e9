import { ApiError } from '../../core/errors.ts';
import { xmlNamespace, xsiNamespace } from './namespaces.ts';
import { maxXmlAttributes, maxXmlDepth, maxXmlLayouts, maxXmlNames, maxXmlNodes, XmlBoundExceeded } from './xml-bounds.ts';

/** Attributes of a read element are its keys with this prefix (`@_id`); namespace prefixes are removed first. */
export const attributePrefix = '@_';
/** The text of a read element that also has attributes or children. */
export const textKey = '#text';

type XmlObject = Record<string, unknown>;

/** A property key of the result, interned (one string per name), with a small number for layouts. */
interface Key {
  name: string;
  id: number;
}

/** An element being read: its name as written (to match the end tag), its key, and what it holds so far. */
interface OpenElement {
  name: string;
  key: Key;
  content: XmlObject | undefined;
  /** The layout of `content` so far (see maxXmlLayouts). */
  layout: number;
  text: string;
  /** The namespace prefixes in scope (shared with the parent when the element declares none). */
  scope: ReadonlyMap<string, string>;
}

const textKeyId = 0;

/**
 * Reads an XML document into the shape fast-xml-parser gave with the options Interchange used before (see
 * `parseXml`), in one forward pass: every search is an `indexOf` or a loop over character codes, so 10 MiB take a
 * fraction of a second however they are built. Names are interned, so each distinct name is one property key.
 *
 * Well-formedness is checked as far as reading an upstream needs it: one root element; names that are XML names;
 * end tags matching start tags; attributes separated by whitespace, each with a quoted value, none repeated; no text
 * outside the root; `&` in text only opening a reference; comments, CDATA sections and processing instructions
 * closed. Any other `<!` (a DTD) is refused. The bounds of `checkXmlBounds` are expected to hold already;
 * `maxXmlLayouts` is checked here.
 */
export function readXml(text: string): XmlObject {
  const stack: OpenElement[] = [];
  const elementKeys = new Map<string, Key>();
  const attributeKeys = new Map<string, Key | null>();
  /** The trie of layouts: (layout, key id) → layout, both small integers, so the map key stays a small integer. */
  const layouts = new Map<number, number>();
  let document: XmlObject | undefined;
  /** The text since the last tag, as written (comments cut out). */
  let pending = '';
  /** When the run has CDATA sections: the pieces before `pending`, text as written and CDATA content alternately. */
  let cdata: string[] | undefined;
  let at = 0;
  const fail = (reason: string, where = at): never => notWellFormed(text, where, reason);

  while (at < text.length) {
    const open = text.indexOf('<', at);
    const textEnd = open === -1 ? text.length : open;
    if (textEnd > at) {
      const run = text.slice(at, textEnd);
      if (stack.length === 0) {
        if (run.trim() !== '') fail('text outside the root element');
      } else {
        pending += run;
      }
    }
    if (open === -1) break;
    at = open;
    const next = text.charCodeAt(open + 1);
    if (next === 0x21 /* ! */) {
      if (text.startsWith('<!--', open)) {
        at = closedAt(text, open + 4, '-->', 'a comment', fail) + 3;
      } else if (text.startsWith('<![CDATA[', open)) {
        const close = closedAt(text, open + 9, ']]>', 'a CDATA section', fail);
        if (stack.length === 0) fail('a CDATA section outside the root element');
        cdata ??= [];
        cdata.push(pending, text.slice(open + 9, close));
        pending = '';
        at = close + 3;
      } else {
        throw new ApiError('upstream_invalid_response', 'The upstream answer declares a DTD, which is refused.');
      }
      continue;
    }
    if (pending !== '' || cdata !== undefined) endTextRun();
    if (next === 0x3f /* ? */) {
      at = closedAt(text, open + 2, '?>', 'a processing instruction', fail) + 2;
    } else if (next === 0x2f /* / */) {
      readEndTag(open);
    } else {
      readStartTag(open);
    }
  }
  if (stack.length > 0) fail(`<${stack[stack.length - 1].name}> is not closed`);
  if (document === undefined) fail('there is no root element');
  return document as XmlObject;

  /**
   * Ends the text run: trimmed at both ends as written, then decoded (CDATA content as it is), it joins its element's
   * text; the runs beside child elements concatenate. Comments do not end a run, processing instructions do.
   */
  function endTextRun(): void {
    let run: string;
    if (cdata === undefined) {
      run = decodeText(normalizeNewlines(pending.trim()), text, at);
    } else {
      const pieces = cdata;
      pieces.push(pending);
      cdata = undefined;
      let first = 0;
      let last = pieces.length - 1;
      for (; first <= last; first++) {
        pieces[first] = pieces[first].trimStart();
        if (pieces[first] !== '') break;
      }
      for (; last >= first; last--) {
        pieces[last] = pieces[last].trimEnd();
        if (pieces[last] !== '') break;
      }
      run = '';
      for (let i = first; i <= last; i++) {
        const piece = normalizeNewlines(pieces[i]);
        run += i % 2 === 1 ? piece : decodeText(piece, text, at);
      }
    }
    pending = '';
    if (run !== '') stack[stack.length - 1].text += run;
  }

  function readEndTag(open: number): void {
    const element = stack.pop();
    at = scanEndTag(text, open, element?.name, fail);
    const { key, content, layout, text: elementText } = element as OpenElement;
    if (content === undefined) place(key, elementText, open);
    else {
      if (elementText !== '') {
        content[textKey] = elementText;
        extendLayout(layout, textKeyId);
      }
      place(key, content, open);
    }
  }

  function readStartTag(open: number): void {
    const nameEnd = nameEndAt(text, open + 1);
    if (nameEnd === -1) fail('a tag without a valid name');
    const name = text.slice(open + 1, nameEnd);
    let key = elementKeys.get(name);
    if (key === undefined) {
      const local = name.slice(name.indexOf(':') + 1);
      if (local === '' || refusedKeys.has(local)) fail(`the element name '${name}' is refused`);
      key = { name: local, id: elementKeys.size + attributeKeys.size + 1 };
      elementKeys.set(name, key);
    }
    let attributes: XmlObject | undefined;
    let layout = 0;
    /** Attribute names as written, searched (past 32 of them, through a set) only when two share a key. */
    let names: string[] | undefined;
    let nameSet: Set<string> | undefined;
    const inherited = stack.length === 0 ? rootScope : stack[stack.length - 1].scope;
    /** The scope with this tag's namespace declarations, made only when it has some. */
    let declared: Map<string, string> | undefined;
    /** Prefixed `type` attributes (`xsi:type`, once its prefix is known): [name as written, value]. */
    let typeAttributes: Array<[string, string]> | undefined;
    let pos = nameEnd;
    for (;;) {
      const spaced = skipSpace(text, pos);
      const c = text.charCodeAt(spaced);
      if (c === 0x3e /* > */) {
        // Already bounded by checkXmlBounds; kept because everything that walks the result recurses.
        if (stack.length === maxXmlDepth) throw new XmlBoundExceeded(`nests elements deeper than ${maxXmlDepth} levels`);
        const scope = declared ?? inherited;
        if (typeAttributes !== undefined) noteXsiType(attributes as XmlObject, typeAttributes, scope);
        stack.push({ name, key, content: attributes, layout, text: '', scope });
        at = spaced + 1;
        return;
      }
      if (c === 0x2f /* / */ && text.charCodeAt(spaced + 1) === 0x3e) {
        if (typeAttributes !== undefined) noteXsiType(attributes as XmlObject, typeAttributes, declared ?? inherited);
        place(key, attributes ?? '', open);
        at = spaced + 2;
        return;
      }
      pos = scanAttribute(text, name, pos, spaced, fail);
      const { name: attributeName, raw } = scanned;
      let attribute = attributeKeys.get(attributeName);
      if (attribute === undefined) {
        const attributeKey = attributeKeyOf(attributeName);
        attribute = attributeKey === null ? null : { name: attributeKey, id: elementKeys.size + attributeKeys.size + 1 };
        attributeKeys.set(attributeName, attribute);
      }
      // Two names with one key (`p:id`, `q:id`): the later value wins, as in fast-xml-parser.
      const known = attribute !== null && attributes !== undefined && Object.hasOwn(attributes, attribute.name);
      if (known && names !== undefined) {
        if (nameSet === undefined && names.length > 32) nameSet = new Set(names);
        if (nameSet?.has(attributeName) ?? names.includes(attributeName)) {
          fail(`the attribute '${attributeName}' is repeated`, spaced);
        }
      }
      nameSet?.add(attributeName);
      names ??= [];
      names.push(attributeName);
      if (attribute === null) {
        declared ??= new Map(inherited);
        declared.set(attributeName === 'xmlns' ? '' : attributeName.slice(6), decodeReferences(normalizeNewlines(raw)));
        continue;
      }
      attributes ??= {};
      const value = decodeReferences(normalizeNewlines(raw).trim());
      attributes[attribute.name] = value;
      if (attribute.name === xsiTypeKey && attributeName !== 'type') {
        typeAttributes ??= [];
        typeAttributes.push([attributeName, value]);
      }
      if (!known) layout = extendLayout(layout, attribute.id);
    }
  }

  /** Places a finished element in its parent, or makes it the document. Repeated siblings become an array. */
  function place(key: Key, value: unknown, where: number): void {
    const parent = stack[stack.length - 1];
    if (parent === undefined) {
      if (document !== undefined) fail('there must be exactly one root element', where);
      document = { [key.name]: value };
      return;
    }
    parent.content ??= {};
    if (!Object.hasOwn(parent.content, key.name)) {
      parent.content[key.name] = value;
      parent.layout = extendLayout(parent.layout, key.id);
    } else {
      const earlier = parent.content[key.name];
      if (Array.isArray(earlier)) earlier.push(value);
      else parent.content[key.name] = [earlier, value];
    }
  }

  /** The layout after adding key `id` to an object of layout `layout`; refuses a new one past maxXmlLayouts. */
  function extendLayout(layout: number, id: number): number {
    // Key ids stay under 2^15 (maxXmlNames), layouts under maxXmlLayouts: the product is a small integer.
    const edge = layout * 0x8000 + id;
    let next = layouts.get(edge);
    if (next === undefined) {
      next = layouts.size + 1;
      if (next > maxXmlLayouts) {
        throw new XmlBoundExceeded(`has more than ${maxXmlLayouts} distinct layouts of attribute and child names`);
      }
      layouts.set(edge, next);
    }
    return next;
  }
}

/** A name in a namespace: `{ns}local`. */
export interface QName {
  ns: string;
  local: string;
}

const xsiTypeKey = `${attributePrefix}type`;
const rootScope: ReadonlyMap<string, string> = new Map([['xml', xmlNamespace]]);

/** The `xsi:type` of each element read that has one, resolved where it was written (by the element's content object). */
const xsiTypes = new WeakMap<object, QName>();

/**
 * Records the `xsi:type` among an element's prefixed `type` attributes: the one whose prefix is bound to the XML
 * Schema instance namespace, its QName value resolved through the prefixes in scope (an unprefixed value through the
 * default namespace). A value whose prefix nothing declares is not recorded.
 */
function noteXsiType(content: XmlObject, candidates: Array<[string, string]>, scope: ReadonlyMap<string, string>): void {
  for (const [name, value] of candidates) {
    if (scope.get(name.slice(0, name.indexOf(':'))) !== xsiNamespace) continue;
    const colon = value.indexOf(':');
    const ns = scope.get(colon === -1 ? '' : value.slice(0, colon));
    if (ns !== undefined || colon === -1) xsiTypes.set(content, { ns: ns ?? '', local: value.slice(colon + 1) });
    return;
  }
}

/**
 * The `xsi:type` an element read by `readXml` carried, resolved to its namespace, given the element's value (or the
 * value `elementValue` made of it, which `carryXsiType` marks); undefined when it had none.
 *
 * @example xsiTypeOf(readXml('<a xmlns:x="urn:x" xmlns:i="http://www.w3.org/2001/XMLSchema-instance" i:type="x:T"/>').a) // { ns: 'urn:x', local: 'T' }
 */
export function xsiTypeOf(value: unknown): QName | undefined {
  return typeof value === 'object' && value !== null ? xsiTypes.get(value) : undefined;
}

/** Marks `to` (a value made from `from`) with `from`'s `xsi:type`, if it has one. */
export function carryXsiType(from: object, to: object): void {
  const type = xsiTypes.get(from);
  if (type !== undefined) xsiTypes.set(to, type);
}

/** An element of a document read namespace-aware (`readXmlTree`). */
export interface XmlElement {
  /** The namespace its prefix (or the default namespace) is bound to; '' for none. */
  readonly ns: string;
  readonly local: string;
  /** Its attributes by name as written (`name`, `wsdl:arrayType`), namespace declarations left out; own properties only. */
  readonly attributes: Readonly<Record<string, string>>;
  /** The prefixes in scope, '' for the default namespace: shared with the parent when it declares none. */
  readonly scope: ReadonlyMap<string, string>;
  readonly children: XmlElement[];
  /** Its text beside its children, references decoded, CDATA content as it is; runs of whitespace alone left out. */
  text: string;
  readonly parent: XmlElement | undefined;
}

/**
 * Reads an XML document as a tree of elements with their names resolved to namespaces, for documents whose meaning
 * lies in namespaces and order: WSDL and XML Schema documents. The same scanning and the same well-formedness rules
 * as `readXml` (one root, XML names, matching end tags, quoted and unrepeated attributes, `&` opening a reference,
 * closed comments, CDATA sections and processing instructions, any other `<!` refused as a DTD), and the bounds
 * `checkXmlBounds` holds answers to (nesting, attributes of one element, elements and attributes, distinct names),
 * counted in the same pass. A prefix no declaration binds resolves to '' (WSDL generators leave some): the names that
 * matter are checked where they are used.
 *
 * @example readXmlTree('<x:a xmlns:x="urn:x" n="1"/>') // { ns: 'urn:x', local: 'a', attributes: { n: '1' }, … }
 */
export function readXmlTree(text: string): XmlElement {
  const source = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  let root: XmlElement | undefined;
  let current: XmlElement | undefined;
  const openNames: string[] = [];
  let at = 0;
  /** Elements and attributes read so far, and the distinct names among them (xml-bounds.ts). */
  let nodes = 0;
  const names = new Set<string>();
  const count = (name: string) => {
    if (++nodes > maxXmlNodes) throw new XmlBoundExceeded(`holds more than ${maxXmlNodes} elements and attributes`);
    names.add(name);
    if (names.size > maxXmlNames)
      throw new XmlBoundExceeded(`uses more than ${maxXmlNames} distinct element and attribute names`);
  };
  const fail = (reason: string, where = at): never => notWellFormed(source, where, reason);

  while (at < source.length) {
    const open = source.indexOf('<', at);
    const textEnd = open === -1 ? source.length : open;
    // Whitespace between elements is not kept (these documents' meaning is in their elements and attributes).
    if (textEnd > skipSpace(source, at)) {
      if (current === undefined) fail('text outside the root element');
      (current as XmlElement).text += decodeText(normalizeNewlines(source.slice(at, textEnd)), source, textEnd);
    }
    if (open === -1) break;
    at = open;
    const next = source.charCodeAt(open + 1);
    if (next === 0x21 /* ! */) {
      if (source.startsWith('<!--', open)) {
        at = closedAt(source, open + 4, '-->', 'a comment', fail) + 3;
      } else if (source.startsWith('<![CDATA[', open)) {
        const close = closedAt(source, open + 9, ']]>', 'a CDATA section', fail);
        if (current === undefined) fail('a CDATA section outside the root element');
        (current as XmlElement).text += normalizeNewlines(source.slice(open + 9, close));
        at = close + 3;
      } else {
        throw new ApiError('upstream_invalid_response', 'The document declares a DTD, which is refused.');
      }
    } else if (next === 0x3f /* ? */) {
      at = closedAt(source, open + 2, '?>', 'a processing instruction', fail) + 2;
    } else if (next === 0x2f /* / */) {
      at = scanEndTag(source, open, openNames.pop(), fail);
      current = current?.parent;
    } else {
      startTag(open);
    }
  }
  if (openNames.length > 0) fail(`<${openNames[openNames.length - 1]}> is not closed`);
  if (root === undefined) return fail('there is no root element');
  return root;

  function startTag(open: number): void {
    const nameEnd = nameEndAt(source, open + 1);
    if (nameEnd === -1) fail('a tag without a valid name');
    const name = source.slice(open + 1, nameEnd);
    if (current === undefined && root !== undefined) fail('there must be exactly one root element', open);
    count(name);
    let attributeCount = 0;
    const attributes: Record<string, string> = {};
    /** The scope with this tag's declarations, made only when it has some. */
    let declarations: Map<string, string> | undefined;
    let declaredHere: Set<string> | undefined;
    let pos = nameEnd;
    let selfClosing = false;
    for (;;) {
      const spaced = skipSpace(source, pos);
      const c = source.charCodeAt(spaced);
      if (c === 0x3e /* > */) {
        at = spaced + 1;
        break;
      }
      if (c === 0x2f /* / */ && source.charCodeAt(spaced + 1) === 0x3e) {
        at = spaced + 2;
        selfClosing = true;
        break;
      }
      pos = scanAttribute(source, name, pos, spaced, fail);
      const attributeName = scanned.name;
      if (++attributeCount > maxXmlAttributes) {
        throw new XmlBoundExceeded(`has an element with more than ${maxXmlAttributes} attributes`);
      }
      count(attributeName);
      const value = decodeReferences(normalizeNewlines(scanned.raw));
      if (attributeName === 'xmlns' || attributeName.startsWith('xmlns:')) {
        const prefix = attributeName === 'xmlns' ? '' : attributeName.slice(6);
        declarations ??= new Map(current?.scope ?? rootScope);
        declaredHere ??= new Set();
        if (declaredHere.has(prefix)) fail(`the attribute '${attributeName}' is repeated`, spaced);
        declaredHere.add(prefix);
        declarations.set(prefix, value);
        continue;
      }
      if (Object.hasOwn(attributes, attributeName)) fail(`the attribute '${attributeName}' is repeated`, spaced);
      // `__proto__` is a valid XML name: defined as an own property, it cannot reach the prototype.
      if (attributeName === '__proto__') Object.defineProperty(attributes, attributeName, { value, enumerable: true });
      else attributes[attributeName] = value;
    }
    const scope = declarations ?? current?.scope ?? rootScope;
    const colon = name.indexOf(':');
    const element: XmlElement = {
      ns: scope.get(colon === -1 ? '' : name.slice(0, colon)) ?? '',
      local: colon === -1 ? name : name.slice(colon + 1),
      attributes,
      scope,
      children: [],
      text: '',
      parent: current,
    };
    if (current === undefined) root = element;
    else current.children.push(element);
    if (!selfClosing) {
      if (openNames.length === maxXmlDepth) throw new XmlBoundExceeded(`nests elements deeper than ${maxXmlDepth} levels`);
      openNames.push(name);
      current = element;
    }
  }
}

/** Where `closer` ends the construct begun before `from` (a comment, a CDATA section, a processing instruction). */
function closedAt(text: string, from: number, closer: string, what: string, fail: (reason: string) => never): number {
  const close = text.indexOf(closer, from);
  if (close === -1) fail(`${what} is not closed`);
  return close;
}

/**
 * Reads the end tag at `open`, which must close the element `expected` (as written), and returns the index after it;
 * an end tag with no element open, another name, or no `>` fails with the reason. Both readers' one way to end an
 * element.
 */
function scanEndTag(
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
const scanned = { name: '', raw: '' };

/**
 * Reads the attribute of the tag `<tag …>` that starts at `at` (`name="value"` or with single quotes), after the
 * whitespace that began at `spaceFrom`, into `scanned`, and returns the index after it. Both readers' one way to read
 * an attribute: a tag that ends there, no whitespace before the name, a name that is no XML name, a missing `=`, an
 * unquoted or unclosed value fail with the reason. A shared object rather than a new one per attribute keeps a 10 MiB
 * answer's millions of attributes from costing an allocation each.
 */
function scanAttribute(
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

/**
 * The key of an attribute: `@_` and its local name (`xsi:nil` → `@_nil`; a name with several colons stays whole), or
 * null for a namespace declaration (`xmlns`, `xmlns:p`), which is dropped as fast-xml-parser drops it.
 */
function attributeKeyOf(name: string): string | null {
  if (name === 'xmlns' || name.startsWith('xmlns:')) return null;
  const colon = name.indexOf(':');
  const local = colon !== -1 && name.indexOf(':', colon + 1) === -1 ? name.slice(colon + 1) : name;
  return attributePrefix + local;
}

/** Element names that would reach an object's prototype machinery (fast-xml-parser refuses them too). */
const refusedKeys = new Set(['__proto__', 'constructor', 'prototype']);

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
function nameEndAt(text: string, from: number): number {
  let at = from;
  for (let c = text.charCodeAt(at); c < 0x80 && asciiName[c] !== 0; c = text.charCodeAt(++at)) {
    if (at === from && asciiName[c] !== 1) return -1;
  }
  if (!(text.charCodeAt(at) >= 0x80)) return at === from ? -1 : at;
  xmlName.lastIndex = from;
  return xmlName.test(text) ? xmlName.lastIndex : -1;
}

/** The text with each CR LF and lone CR as LF, as an XML processor reads line ends. */
function normalizeNewlines(value: string): string {
  return value.includes('\r') ? value.replace(/\r\n?/g, '\n') : value;
}

function skipSpace(text: string, from: number): number {
  let at = from;
  for (let c = text.charCodeAt(at); c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d; c = text.charCodeAt(++at));
  return at;
}

/** Element text decoded, refusing an `&` that opens no reference (`runEnd` places the error). */
function decodeText(run: string, text: string, runEnd: number): string {
  const decoded = decodeReferences(run, true);
  if (decoded === undefined) notWellFormed(text, runEnd, "an '&' that opens no reference");
  return decoded as string;
}

/**
 * Decodes the five predefined entities and character references in one pass (`&amp;lt;` → `&lt;`); others stay as
 * written (`&foo;`, `&#0;`), since no DTD defines anything more. Decoding can only shorten a text. When `strict`,
 * an `&` that opens no reference at all (`a & b`) makes the result undefined.
 */
function decodeReferences(value: string, strict: true): string | undefined;
function decodeReferences(value: string): string;
function decodeReferences(value: string, strict = false): string | undefined {
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

function notWellFormed(text: string, at: number, reason: string): never {
  let line = 1;
  for (let newline = text.indexOf('\n'); newline !== -1 && newline < at; newline = text.indexOf('\n', newline + 1)) line++;
  throw new XmlNotWellFormed(line, reason);
}
