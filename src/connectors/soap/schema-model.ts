import type { WSDL } from 'soap/lib/wsdl/index.js';
import type { SchemaGlobals } from './wsdl-documents.ts';

/**
 * The XML Schema types of a WSDL's messages, read from node-soap's parsed schema nodes the way the XML Schema
 * specification defines them: named and anonymous types, `type=` and `ref=`, `sequence`/`all`/`choice` (nested),
 * groups, `complexContent` extension (the base type's content first) and restriction, `simpleContent`, `xsd:any`,
 * attributes (local, `ref`, attribute groups, `anyAttribute`, inherited, prohibited), simple types with enumerations
 * over the built-in types, and SOAP-encoded arrays. Types are resolved lazily and
 * cached per schema node, so a recursive type (a tree of nodes) is no problem.
 */

// biome-ignore lint/suspicious/noExplicitAny: node-soap's parsed schema nodes are untyped.
type Node = any;

export const xsdNamespaces = new Set([
  'http://www.w3.org/2001/XMLSchema',
  'http://www.w3.org/2000/10/XMLSchema',
  'http://www.w3.org/1999/XMLSchema',
]);
const soapEncodingNamespace = 'http://schemas.xmlsoap.org/soap/encoding/';
/** The namespace the `xml` prefix is bound to, always (Namespaces in XML 1.0 §3). */
export const xmlNamespace = 'http://www.w3.org/XML/1998/namespace';
/** node-soap's key for a schema's target namespace in its `xmlns` maps. */
const tnsKey = '__tns__';

/** A simple value: a built-in type (by its local name), possibly restricted to an enumeration. */
export interface SimpleModel {
  kind: 'simple';
  /** `xs:int`, `xs:string`, … (`xs:anyType` when unknown). */
  type: string;
  builtin: string;
  enumeration?: string[];
}

/** An element's content: child elements in order, and whether any others may appear (`xsd:any`). */
export interface ComplexModel {
  kind: 'complex';
  type: string;
  /** A named type's namespace (`type` is its local name). */
  ns?: string;
  particles: Particle[];
  open: boolean;
  /** With `open`: where the `xsd:any` stands among the particles (elements it takes are written there). */
  anyAt?: number;
  /** simpleContent: a text value beside attributes (`$value`). */
  text?: SimpleModel;
  /** A SOAP-encoded array: its items, any number of them. */
  arrayOf?: TypeModel;
  /** The attributes declared for the type, by name (given in `$attributes`). */
  attributes?: AttributeModel[];
  /** `anyAttribute`: attributes beyond the declared ones are allowed. */
  anyAttribute?: boolean;
}

/** One attribute of a complex type. */
export interface AttributeModel {
  name: string;
  /** The namespace it is written in: a global (`ref`) or qualified attribute's schema's, '' for unqualified. */
  ns: string;
  required: boolean;
  model: SimpleModel;
}

export type TypeModel = SimpleModel | ComplexModel;

/** One child element of a complex type. */
export interface Particle {
  name: string;
  /** The namespace the element is written in: its schema's for a global or qualified element, '' for unqualified. */
  ns: string;
  /** The element's name when it is not the param's: an rpc part declared with `element=` (see signature.ts). */
  elementName?: string;
  required: boolean;
  repeated: boolean;
  nillable: boolean;
  /** Resolved on first use (types may be recursive). */
  readonly model: TypeModel;
}

const anyType: SimpleModel = { kind: 'simple', type: 'xs:anyType', builtin: 'anyType' };

function simple(builtin: string): SimpleModel {
  return { kind: 'simple', type: `xs:${builtin}`, builtin };
}

/** The model of a built-in simple type, by its local name (`anyType`: anything goes). */
export function simpleModelOf(builtin: string): SimpleModel {
  return simple(builtin);
}

/** The resolver of one parsed WSDL. */
export class SchemaModel {
  readonly #definitions: Node;
  readonly #globals: SchemaGlobals;
  readonly #cache = new Map<Node, TypeModel>();
  /** Each schema's named types by name, as its own children declare them (see #namedInSchema). */
  readonly #namedTypes = new Map<Node, Map<string, Node>>();

