import { XMLParser } from 'fast-xml-parser';
import { xsdNamespaces } from './schema-model.ts';

/**
 * The WSDL 1.1 part of a WSDL (messages, port types, bindings, services), read from the documents the load fetched,
 * namespace-aware, as the WSDL 1.1 specification defines it. node-soap's parsed WSDL is still used for the schemas
 * (schema-model.ts), but not for this: it keys operations by name (the last overload wins), drops the `namespace` of
 * `soap:body` (where an rpc wrapper belongs) and does not follow a circular `wsdl:import`.
 */

const wsdlNamespace = 'http://schemas.xmlsoap.org/wsdl/';
const soapBindingNamespaces: Record<string, '1.1' | '1.2'> = {
  'http://schemas.xmlsoap.org/wsdl/soap/': '1.1',
  'http://schemas.xmlsoap.org/wsdl/soap12/': '1.2',
};

export interface QName {
  ns: string;
  local: string;
}

/** One element of a document, its names resolved: `scope` maps the prefixes declared around it to namespaces. */
interface XmlNode {
  ns: string;
  local: string;
  attributes: Record<string, string>;
  scope: Map<string, string>;
  children: XmlNode[];
}

export interface WsdlPart {
  name: string;
  /** `element=`: the part is this global element. */
  element?: QName;
  /** `type=`: the part is an element named after the part, of this type. */
  type?: QName;
}

/** The input or output of a bound operation: its message, as `soap:body` says to write it. */
export interface BoundMessage {
  /** The message's name. */
  name: string;
  /** The message's parts that go in the Body (`soap:body parts=`, else all). Undefined: the message is not declared. */
  parts: WsdlPart[] | undefined;
  use: 'literal' | 'encoded';
  /** `soap:body namespace`: the namespace of an rpc wrapper. */
  namespace: string | undefined;
  /** The header parts the binding declares (`soap:header message part`), found in their messages. */
  headers: WsdlPart[];
}

export interface BoundOperation {
  name: string;
  style: 'document' | 'rpc';
  soapAction: string;
  input: BoundMessage | undefined;
  output: BoundMessage | undefined;
}

export interface WsdlPort {
  name: string;
  soapVersion: '1.1' | '1.2';
  location: string;
  /** In the binding's order; overloads share a name. */
  operations: BoundOperation[];
}

export interface WsdlService {
  name: string;
  ports: WsdlPort[];
}

type Ordered = Record<string, unknown> & { ':@'?: Record<string, string> };

const parser = new XMLParser({
  preserveOrder: true,
  ignoreAttributes: false,
  attributeNamePrefix: '',
  parseTagValue: false,
  parseAttributeValue: false,
  processEntities: false,
  htmlEntities: false,
  ignoreDeclaration: true,
  ignorePiTags: true,
});

const predefinedEntities: Record<string, string> = { lt: '<', gt: '>', amp: '&', quot: '"', apos: "'" };

/** An attribute value with its character and predefined entity references replaced. */
function decodeReferences(value: string): string {
  return value.replace(/&(#x[0-9a-fA-F]+|#\d+|lt|gt|amp|quot|apos);/g, (whole, ref: string) => {
    if (ref[0] !== '#') return predefinedEntities[ref] ?? whole;
    const code = ref[1] === 'x' ? Number.parseInt(ref.slice(2), 16) : Number(ref.slice(1));
    return code <= 0x10ffff ? String.fromCodePoint(code) : whole;
  });
}

function toNode(ordered: Ordered, inherited: Map<string, string>): XmlNode | undefined {
  const tag = Object.keys(ordered).find((key) => key !== ':@' && key !== '#text' && key !== '#comment');
  if (tag === undefined) return undefined;
  const attributes: Record<string, string> = {};
  let scope = inherited;
  for (const [name, raw] of Object.entries(ordered[':@'] ?? {})) {
    const value = decodeReferences(String(raw));
    if (name === 'xmlns' || name.startsWith('xmlns:')) {
      if (scope === inherited) scope = new Map(inherited);
      scope.set(name === 'xmlns' ? '' : name.slice(6), value);
    } else {
      attributes[name] = value;
    }
  }
  const colon = tag.indexOf(':');
  const node: XmlNode = {
    ns: scope.get(colon === -1 ? '' : tag.slice(0, colon)) ?? '',
    local: colon === -1 ? tag : tag.slice(colon + 1),
    attributes,
    scope,
    children: [],
  };
  for (const child of (ordered[tag] as Ordered[] | undefined) ?? []) {
    const element = toNode(child, scope);
    if (element) node.children.push(element);
  }
  return node;
}

/** A QName attribute value resolved where it is written; an unprefixed one takes the default namespace. */
function qname(value: string | undefined, node: XmlNode): QName | undefined {
  if (value === undefined) return undefined;
  const colon = value.indexOf(':');
  if (colon === -1) return { ns: node.scope.get('') ?? '', local: value };
  return { ns: node.scope.get(value.slice(0, colon)) ?? '', local: value.slice(colon + 1) };
}

