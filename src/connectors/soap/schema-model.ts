import { append } from './append.ts';
import { type Facets, readFacets } from './facets.ts';
import { soapEncodingNamespace, xsdNamespace, xsdNamespaces } from './namespaces.ts';
import type { XmlElement } from './xml-reader.ts';
import type { SchemaIndex } from './xsd-index.ts';

/**
 * The XML Schema types of a WSDL's messages, compiled from the schema documents' elements (xsd-index.ts finds the
 * global ones) the way the XML Schema specification defines them: named and anonymous types, `type=` and `ref=`,
 * `sequence`/`all`/`choice` (nested), groups, `complexContent` extension (the base type's content first) and
 * restriction, `simpleContent`, `xsd:any`, attributes (local, `ref`, attribute groups, `anyAttribute`, inherited,
 * prohibited), simple types (enumerations and facets over the built-in types, lists, unions), SOAP-encoded arrays,
 * substitution groups and derived types. Each local element's namespace follows its own schema document's
 * `elementFormDefault`. Types are compiled lazily and cached per schema element, so a recursive type (a tree of
 * nodes) is no problem.
 */

type Node = XmlElement;

/** A schema element's children in XML Schema's namespace (annotations and foreign extensions are other elements). */
function xsdChildren(node: Node): Node[] {
  return node.children.filter((child) => xsdNamespaces.has(child.ns));
}

function xsdChild(node: Node, ...locals: string[]): Node | undefined {
  return node.children.find((child) => xsdNamespaces.has(child.ns) && locals.includes(child.local));
}

/**
 * A simple value: a built-in type (by its local name), possibly restricted (an enumeration, facets), or a list or a
 * union of simple types.
 */
export interface SimpleModel {
  kind: 'simple';
  /** `xs:int`, `xs:string`, … (`xs:anyType` when unknown). */
  type: string;
  /** The built-in it restricts (`anySimpleType` for a list or a union). */
  builtin: string;
  enumeration?: string[];
  facets?: Facets;
  /** `xs:list`: the value is its items, separated by whitespace. */
  list?: SimpleModel;
  /** `xs:union`: the value is a value of one of its member types. */
  union?: SimpleModel[];
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
  /**
   * A named type's derived types (by extension or restriction, at any depth), by `{namespace}name`: what an
   * answer's `xsi:type` may name in its place. Compiled on first use.
   */
  readonly subtypes?: ReadonlyMap<string, ComplexModel>;
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
  /** A member of a substitution group: the name of the head element it may stand in for, right before it. */
  substitutes?: string;
  /** Resolved on first use (types may be recursive). */
  readonly model: TypeModel;
}

const anyType: SimpleModel = { kind: 'simple', type: 'xs:anyType', builtin: 'anyType' };

function simple(builtin: string): SimpleModel {
  return { kind: 'simple', type: `xs:${builtin}`, builtin };
}

/** A complex type's particles looked up by name, for the checks, the writer and the answer's shaping alike. */
export interface ParticleIndex {
  /** Each declared name's particle (of a name declared twice, in two branches of a choice, the last). */
  byName: ReadonlyMap<string, Particle>;
  /** The same by the name the element is written with: a part declared with `element=` is under its element's name. */
  byElementName: ReadonlyMap<string, Particle>;
  /** By position: whether the particle is the first of its name (a name declared twice is written once). */
  firstOfName: readonly boolean[];
}

const particleIndexes = new WeakMap<ComplexModel, ParticleIndex>();

/**
 * The index of a compiled type's particles, made on its first use and kept with the model: every object of a large
 * request or answer would otherwise build it again.
 */
export function particleIndex(model: ComplexModel): ParticleIndex {
  let index = particleIndexes.get(model);
  if (index === undefined) {
    const byName = new Map<string, Particle>();
    const firstOfName = model.particles.map((particle) => {
      const first = !byName.has(particle.name);
      byName.set(particle.name, particle);
      return first;
    });
    const byElementName = new Map(model.particles.map((p) => [p.elementName ?? p.name, p]));
    index = { byName, byElementName, firstOfName };
    particleIndexes.set(model, index);
  }
  return index;
}

/** The model of a built-in simple type, by its local name (`anyType`: anything goes). */
export function simpleModelOf(builtin: string): SimpleModel {
  return simple(builtin);
}

/** The compiled types of one WSDL's schemas. */
export class SchemaModel {
  readonly #index: SchemaIndex;
  readonly #cache = new Map<Node, TypeModel>();