  /** `globals`: the global attributes and attribute groups, which node-soap's parsed schemas do not keep. */
  constructor(wsdl: WSDL, globals: SchemaGlobals = { attributes: new Map(), attributeGroups: new Map() }) {
    this.#definitions = wsdl.definitions as Node;
    this.#globals = globals;
  }

  /** The model of a type node (complexType or simpleType) in the schema of `namespace`. */
  typeOf(node: Node, namespace: string | undefined): TypeModel {
    const cached = this.#cache.get(node);
    if (cached) return cached;
    if (node?.name === 'simpleType') {
      const model = this.#simpleType(node, namespace);
      this.#cache.set(node, model);
      return model;
    }
    const model: ComplexModel = {
      kind: 'complex',
      type: node?.$name ?? 'anonymous',
      ...(node?.$name !== undefined && namespace !== undefined && { ns: namespace }),
      particles: [],
      open: false,
    };
    // Cached before it is filled: a type that contains itself finds this object.
    this.#cache.set(node, model);
    this.#fillComplex(model, node, namespace);
    return model;
  }

  /** The model of a type named by a QName written on `site`. */
  namedType(qname: string | undefined, site: Node, namespace: string | undefined): TypeModel {
    if (!qname) return anyType;
    const { ns, local } = this.#resolve(qname, site, namespace);
    // An unprefixed name no schema declares: a built-in (schemas often make XSD their default namespace).
    return this.#declaredType(ns, local) ?? (!qname.includes(':') && builtinNames.has(local) ? simple(local) : anyType);
  }

  /** The model of the type `ns`/`local` names (a built-in when `ns` is XML Schema's, or when no schema declares it). */
  typeNamed(ns: string, local: string): TypeModel {
    return this.#declaredType(ns, local) ?? (builtinNames.has(local) ? simple(local) : anyType);
  }

