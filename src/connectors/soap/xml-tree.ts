import { ApiError } from '../../core/errors.ts';
import { maxXmlAttributes, maxXmlDepth, maxXmlNames, maxXmlNodes, XmlBoundExceeded } from './xml-bounds.ts';
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