const key = (name: QName) => `{${name.ns}}${name.local}`;

/** Named components of one kind: by namespace and name, and by name alone for QNames that resolve nowhere. */
class Components<T> {
  readonly #byName = new Map<string, T>();
  readonly #byLocal = new Map<string, T[]>();

  add(name: QName, value: T): void {
    if (this.#byName.has(key(name))) return;
    this.#byName.set(key(name), value);
    this.#byLocal.set(name.local, [...(this.#byLocal.get(name.local) ?? []), value]);
  }

  /**
   * The component named; a name written without a usable prefix (Glue and PHP generators write `type="Foo"` with no
   * default namespace) falls back to the one component of that local name, as node-soap and zeep do.
   */
  get(name: QName | undefined): T | undefined {
    if (name === undefined) return undefined;
    const found = this.#byName.get(key(name));
    if (found !== undefined) return found;
    const candidates = this.#byLocal.get(name.local);
    return candidates?.length === 1 ? candidates[0] : undefined;
  }
}

const wsdlChildren = (node: XmlNode, local: string) => node.children.filter((c) => c.ns === wsdlNamespace && c.local === local);

/**
 * The SOAP services of the WSDL documents given (the main document and every document it imports, in any order):
 * each port whose binding is a SOAP 1.1 or 1.2 binding, with its operations as the binding binds them. Ports of other
 * bindings (HTTP GET/POST) are left out. From the schemas (in `wsdl:types` or imported documents), the global
 * attributes and attribute groups (`globals`), which node-soap does not keep.
 */
export function readWsdlDocuments(documents: readonly string[]): { services: WsdlService[]; globals: SchemaGlobals } {
  const roots: XmlNode[] = [];
  const globals: SchemaGlobals = { attributes: new Map(), attributeGroups: new Map() };
  for (const text of documents) {
    let parsed: Ordered[];
    try {
      parsed = parser.parse(text) as Ordered[];
    } catch {
      continue;
    }
    for (const top of parsed) {
      const root = toNode(top, new Map());
      if (root?.ns === wsdlNamespace && root.local === 'definitions') {
        roots.push(root);
        for (const types of wsdlChildren(root, 'types')) for (const schema of types.children) addSchemaGlobals(schema, globals);
      } else if (root) {
        addSchemaGlobals(root, globals);
      }
    }
  }
  return { services: readServices(roots), globals };
}

/**
 * What node-soap drops of a schema, as schema-model.ts reads schema nodes (`name`, `$attribute`s, `children`, the
 * prefixes in scope as `xmlns`): its global attributes and attribute groups, by `{namespace}name`.
 */
export interface SchemaGlobals {
  attributes: Map<string, SchemaNode>;
  attributeGroups: Map<string, SchemaNode>;
}

/** A schema component in the shape of node-soap's parsed schema nodes. */
export interface SchemaNode {
  name: string;
  children: SchemaNode[];
  xmlns: Record<string, string>;
  [attribute: `$${string}`]: string | undefined;
}

function addSchemaGlobals(schema: XmlNode, globals: SchemaGlobals): void {
  if (!xsdNamespaces.has(schema.ns) || schema.local !== 'schema') return;
  const tns = schema.attributes.targetNamespace ?? '';
  for (const child of schema.children) {
    const name = child.attributes.name;
    if (!xsdNamespaces.has(child.ns) || name === undefined) continue;
    const into =
      child.local === 'attribute' ? globals.attributes : child.local === 'attributeGroup' ? globals.attributeGroups : undefined;
    if (into && !into.has(`{${tns}}${name}`)) into.set(`{${tns}}${name}`, schemaNode(child, tns));
  }
}

function schemaNode(node: XmlNode, tns: string): SchemaNode {
  const converted: SchemaNode = {
    name: node.local,
    children: node.children.filter((child) => xsdNamespaces.has(child.ns)).map((child) => schemaNode(child, tns)),
    // node-soap's key for the target namespace, which an unprefixed QName in a schema resolves to.
    xmlns: { ...Object.fromEntries(node.scope), __tns__: tns },
  };
  for (const [name, value] of Object.entries(node.attributes)) converted[`$${name}`] = value;
  return converted;
}

function readServices(roots: XmlNode[]): WsdlService[] {
  const messages = new Components<WsdlPart[]>();
  const portTypes = new Components<XmlNode>();
  const bindings = new Components<XmlNode>();
  for (const root of roots) {
    const tns = root.attributes.targetNamespace ?? '';
    for (const message of wsdlChildren(root, 'message')) {
      const parts = wsdlChildren(message, 'part').map((part) => ({
        name: part.attributes.name ?? '',
        element: qname(part.attributes.element, part),
        type: qname(part.attributes.type, part),
      }));
      messages.add({ ns: tns, local: message.attributes.name ?? '' }, parts);
    }
    for (const portType of wsdlChildren(root, 'portType'))
      portTypes.add({ ns: tns, local: portType.attributes.name ?? '' }, portType);
    for (const binding of wsdlChildren(root, 'binding')) bindings.add({ ns: tns, local: binding.attributes.name ?? '' }, binding);
  }

  const services: WsdlService[] = [];
  const seen = new Set<string>();
  for (const root of roots) {
    for (const service of wsdlChildren(root, 'service')) {
      const name = service.attributes.name ?? '';
      // A circular import brings the main document in twice: its services count once.
      if (seen.has(name)) continue;
      seen.add(name);
      const ports: WsdlPort[] = [];
      for (const port of wsdlChildren(service, 'port')) {
        const binding = bindings.get(qname(port.attributes.binding, port));
        const soap = binding?.children.find((c) => soapBindingNamespaces[c.ns] !== undefined && c.local === 'binding');
        if (!binding || !soap) continue;
        const address = port.children.find((c) => soapBindingNamespaces[c.ns] !== undefined && c.local === 'address');
        const portType = portTypes.get(qname(binding.attributes.type, binding));
        ports.push({
          name: port.attributes.name ?? '',
          soapVersion: soapBindingNamespaces[soap.ns],
          location: address?.attributes.location ?? '',
          operations: wsdlChildren(binding, 'operation').map((operation) =>
            boundOperation(operation, soap.attributes.style, portType, messages),
          ),
        });
      }
      services.push({ name, ports });
    }
  }
  return services;
}

function boundOperation(
  operation: XmlNode,
  bindingStyle: string | undefined,
  portType: XmlNode | undefined,
  messages: Components<WsdlPart[]>,
): BoundOperation {
  const name = operation.attributes.name ?? '';
  const soapOperation = operation.children.find((c) => soapBindingNamespaces[c.ns] !== undefined && c.local === 'operation');
  const bindingInput = wsdlChildren(operation, 'input')[0];
  const bindingOutput = wsdlChildren(operation, 'output')[0];
  // WSDL 1.1 §2.4.6: overloads share a name and are told apart by the names of their input and output.
  const abstract = (portType === undefined ? undefined : operationsByName(portType).get(name))?.find(
    (candidate) =>
      candidate.attributes.name === name &&
      sameName(wsdlChildren(candidate, 'input')[0], bindingInput) &&
      sameName(wsdlChildren(candidate, 'output')[0], bindingOutput),
  );
  const style = soapOperation?.attributes.style ?? bindingStyle;
  return {
    name,
    style: style === 'rpc' ? 'rpc' : 'document',
    soapAction: soapOperation?.attributes.soapAction ?? '',
    input: boundMessage(wsdlChildren(abstract ?? emptyNode, 'input')[0], bindingInput, messages),
    output: boundMessage(wsdlChildren(abstract ?? emptyNode, 'output')[0], bindingOutput, messages),
  };
}

const portTypeOperations = new WeakMap<XmlNode, Map<string, XmlNode[]>>();

/** A portType's operations by name, indexed once (a port type of 1,500 operations is matched 1,500 times). */
function operationsByName(portType: XmlNode): Map<string, XmlNode[]> {
  let index = portTypeOperations.get(portType);
  if (!index) {
    index = new Map();
    for (const operation of wsdlChildren(portType, 'operation')) {
      const name = operation.attributes.name ?? '';
      index.set(name, [...(index.get(name) ?? []), operation]);
    }
    portTypeOperations.set(portType, index);
  }
  return index;
}

const emptyNode: XmlNode = { ns: '', local: '', attributes: {}, scope: new Map(), children: [] };

/** Whether a binding's input (or output) is the portType's one: the same `name`, or no name on the binding's side. */
function sameName(abstract: XmlNode | undefined, bound: XmlNode | undefined): boolean {
  return bound?.attributes.name === undefined || abstract?.attributes.name === bound.attributes.name;
}

function boundMessage(abstract: XmlNode | undefined, bound: XmlNode | undefined, messages: Components<WsdlPart[]>) {
  if (!abstract) return undefined;
  const messageName = qname(abstract.attributes.message, abstract);
  const parts = messages.get(messageName);
  const body = bound?.children.find((c) => soapBindingNamespaces[c.ns] !== undefined && c.local === 'body');
  const listed = body?.attributes.parts?.split(/\s+/).filter(Boolean);
  const headers = (bound?.children ?? [])
    .filter((c) => soapBindingNamespaces[c.ns] !== undefined && c.local === 'header')
    .flatMap(
      (header) =>
        messages.get(qname(header.attributes.message, header))?.filter((part) => part.name === header.attributes.part) ?? [],
    );
  return {
    name: messageName?.local ?? abstract.attributes.name ?? '',
    headers,
    parts: listed === undefined || parts === undefined ? parts : parts.filter((part) => listed.includes(part.name)),
    use: body?.attributes.use === 'encoded' ? 'encoded' : 'literal',
    namespace: body?.attributes.namespace,
  } satisfies BoundMessage;
}