  /** A built-in of XML Schema or SOAP encoding, or a type a schema declares; undefined for any other name. */
  #declaredType(ns: string | undefined, local: string): TypeModel | undefined {
    if (ns !== undefined && xsdNamespaces.has(ns)) return simple(local);
    if (ns === soapEncodingNamespace) return local === 'Array' ? arrayModel(anyType) : simple(local);
    const schema = this.#schema(ns);
    const node = schema?.complexTypes?.[local] ?? schema?.types?.[local] ?? this.#namedInSchema(schema, local);
    return node ? this.typeOf(node, ns) : undefined;
  }

  /**
   * A type declared in `schema` that node-soap's tables leave out: it drops a named simple type whose name is a
   * built-in's (`sqltypes:int`, a restriction of `xsd:int`), which then read as text instead of as its base.
   */
  #namedInSchema(schema: Node, local: string): Node {
    if (!schema) return undefined;
    let named = this.#namedTypes.get(schema);
    if (!named) {
      named = new Map();
      for (const child of schema.children ?? []) {
        if ((child.name === 'simpleType' || child.name === 'complexType') && typeof child.$name === 'string') {
          if (!named.has(child.$name)) named.set(child.$name, child);
        }
      }
      this.#namedTypes.set(schema, named);
    }
    return named.get(local);
  }

  /** The global element `ns`/`local` names: its declaration node, or undefined when no schema declares it. */
  globalElement(ns: string | undefined, local: string): Node {
    return this.#schema(ns)?.elements?.[local];
  }

  /** The element a `ref=` names, and the namespace it is declared in. */
  element(qname: string, site: Node, namespace: string | undefined): { node: Node; ns: string | undefined } | undefined {
    const { ns, local } = this.#resolve(qname, site, namespace);
    const node = this.globalElement(ns, local);
    return node ? { node, ns } : undefined;
  }

  /** The model of an element declaration: its `type=`, or its inline type, or anyType. */
  elementType(element: Node, namespace: string | undefined): TypeModel {
    if (element.$type) return this.namedType(element.$type, element, namespace);
    const inline = (element.children ?? []).find((c: Node) => c.name === 'complexType' || c.name === 'simpleType');
    return inline ? this.typeOf(inline, namespace) : anyType;
  }

  #schema(ns: string | undefined): Node {
    return ns === undefined ? undefined : this.#definitions.schemas?.[ns];
  }

  /**
   * A QName written on a schema node, as a namespace and local name: its prefix looked up in the declarations in
   * scope (the node's own, its schema's, the WSDL's). An unprefixed name is looked for in the schema's own target
   * namespace (node-soap keeps a default namespace under the same key as the target namespace).
   */
  #resolve(qname: string, site: Node, namespace: string | undefined): { ns: string | undefined; local: string } {
    const colon = qname.indexOf(':');
    const local = colon === -1 ? qname : qname.slice(colon + 1);
    if (colon === -1) return { ns: namespace ?? site?.xmlns?.[tnsKey], local };
    const prefix = qname.slice(0, colon);
    if (prefix === 'xml') return { ns: xmlNamespace, local };
    const ns =
      site?.xmlns?.[prefix] ??
      site?.schemaXmlns?.[prefix] ??
      this.#schema(namespace)?.xmlns?.[prefix] ??
      site?.definitionsXmlns?.[prefix] ??
      this.#definitions.xmlns?.[prefix];
    return { ns, local };
  }

  #simpleType(node: Node, namespace: string | undefined): SimpleModel {
    const restriction = (node.children ?? []).find((c: Node) => c.name === 'restriction');
    if (!restriction) return { ...anyType, type: node.$name ?? 'anonymous' };
    const base = this.namedType(restriction.$base, restriction, namespace);
    const enumeration = (restriction.children ?? [])
      .filter((c: Node) => c.name === 'enumeration')
      .map((c: Node) => String(c.$value));
    const builtin = base.kind === 'simple' ? base.builtin : 'anyType';
    return {
      kind: 'simple',
      type: node.$name ?? base.type,
      builtin,
      ...(enumeration.length > 0 && { enumeration }),
    };
  }

  #fillComplex(model: ComplexModel, node: Node, namespace: string | undefined): void {
    for (const child of node?.children ?? []) {
      if (child.name === 'complexContent') this.#complexContent(model, child, namespace);
      else if (child.name === 'simpleContent') this.#simpleContent(model, child, namespace);
      else if (attributeUses.has(child.name)) this.#attributeUse(model, child, namespace, new Set());
      else this.#particles(model, child, namespace, false, false);
    }
  }

  /** The attributes a base type gives a type derived from it (extension and restriction both keep them). */
  #inheritAttributes(model: ComplexModel, base: TypeModel): void {
    if (base.kind !== 'complex') return;
    if (base.attributes) model.attributes = [...(model.attributes ?? []), ...base.attributes];
    model.anyAttribute ||= base.anyAttribute;
  }

  /**
   * Adds what an `attribute`, `attributeGroup` (a reference to a global group) or `anyAttribute` declares. An attribute
   * declared again replaces the inherited one of its name; `use="prohibited"` removes it.
   */
  #attributeUse(model: ComplexModel, node: Node, namespace: string | undefined, groups: Set<unknown>): void {
    if (node.name === 'anyAttribute') {
      model.anyAttribute = true;
    } else if (node.name === 'attributeGroup' && node.$ref) {
      const { ns, local } = this.#resolve(node.$ref, node, namespace);
      const group = this.#globals.attributeGroups.get(`{${ns ?? ''}}${local}`);
      // A group that contains itself (through others) is read once.
      if (group === undefined || groups.has(group)) return;
      groups.add(group);
      for (const child of group.children) this.#attributeUse(model, child, ns, groups);
    } else if (node.name === 'attribute') {
      const attribute = this.#attribute(node, namespace);
      if (attribute === undefined) return;
      const others = (model.attributes ?? []).filter((a) => a.name !== attribute.name || a.ns !== attribute.ns);
      model.attributes = node.$use === 'prohibited' ? others : [...others, attribute];
    }
  }

  #attribute(node: Node, namespace: string | undefined): AttributeModel | undefined {
    const required = node.$use === 'required';
    if (node.$ref) {
      const { ns, local } = this.#resolve(node.$ref, node, namespace);
      // soapenc:arrayType on a SOAP-encoded array's restriction describes the array (see soapArrayItem).
      if (ns === soapEncodingNamespace) return undefined;
      const declaration = this.#globals.attributes.get(`{${ns ?? ''}}${local}`);
      const model = declaration ? this.#attributeType(declaration, ns) : simple('anySimpleType');
      return { name: local, ns: ns ?? '', required, model };
    }
    if (typeof node.$name !== 'string') return undefined;
    const form = node.$form ?? this.#schema(namespace)?.$attributeFormDefault;
    return {
      name: node.$name,
      ns: form === 'qualified' ? (namespace ?? '') : '',
      required,
      model: this.#attributeType(node, namespace),
    };
  }

  #attributeType(node: Node, namespace: string | undefined): SimpleModel {
    const inline = (node.children ?? []).find((c: Node) => c.name === 'simpleType');
    const model = node.$type ? this.namedType(node.$type, node, namespace) : inline ? this.typeOf(inline, namespace) : undefined;
    return model?.kind === 'simple' ? model : simple('anySimpleType');
  }

  #complexContent(model: ComplexModel, node: Node, namespace: string | undefined): void {
    for (const derivation of node.children ?? []) {
      if (derivation.name !== 'extension' && derivation.name !== 'restriction') continue;
      const base = this.namedType(derivation.$base, derivation, namespace);
      const arrayType = soapArrayItem(derivation);
      if (arrayType !== undefined || (base.kind === 'complex' && base.arrayOf)) {
        model.arrayOf = arrayType !== undefined ? this.namedType(arrayType, derivation, namespace) : anyType;
        model.open = true;
        continue;
      }
      this.#inheritAttributes(model, base);
      // An extension has the base type's content first; a restriction restates what it keeps.
      if (derivation.name === 'extension' && base.kind === 'complex') {
        if (base.open) model.anyAt ??= (base.anyAt ?? base.particles.length) + model.particles.length;
        model.particles.push(...base.particles);
        model.open ||= base.open;
      }
      for (const child of derivation.children ?? []) {
        if (attributeUses.has(child.name)) this.#attributeUse(model, child, namespace, new Set());
        else this.#particles(model, child, namespace, false, false);
      }
    }
  }

  #simpleContent(model: ComplexModel, node: Node, namespace: string | undefined): void {
    const derivation = (node.children ?? []).find((c: Node) => c.name === 'extension' || c.name === 'restriction');
    const base = derivation ? this.namedType(derivation.$base, derivation, namespace) : anyType;
    model.text = base.kind === 'simple' ? base : (base.text ?? anyType);
    this.#inheritAttributes(model, base);
    for (const child of derivation?.children ?? []) {
      if (attributeUses.has(child.name)) this.#attributeUse(model, child, namespace, new Set());
    }
  }

  /** Adds the elements a content-model node declares; inside a choice or an optional group every one is optional. */
  #particles(model: ComplexModel, node: Node, namespace: string | undefined, optional: boolean, repeated: boolean): void {
    const groupOptional = optional || node.$minOccurs === '0';
    const groupRepeated = repeated || isMany(node.$maxOccurs);
    switch (node.name) {
      case 'sequence':
      case 'all':
        for (const child of node.children ?? []) this.#particles(model, child, namespace, groupOptional, groupRepeated);
        return;
      case 'choice':
        for (const child of node.children ?? []) this.#particles(model, child, namespace, true, groupRepeated);
        return;
      case 'group': {
        const definition = node.$ref ? this.#group(node.$ref, node, namespace) : node;
        for (const child of definition?.node?.children ?? definition?.children ?? []) {
          this.#particles(model, child, definition?.ns ?? namespace, groupOptional, groupRepeated);
        }
        return;
      }
      case 'any':
        model.open = true;
        model.anyAt ??= model.particles.length;
        return;
      case 'element':
        model.particles.push(this.#particle(node, namespace, optional, repeated));
        return;
      default:
        return;
    }
  }

  #group(ref: string, site: Node, namespace: string | undefined): { node: Node; ns: string | undefined } | undefined {
    const { ns, local } = this.#resolve(ref, site, namespace);
    const node = this.#schema(ns)?.groups?.[local];
    return node ? { node, ns } : undefined;
  }

  #particle(node: Node, namespace: string | undefined, optional: boolean, repeated: boolean): Particle {
    const referenced = node.$ref ? this.element(node.$ref, node, namespace) : undefined;
    const declaration = referenced?.node ?? node;
    const declaredIn = referenced?.ns ?? namespace;
    const name = declaration.$name ?? String(node.$ref ?? '').replace(/^.*:/, '');
    // XML Schema 3.3.2: a global element is always in its schema's namespace; a local one when its form (or else its
    // schema's elementFormDefault) is qualified.
    const form = node.$form ?? this.#schema(namespace)?.$elementFormDefault;
    const ns = referenced ? (referenced.ns ?? '') : form === 'qualified' ? (namespace ?? '') : '';
    let model: TypeModel | undefined;
    const resolve = () => {
      model ??= this.elementType(declaration, declaredIn);
      return model;
    };
    return {
      name,
      ns,
      required: !optional && node.$minOccurs !== '0',
      repeated: repeated || isMany(node.$maxOccurs),
      nillable: node.$nillable === 'true' || declaration.$nillable === 'true',
      get model() {
        return resolve();
      },
    };
  }
}

