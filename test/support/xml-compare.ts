import { XMLParser } from 'fast-xml-parser';

/**
 * XML documents compared as namespace-qualified trees: what two SOAP clients send is the same message when the
 * elements, attributes and text agree by namespace URI and local name, whatever prefixes and whitespace each chose.
 */

const xmlnsNamespace = 'http://www.w3.org/2000/xmlns/';
const xmlNamespace = 'http://www.w3.org/XML/1998/namespace';
const xsiNamespace = 'http://www.w3.org/2001/XMLSchema-instance';
const soapEncodingNamespace = 'http://schemas.xmlsoap.org/soap/encoding/';

/** An element: names as `{namespace}local` (`local` alone when in no namespace), prefixes resolved away. */
export interface QualifiedElement {
  ns: string;
  local: string;
  /**
   * By qualified name; xmlns declarations left out; `xsi:type` values resolved to `{namespace}local`, and
   * `soapenc:arrayType` values to `{namespace}local[dimensions]`.
   */
  attributes: Record<string, string>;
  children: QualifiedElement[];
  /** The element's own text nodes joined, trimmed (whitespace between child elements is insignificant). */
  text: string;
}

const parser = new XMLParser({
  preserveOrder: true,
  ignoreAttributes: false,
  attributeNamePrefix: '',
  parseTagValue: false,
  parseAttributeValue: false,
  trimValues: false,
  ignoreDeclaration: true,
  ignorePiTags: true,
  processEntities: true,
  htmlEntities: false,
});

type OrderedNode = Record<string, unknown> & { ':@'?: Record<string, string> };

/** `{namespace}local`, or `local` when the name is in no namespace. */
export function clark(ns: string, local: string): string {
  return ns === '' ? local : `{${ns}}${local}`;
}

function splitName(name: string): [prefix: string | undefined, local: string] {
  const colon = name.indexOf(':');
  return colon < 0 ? [undefined, name] : [name.slice(0, colon), name.slice(colon + 1)];
}

function resolvePrefix(prefix: string | undefined, scope: Map<string, string>, what: string): string {
  if (prefix === 'xml') return xmlNamespace;
  const ns = scope.get(prefix ?? '');
  if (ns === undefined && prefix !== undefined) throw new Error(`undeclared prefix ${prefix} in ${what}`);
  return ns ?? '';
}

function toElement(node: OrderedNode, inherited: Map<string, string>): QualifiedElement {
  const tag = Object.keys(node).find((key) => key !== ':@');
  if (tag === undefined) throw new Error('an element without a name');
  const raw = node[':@'] ?? {};
  const scope = new Map(inherited);
  for (const [name, value] of Object.entries(raw)) {
    if (name === 'xmlns') scope.set('', value);
    else if (name.startsWith('xmlns:')) scope.set(name.slice('xmlns:'.length), value);
  }
  const [prefix, local] = splitName(tag);
  const attributes: Record<string, string> = {};
  for (const [name, value] of Object.entries(raw)) {
    if (name === 'xmlns' || name.startsWith('xmlns:')) continue;
    const [attributePrefix, attributeLocal] = splitName(name);
    // An unprefixed attribute is in no namespace: the default namespace does not apply to attributes.
    const ns = attributePrefix === undefined ? '' : resolvePrefix(attributePrefix, scope, name);
    if (ns === xmlnsNamespace) continue;
    const key = clark(ns, attributeLocal);
    if (key === clark(xsiNamespace, 'type')) attributes[key] = resolveQNameValue(value, scope);
    else if (key === clark(soapEncodingNamespace, 'arrayType')) {
      // `p:T[2]`: the item type's QName resolved, the dimensions kept.
      const bracket = value.indexOf('[');
      attributes[key] =
        bracket < 0 ? resolveQNameValue(value, scope) : resolveQNameValue(value.slice(0, bracket), scope) + value.slice(bracket);
    } else attributes[key] = value;
  }
  const children: QualifiedElement[] = [];
  let text = '';
  for (const child of (node[tag] as OrderedNode[]) ?? []) {
    if ('#text' in child) text += String(child['#text']);
    else children.push(toElement(child, scope));
  }
  return { ns: resolvePrefix(prefix, scope, tag), local, attributes, children, text: text.trim() };
}

/** A QName-valued attribute (`xsi:type="p:T"`) as `{namespace}T`, resolved in the element's scope. */
function resolveQNameValue(value: string, scope: Map<string, string>): string {
  const [prefix, local] = splitName(value.trim());
  return clark(resolvePrefix(prefix, scope, value), local);
}

/** The document element of `xml` as a namespace-qualified tree; throws on XML that is not well-formed. */
export function parseQualified(xml: string): QualifiedElement {
  const nodes = parser.parse(xml) as OrderedNode[];
  const roots = nodes.filter((node) => !('#text' in node));
  if (roots.length !== 1) throw new Error(`expected one document element, found ${roots.length}`);
  return toElement(roots[0], new Map());
}

function label(element: QualifiedElement): string {
  return clark(element.ns, element.local);
}

function compareElements(a: QualifiedElement, b: QualifiedElement, path: string, out: string[]): void {
  if (a.ns !== b.ns || a.local !== b.local) {
    out.push(`${path}: element ${label(a)} ≠ ${label(b)}`);
    return;
  }
  for (const name of new Set([...Object.keys(a.attributes), ...Object.keys(b.attributes)])) {
    const [x, y] = [a.attributes[name], b.attributes[name]];
    if (x === y) continue;
    if (x === undefined) out.push(`${path}/@${name}: missing (other: ${JSON.stringify(y)})`);
    else if (y === undefined) out.push(`${path}/@${name}: extra ${JSON.stringify(x)}`);
    else out.push(`${path}/@${name}: ${JSON.stringify(x)} ≠ ${JSON.stringify(y)}`);
  }
  if (a.text !== b.text) out.push(`${path}: text ${JSON.stringify(a.text)} ≠ ${JSON.stringify(b.text)}`);
  const count = new Map<string, number>();
  const length = Math.max(a.children.length, b.children.length);
  for (let i = 0; i < length; i++) {
    const [x, y] = [a.children[i], b.children[i]];
    const name = (x ?? y).local;
    const n = (count.get(name) ?? 0) + 1;
    count.set(name, n);
    const childPath = `${path}/${name}${n > 1 ? `[${n}]` : ''}`;
    if (x === undefined) out.push(`${childPath}: missing ${label(y)}`);
    else if (y === undefined) out.push(`${childPath}: extra ${label(x)}`);
    else compareElements(x, y, childPath, out);
  }
}

/**
 * The differences between two XML documents compared as namespace-qualified trees (element and attribute names by
 * namespace URI and local name, `xsi:type` values by the QName they resolve to, text trimmed; prefixes, xmlns
 * declarations, comments and whitespace between elements ignored). Each difference names its path in `actual`
 * (`/Envelope/Body/GetQuote/symbol[2]`) and says actual first, expected second. Empty when they are the same.
 *
 * @example compareXml('<a:x xmlns:a="urn:a"><y>1</y></a:x>', '<x xmlns="urn:a"><y xmlns="">1</y></x>') // []
 */
export function compareXml(actual: string, expected: string): string[] {
  const out: string[] = [];
  let a: QualifiedElement;
  let b: QualifiedElement;
  try {
    a = parseQualified(actual);
  } catch (error) {
    return [`actual is not well-formed XML: ${(error as Error).message}`];
  }
  try {
    b = parseQualified(expected);
  } catch (error) {
    return [`expected is not well-formed XML: ${(error as Error).message}`];
  }
  compareElements(a, b, `/${a.local}`, out);
  return out;
}