  constructor(index: SchemaIndex) {
    this.#index = index;
  }

  /** The model of a type element (complexType or simpleType) in the schema of `namespace`. */
  typeOf(node: Node, namespace: string | undefined): TypeModel {
    const cached = this.#cache.get(node);
    if (cached) return cached;
    if (node.local === 'simpleType') {
      // A simple type derived from itself (through others) finds anyType there: no schema can make this loop.
      this.#cache.set(node, { ...anyType, type: node.attributes.name ?? 'anonymous' });
      const model = this.#simpleType(node, namespace);
      this.#cache.set(node, model);
      return model;
    }
    const name = node.attributes.name;
    const model: ComplexModel = {
      kind: 'complex',
      type: name ?? 'anonymous',
      ...(name !== undefined && namespace !== undefined && { ns: namespace }),
      particles: [],
      open: false,
    };
    // Cached before it is filled: a type that contains itself finds this object.
    this.#cache.set(node, model);
    this.#fillComplex(model, node, namespace);
    if (name !== undefined && namespace !== undefined && this.#derivedFrom().has(`{${namespace}}${name}`)) {
      // Compiled when first read (an answer's xsi:type, or the copy a worker thread gets), then kept.
      const subtypes = () => {
        const value = this.#subtypes(`{${namespace}}${name}`);
        Object.defineProperty(model, 'subtypes', { value, enumerable: true });
        return value;
      };
      Object.defineProperty(model, 'subtypes', { enumerable: true, configurable: true, get: subtypes });
    }
    return model;
  }

  /** Named complex types by the `{ns}name` of the type each extends or restricts, built on first use. */
  #derivations: Map<string, Array<{ node: Node; ns: string; local: string }>> | undefined;

  #derivedFrom(): Map<string, Array<{ node: Node; ns: string; local: string }>> {
    if (this.#derivations) return this.#derivations;
    const derivations = new Map<string, Array<{ node: Node; ns: string; local: string }>>();
    for (const declared of this.#index.all('type')) {
      if (declared.node.local !== 'complexType') continue;
      const content = xsdChild(declared.node, 'complexContent', 'simpleContent');
      const derivation = content && xsdChild(content, 'extension', 'restriction');
      const base = derivation?.attributes.base;
      if (!derivation || !base) continue;
      const { ns, local } = this.#resolve(base, derivation, declared.ns);
      const key = `{${ns ?? ''}}${local}`;
      append(derivations, key, { node: declared.node, ns: declared.ns, local: declared.local });
    }
    this.#derivations = derivations;
    return derivations;
  }

