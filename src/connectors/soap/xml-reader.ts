import { ApiError } from '../../core/errors.ts';
import { xsiNamespace } from './namespaces.ts';
import { maxXmlDepth, maxXmlLayouts, XmlBoundExceeded } from './xml-bounds.ts';
import {
  closedAt,
  decodeReferences,
  decodeText,
  nameEndAt,
  normalizeNewlines,
  notWellFormed,
  rootScope,
  scanAttribute,
  scanEndTag,
  scanned,
  skipSpace,
} from './xml-scanner.ts';

// Tests read trees through this module, where readXmlTree was first.
export { readXmlTree, type XmlElement } from './xml-tree.ts';

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