/** The schema nodes that declare a complex type's attributes. */
const attributeUses = new Set(['attribute', 'attributeGroup', 'anyAttribute']);

function isMany(maxOccurs: string | undefined): boolean {
  return maxOccurs === 'unbounded' || (maxOccurs !== undefined && Number(maxOccurs) > 1);
}

/** `wsdl:arrayType="tns:Item[]"` on a SOAP-encoded array's restriction, as the item type's QName. */
function soapArrayItem(derivation: Node): string | undefined {
  for (const attribute of derivation.children ?? []) {
    const arrayType = Object.entries(attribute).find(([key]) => key.endsWith(':arrayType') || key === '$arrayType')?.[1];
    if (typeof arrayType === 'string') return arrayType.replace(/\[[\d,]*\]$/, '');
  }
  return undefined;
}

function arrayModel(items: TypeModel): ComplexModel {
  return { kind: 'complex', type: 'soapenc:Array', particles: [], open: true, arrayOf: items };
}

/** The built-in integer types of XML Schema, by local name. */
export const integerBuiltins = new Set([
  'integer',
  'int',
  'long',
  'short',
  'byte',
  'nonNegativeInteger',
  'positiveInteger',
  'nonPositiveInteger',
  'negativeInteger',
  'unsignedLong',
  'unsignedInt',
  'unsignedShort',
  'unsignedByte',
]);

/** The built-in simple types of XML Schema, by local name. */
export const builtinNames = new Set([
  'string',
  'normalizedString',
  'token',
  'language',
  'Name',
  'NCName',
  'ID',
  'IDREF',
  'IDREFS',
  'ENTITY',
  'ENTITIES',
  'NMTOKEN',
  'NMTOKENS',
  'anyURI',
  'QName',
  'NOTATION',
  'boolean',
  'decimal',
  ...integerBuiltins,
  'float',
  'double',
  'duration',
  'dateTime',
  'date',
  'time',
  'gYear',
  'gYearMonth',
  'gMonth',
  'gMonthDay',
  'gDay',
  'hexBinary',
  'base64Binary',
  'anyType',
  'anySimpleType',
]);
