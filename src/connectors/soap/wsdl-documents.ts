import { append } from './append.ts';
import { soapBindingNamespaces, wsdlNamespace } from './namespaces.ts';
import type { QName } from './xml-reader.ts';
import type { XmlElement } from './xml-tree.ts';

/**
 * The WSDL 1.1 part of a WSDL (messages, port types, bindings, services), read from its documents' trees as the WSDL
 * 1.1 specification defines it: overloads (operations sharing a name) kept apart, the `namespace` of `soap:body`
 * (where an rpc wrapper belongs), circular `wsdl:import`s read once.
 */

export type { QName } from './xml-reader.ts';

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
  /** The message's parts that go in the Body (`soap:body parts=`, else all). */
  parts: WsdlPart[];
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
  /** The operation's `wsdl:documentation` text (the port type's, else the binding's), as written: upstream text. */
  documentation?: string;
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

/** A QName attribute value resolved where it is written; an unprefixed one takes the default namespace. */
function qname(value: string | undefined, node: XmlElement): QName | undefined {
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
    append(this.#byLocal, name.local, value);
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

const wsdlChildren = (node: XmlElement, local: string) =>
  node.children.filter((c) => c.ns === wsdlNamespace && c.local === local);

/**
 * The SOAP services of a WSDL's definitions (its own and every one it imports, in any order): each port whose binding
 * is a SOAP 1.1 or 1.2 binding, with its operations as the binding binds them (but for those boundOperation leaves
 * out). Ports of other bindings (HTTP GET/POST) are left out.
 */
export function readServices(roots: readonly XmlElement[]): WsdlService[] {
  const messages = new Components<WsdlPart[]>();
  const portTypes = new Components<XmlElement>();
  const bindings = new Components<XmlElement>();
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
          operations: wsdlChildren(binding, 'operation').flatMap((operation) => {
            const bound = boundOperation(operation, soap.attributes.style, portType, messages);
            return bound === undefined ? [] : [bound];
          }),
        });
      }
      services.push({ name, ports });
    }
  }
  return services;
}

function boundOperation(
  operation: XmlElement,
  bindingStyle: string | undefined,
  portType: XmlElement | undefined,
  messages: Components<WsdlPart[]>,
): BoundOperation | undefined {
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
  // An operation its port type does not have, or whose input or output names a message the WSDL never declares,
  // cannot be called as described: it is left out, as python-zeep leaves it out (PHP's SoapClient refuses the WSDL).
  if (abstract === undefined) return undefined;
  for (const message of [wsdlChildren(abstract, 'input')[0], wsdlChildren(abstract, 'output')[0]]) {
    if (message !== undefined && messages.get(qname(message.attributes.message, message)) === undefined) return undefined;
  }
  const style = soapOperation?.attributes.style ?? bindingStyle;
  const documentation = documentationOf(abstract) ?? documentationOf(operation);
  return {
    name,
    style: style === 'rpc' ? 'rpc' : 'document',
    soapAction: soapOperation?.attributes.soapAction ?? '',
    input: boundMessage(wsdlChildren(abstract, 'input')[0], bindingInput, messages),
    output: boundMessage(wsdlChildren(abstract, 'output')[0], bindingOutput, messages),
    ...(documentation !== undefined && { documentation }),
  };
}

/** The text of an element's `wsdl:documentation` (markup inside it read as its text), undefined when it has none. */
function documentationOf(node: XmlElement): string | undefined {
  const documentation = wsdlChildren(node, 'documentation')[0];
  if (documentation === undefined) return undefined;
  const text = (element: XmlElement): string => [element.text, ...element.children.map(text)].join(' ');
  const found = text(documentation).trim();
  return found === '' ? undefined : found;
}

const portTypeOperations = new WeakMap<XmlElement, Map<string, XmlElement[]>>();

/** A portType's operations by name, indexed once (a port type of 1,500 operations is matched 1,500 times). */
function operationsByName(portType: XmlElement): Map<string, XmlElement[]> {
  let index = portTypeOperations.get(portType);
  if (!index) {
    index = new Map();
    for (const operation of wsdlChildren(portType, 'operation')) {
      const name = operation.attributes.name ?? '';
      append(index, name, operation);
    }
    portTypeOperations.set(portType, index);
  }
  return index;
}

/** Whether a binding's input (or output) is the portType's one: the same `name`, or no name on the binding's side. */
function sameName(abstract: XmlElement | undefined, bound: XmlElement | undefined): boolean {
  return bound?.attributes.name === undefined || abstract?.attributes.name === bound.attributes.name;
}

function boundMessage(abstract: XmlElement | undefined, bound: XmlElement | undefined, messages: Components<WsdlPart[]>) {
  if (!abstract) return undefined;
  const messageName = qname(abstract.attributes.message, abstract);
  // Declared: boundOperation leaves out an operation whose messages are not.
  const parts = messages.get(messageName) ?? [];
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
    parts: listed === undefined ? parts : parts.filter((part) => listed.includes(part.name)),
    use: body?.attributes.use === 'encoded' ? 'encoded' : 'literal',
    namespace: body?.attributes.namespace,
  } satisfies BoundMessage;
}