  /** The complex types derived from the type `key` names, at any depth (a type derived twice over counts once). */
  #subtypes(key: string): ReadonlyMap<string, ComplexModel> {
    const found = new Map<string, ComplexModel>();
    const pending = [key];
    for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
      for (const derived of this.#derivedFrom().get(next) ?? []) {
        const derivedKey = `{${derived.ns}}${derived.local}`;
        if (found.has(derivedKey) || derivedKey === key) continue;
        const model = this.typeOf(derived.node, derived.ns);
        if (model.kind === 'complex') found.set(derivedKey, model);
        pending.push(derivedKey);
      }
    }
    return found;
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
    const declared = ns === undefined ? undefined : this.#index.get('type', ns, local);
    return declared ? this.typeOf(declared.node, ns) : undefined;
  }

  /** The global element `ns`/`local` names: its declaration, or undefined when no schema declares it. */
  globalElement(ns: string | undefined, local: string): Node | undefined {
    return ns === undefined ? undefined : this.#index.get('element', ns, local)?.node;
  }

  /** The element a `ref=` names, and the namespace it is declared in. */
  element(qname: string, site: Node, namespace: string | undefined): { node: Node; ns: string | undefined } | undefined {
    const { ns, local } = this.#resolve(qname, site, namespace);
    const node = this.globalElement(ns, local);
    return node ? { node, ns } : undefined;
  }

  /** The model of an element declaration: its `type=`, or its inline type, or anyType. */
  elementType(element: Node, namespace: string | undefined): TypeModel {
    if (element.attributes.type) return this.namedType(element.attributes.type, element, namespace);
    const inline = xsdChild(element, 'complexType', 'simpleType');
    return inline ? this.typeOf(inline, namespace) : anyType;
  }

  /**
   * A QName written on a schema element, as a namespace and local name: its prefix looked up in the declarations in
   * scope there (see SchemaIndex.prefix). An unprefixed name is looked for in the schema's own target namespace, as
   * node-soap and zeep read the Glue and PHP generators' `type="Foo"` written without a default namespace.
   */
  #resolve(qname: string, site: Node, namespace: string | undefined): { ns: string | undefined; local: string } {
    const colon = qname.indexOf(':');
    const local = colon === -1 ? qname : qname.slice(colon + 1);
    if (colon === -1) return { ns: namespace ?? this.#index.schemaOf(site)?.tns, local };
    return { ns: this.#index.prefix(qname.slice(0, colon), site, namespace), local };
  }

  #simpleType(node: Node, namespace: string | undefined): SimpleModel {
    const type = node.attributes.name ?? 'anonymous';
    const derivation = xsdChild(node, 'restriction', 'list', 'union');
    if (derivation?.local === 'list') {
      const itemType = derivation.attributes.itemType;
      const inline = xsdChild(derivation, 'simpleType');
      const item = itemType ? this.namedType(itemType, derivation, namespace) : inline ? this.typeOf(inline, namespace) : anyType;
      return { kind: 'simple', type, builtin: 'anySimpleType', list: item.kind === 'simple' ? item : anyType };
    }
    if (derivation?.local === 'union') {
      const named = (derivation.attributes.memberTypes ?? '').split(/\s+/).filter(Boolean);
      const members = [
        ...named.map((member) => this.namedType(member, derivation, namespace)),
        ...xsdChildren(derivation)
          .filter((c) => c.local === 'simpleType')
          .map((inline) => this.typeOf(inline, namespace)),
      ].filter((member): member is SimpleModel => member.kind === 'simple');
      return { kind: 'simple', type, builtin: 'anySimpleType', union: members };
    }
    if (!derivation) return { ...anyType, type };
    const inlineBase = xsdChild(derivation, 'simpleType');
    const base = derivation.attributes.base
      ? this.namedType(derivation.attributes.base, derivation, namespace)
      : inlineBase
        ? this.typeOf(inlineBase, namespace)
        : anyType;
    const simpleBase = base.kind === 'simple' ? base : undefined;
    const own = xsdChildren(derivation)
      .filter((c) => c.local === 'enumeration')
      .map((c) => c.attributes.value ?? '');
    // A restriction keeps what its base restricts: its enumeration (unless it gives its own), facets, list, union.
    const enumeration = own.length > 0 ? own : simpleBase?.enumeration;
    const facets = readFacets(derivation, simpleBase?.facets);
    return {
      kind: 'simple',
      type: node.attributes.name ?? base.type,
      builtin: simpleBase?.builtin ?? 'anyType',
      ...(enumeration !== undefined && { enumeration }),
      ...(facets !== undefined && { facets }),
      ...(simpleBase?.list !== undefined && { list: simpleBase.list }),
      ...(simpleBase?.union !== undefined && { union: simpleBase.union }),
    };
  }

  #fillComplex(model: ComplexModel, node: Node, namespace: string | undefined): void {
    for (const child of xsdChildren(node)) {
      if (child.local === 'complexContent') this.#complexContent(model, child, namespace);
      else if (child.local === 'simpleContent') this.#simpleContent(model, child, namespace);
      else if (attributeUses.has(child.local)) this.#attributeUse(model, child, namespace, new Set());
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
  #attributeUse(model: ComplexModel, node: Node, namespace: string | undefined, groups: Set<Node>): void {
    if (node.local === 'anyAttribute') {
      model.anyAttribute = true;
    } else if (node.local === 'attributeGroup' && node.attributes.ref) {
      const { ns, local } = this.#resolve(node.attributes.ref, node, namespace);
      const group = ns === undefined ? undefined : this.#index.get('attributeGroup', ns, local)?.node;
      // A group that contains itself (through others) is read once.
      if (group === undefined || groups.has(group)) return;
      groups.add(group);
      for (const child of xsdChildren(group)) this.#attributeUse(model, child, ns, groups);
    } else if (node.local === 'attribute') {
      const attribute = this.#attribute(node, namespace);
      if (attribute === undefined) return;
      const others = (model.attributes ?? []).filter((a) => a.name !== attribute.name || a.ns !== attribute.ns);
      model.attributes = node.attributes.use === 'prohibited' ? others : [...others, attribute];
    }
  }

  #attribute(node: Node, namespace: string | undefined): AttributeModel | undefined {
    const required = node.attributes.use === 'required';
    if (node.attributes.ref) {
      const { ns, local } = this.#resolve(node.attributes.ref, node, namespace);
      // soapenc:arrayType on a SOAP-encoded array's restriction describes the array (see soapArrayItem).
      if (ns === soapEncodingNamespace) return undefined;
      const declaration = ns === undefined ? undefined : this.#index.get('attribute', ns, local)?.node;
      const model = declaration ? this.#attributeType(declaration, ns) : simple('anySimpleType');
      return { name: local, ns: ns ?? '', required, model };
    }
    const name = node.attributes.name;
    if (name === undefined) return undefined;
    const form = node.attributes.form ?? (this.#index.schemaOf(node)?.attributesQualified ? 'qualified' : 'unqualified');
    return {
      name,
      ns: form === 'qualified' ? (namespace ?? '') : '',
      required,
      model: this.#attributeType(node, namespace),
    };
  }

  #attributeType(node: Node, namespace: string | undefined): SimpleModel {
    const inline = xsdChild(node, 'simpleType');
    const type = node.attributes.type;
    const model = type ? this.namedType(type, node, namespace) : inline ? this.typeOf(inline, namespace) : undefined;
    return model?.kind === 'simple' ? model : simple('anySimpleType');
  }

  #complexContent(model: ComplexModel, node: Node, namespace: string | undefined): void {
    for (const derivation of xsdChildren(node)) {
      if (derivation.local !== 'extension' && derivation.local !== 'restriction') continue;
      const base = this.namedType(derivation.attributes.base, derivation, namespace);
      const arrayType = soapArrayItem(derivation);
      if (arrayType !== undefined || (base.kind === 'complex' && base.arrayOf)) {
        model.arrayOf = arrayType !== undefined ? this.namedType(arrayType, derivation, namespace) : anyType;
        model.open = true;
        continue;
      }
      this.#inheritAttributes(model, base);
      // An extension has the base type's content first; a restriction restates what it keeps.
      if (derivation.local === 'extension' && base.kind === 'complex') {
        if (base.open) model.anyAt ??= (base.anyAt ?? base.particles.length) + model.particles.length;
        model.particles.push(...base.particles);
        model.open ||= base.open;
      }
      for (const child of xsdChildren(derivation)) {
        if (attributeUses.has(child.local)) this.#attributeUse(model, child, namespace, new Set());
        else this.#particles(model, child, namespace, false, false);
      }
    }
  }

  #simpleContent(model: ComplexModel, node: Node, namespace: string | undefined): void {
    const derivation = xsdChild(node, 'extension', 'restriction');
    const base = derivation ? this.namedType(derivation.attributes.base, derivation, namespace) : anyType;
    model.text = base.kind === 'simple' ? base : (base.text ?? anyType);
    this.#inheritAttributes(model, base);
    for (const child of derivation ? xsdChildren(derivation) : []) {
      if (attributeUses.has(child.local)) this.#attributeUse(model, child, namespace, new Set());
    }
  }

  /** Adds the elements a content-model element declares; inside a choice or an optional group every one is optional. */
  #particles(model: ComplexModel, node: Node, namespace: string | undefined, optional: boolean, repeated: boolean): void {
    const groupOptional = optional || node.attributes.minOccurs === '0';
    const groupRepeated = repeated || isMany(node.attributes.maxOccurs);
    switch (node.local) {
      case 'sequence':
      case 'all':
        for (const child of xsdChildren(node)) this.#particles(model, child, namespace, groupOptional, groupRepeated);
        return;
      case 'choice':
        for (const child of xsdChildren(node)) this.#particles(model, child, namespace, true, groupRepeated);
        return;
      case 'group': {
        const ref = node.attributes.ref;
        const definition = ref ? this.#group(ref, node, namespace) : { node, ns: namespace };
        for (const child of definition ? xsdChildren(definition.node) : []) {
          this.#particles(model, child, definition?.ns ?? namespace, groupOptional, groupRepeated);
        }
        return;
      }
      case 'any':
        model.open = true;
        model.anyAt ??= model.particles.length;
        return;
      case 'element': {
        const particle = this.#particle(node, namespace, optional, repeated);
        model.particles.push(particle);
        // A reference to a substitution group's head: each member may stand in its place (XML Schema 3.3.6).
        if (node.attributes.ref) {
          for (const member of this.#members(node.attributes.ref, node, namespace)) {
            const standIn = this.#particle(member.site, member.ns, true, particle.repeated);
            model.particles.push(Object.defineProperty(standIn, 'substitutes', { value: particle.name, enumerable: true }));
          }
        }
        return;
      }
      default:
        return;
    }
  }

  /** Global elements by the `{ns}name` of the substitution group head each names, built on first use. */
  #heads: Map<string, Array<{ node: Node; ns: string; local: string }>> | undefined;

  /**
   * The members of the substitution group whose head `ref` names, at any depth, each as a reference to it (so that
   * #particle reads it as a global element): none for an element that heads no group.
   */
  #members(ref: string, site: Node, namespace: string | undefined): Array<{ site: Node; ns: string }> {
    if (this.#heads === undefined) {
      this.#heads = new Map();
      for (const declared of this.#index.all('element')) {
        for (const head of (declared.node.attributes.substitutionGroup ?? '').split(/\s+/).filter(Boolean)) {
          const { ns, local } = this.#resolve(head, declared.node, declared.ns);
          const key = `{${ns ?? ''}}${local}`;
          append(this.#heads, key, declared);
        }
      }
    }
    const { ns, local } = this.#resolve(ref, site, namespace);
    const members: Array<{ site: Node; ns: string }> = [];
    const seen = new Set<string>([`{${ns ?? ''}}${local}`]);
    const pending = [`{${ns ?? ''}}${local}`];
    for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
      for (const member of this.#heads.get(next) ?? []) {
        const key = `{${member.ns}}${member.local}`;
        if (seen.has(key)) continue;
        seen.add(key);
        pending.push(key);
        if (member.node.attributes.abstract === 'true') continue;
        members.push({ site: memberReference(member.local, member.ns), ns: member.ns });
      }
    }
    return members;
  }

  #group(ref: string, site: Node, namespace: string | undefined): { node: Node; ns: string | undefined } | undefined {
    const { ns, local } = this.#resolve(ref, site, namespace);
    const node = ns === undefined ? undefined : this.#index.get('group', ns, local)?.node;
    return node ? { node, ns } : undefined;
  }

  #particle(node: Node, namespace: string | undefined, optional: boolean, repeated: boolean): Particle {
    const ref = node.attributes.ref;
    const referenced = ref ? this.element(ref, node, namespace) : undefined;
    const declaration = referenced?.node ?? node;
    const declaredIn = referenced?.ns ?? namespace;
    const name = declaration.attributes.name ?? String(ref ?? '').replace(/^.*:/, '');
    // XML Schema 3.3.2: a global element is always in its schema's namespace; a local one when its form (or else its
    // own schema document's elementFormDefault) is qualified.
    const form = node.attributes.form ?? (this.#index.schemaOf(node)?.elementsQualified ? 'qualified' : 'unqualified');
    const ns = referenced ? (referenced.ns ?? '') : form === 'qualified' ? (namespace ?? '') : '';
    let model: TypeModel | undefined;
    const resolve = () => {
      model ??= this.elementType(declaration, declaredIn);
      return model;
    };
    return {
      name,
      ns,
      required: !optional && node.attributes.minOccurs !== '0',
      repeated: repeated || isMany(node.attributes.maxOccurs),
      nillable: node.attributes.nillable === 'true' || declaration.attributes.nillable === 'true',
      get model() {
        return resolve();
      },
    };
  }
}

/** A reference to the global element `{ns}local`, as a schema would write it (`<xs:element ref="m:local"/>`). */
function memberReference(local: string, ns: string): Node {
  return {
    ns: xsdNamespace,
    local: 'element',
    attributes: { ref: `m:${local}` },
    scope: new Map([['m', ns]]),
    children: [],
    text: '',
    parent: undefined,
  };
}

/** The schema nodes that declare a complex type's attributes. */
const attributeUses = new Set(['attribute', 'attributeGroup', 'anyAttribute']);

function isMany(maxOccurs: string | undefined): boolean {
  return maxOccurs === 'unbounded' || (maxOccurs !== undefined && Number(maxOccurs) > 1);
}

/** `wsdl:arrayType="tns:Item[]"` on a SOAP-encoded array's restriction, as the item type's QName. */
function soapArrayItem(derivation: Node): string | undefined {
  for (const attribute of xsdChildren(derivation)) {
    for (const [key, value] of Object.entries(attribute.attributes)) {
      if (key === 'arrayType' || key.endsWith(':arrayType')) return value.replace(/\[[\d,]*\]$/, '');
    }
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
