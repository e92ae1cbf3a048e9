import { append } from './append.ts';
import { soapEncodingNamespace, xsdNamespace, xsdNamespaces } from './namespaces.ts';
import { AttributeCompiler, attributeUses } from './schema-attributes.ts';
import { compileSimpleType } from './simple-type.ts';
import {
  anyType,
  arrayModel,
  builtinNames,
  type ComplexModel,
  type Particle,
  simpleModelOf,
  type TypeModel,
} from './type-model.ts';
import type { XmlElement } from './xml-tree.ts';
import { type SchemaIndex, xsdChild, xsdChildren } from './xsd-index.ts';

// Tests build models by hand with these, from where they were first.
export { type ComplexModel, simpleModelOf } from './type-model.ts';

/**
 * The XML Schema types of a WSDL's messages, compiled from the schema documents' elements (xsd-index.ts finds the
 * global ones) the way the XML Schema specification defines them: named and anonymous types, `type=` and `ref=`,
 * `sequence`/`all`/`choice` (nested), groups, `complexContent` extension (the base type's content first) and
 * restriction, `simpleContent`, `xsd:any`, attributes (local, `ref`, attribute groups, `anyAttribute`, inherited,
 * prohibited), simple types (enumerations and facets over the built-in types, lists, unions), SOAP-encoded arrays,
 * substitution groups and derived types. Each local element's namespace follows its own schema document's
 * `elementFormDefault`. Types are compiled lazily and cached per schema element, so a recursive type (a tree of
 * nodes) is no problem. What they compile to is in type-model.ts; simple types are compiled in simple-type.ts, a
 * complex type's attributes in schema-attributes.ts.
 */

type Node = XmlElement;

/** The compiled types of one WSDL's schemas. */
export class SchemaModel {
  readonly #index: SchemaIndex;
  readonly #cache = new Map<Node, TypeModel>();
  readonly #attributes: AttributeCompiler;

  constructor(index: SchemaIndex) {
    this.#index = index;
    this.#attributes = new AttributeCompiler(index, this);
  }

  /** The model of a type element (complexType or simpleType) in the schema of `namespace`. */
  typeOf(node: Node, namespace: string | undefined): TypeModel {
    const cached = this.#cache.get(node);
    if (cached) return cached;
    if (node.local === 'simpleType') {
      // A simple type derived from itself (through others) finds anyType there: no schema can make this loop.
      this.#cache.set(node, { ...anyType, type: node.attributes.name ?? 'anonymous' });
      const model = compileSimpleType(this, node, namespace);
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
      const { ns, local } = this.#index.resolve(base, derivation, declared.ns);
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
    const { ns, local } = this.#index.resolve(qname, site, namespace);
    // An unprefixed name no schema declares: a built-in (schemas often make XSD their default namespace).
    return this.#declaredType(ns, local) ?? (!qname.includes(':') && builtinNames.has(local) ? simpleModelOf(local) : anyType);
  }

  /** The model of the type `ns`/`local` names (a built-in when `ns` is XML Schema's, or when no schema declares it). */
  typeNamed(ns: string, local: string): TypeModel {
    return this.#declaredType(ns, local) ?? (builtinNames.has(local) ? simpleModelOf(local) : anyType);
  }

  /** A built-in of XML Schema or SOAP encoding, or a type a schema declares; undefined for any other name. */
  #declaredType(ns: string | undefined, local: string): TypeModel | undefined {
    if (ns !== undefined && xsdNamespaces.has(ns)) return simpleModelOf(local);
    if (ns === soapEncodingNamespace) return local === 'Array' ? arrayModel(anyType) : simpleModelOf(local);
    const declared = ns === undefined ? undefined : this.#index.get('type', ns, local);
    return declared ? this.typeOf(declared.node, ns) : undefined;
  }

  /** The global element `ns`/`local` names: its declaration, or undefined when no schema declares it. */
  globalElement(ns: string | undefined, local: string): Node | undefined {
    return ns === undefined ? undefined : this.#index.get('element', ns, local)?.node;
  }

  /** The element a `ref=` names, and the namespace it is declared in. */
  element(qname: string, site: Node, namespace: string | undefined): { node: Node; ns: string | undefined } | undefined {
    const { ns, local } = this.#index.resolve(qname, site, namespace);
    const node = this.globalElement(ns, local);
    return node ? { node, ns } : undefined;
  }

  /** The model of an element declaration: its `type=`, or its inline type, or anyType. */
  elementType(element: Node, namespace: string | undefined): TypeModel {
    if (element.attributes.type) return this.namedType(element.attributes.type, element, namespace);
    const inline = xsdChild(element, 'complexType', 'simpleType');
    return inline ? this.typeOf(inline, namespace) : anyType;
  }

  #fillComplex(model: ComplexModel, node: Node, namespace: string | undefined): void {
    for (const child of xsdChildren(node)) {
      if (child.local === 'complexContent') this.#complexContent(model, child, namespace);
      else if (child.local === 'simpleContent') this.#simpleContent(model, child, namespace);
      else if (attributeUses.has(child.local)) this.#attributes.use(model, child, namespace, new Set());
      else this.#particles(model, child, namespace, false, false);
    }
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
      this.#attributes.inherit(model, base);
      // An extension has the base type's content first; a restriction restates what it keeps.
      if (derivation.local === 'extension' && base.kind === 'complex') {
        if (base.open) model.anyAt ??= (base.anyAt ?? base.particles.length) + model.particles.length;
        model.particles.push(...base.particles);
        model.open ||= base.open;
      }
      for (const child of xsdChildren(derivation)) {
        if (attributeUses.has(child.local)) this.#attributes.use(model, child, namespace, new Set());
        else this.#particles(model, child, namespace, false, false);
      }
    }
  }

  #simpleContent(model: ComplexModel, node: Node, namespace: string | undefined): void {
    const derivation = xsdChild(node, 'extension', 'restriction');
    const base = derivation ? this.namedType(derivation.attributes.base, derivation, namespace) : anyType;
    model.text = base.kind === 'simple' ? base : (base.text ?? anyType);
    this.#attributes.inherit(model, base);
    for (const child of derivation ? xsdChildren(derivation) : []) {
      if (attributeUses.has(child.local)) this.#attributes.use(model, child, namespace, new Set());
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
          const { ns, local } = this.#index.resolve(head, declared.node, declared.ns);
          const key = `{${ns ?? ''}}${local}`;
          append(this.#heads, key, declared);
        }
      }
    }
    const { ns, local } = this.#index.resolve(ref, site, namespace);
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
    const { ns, local } = this.#index.resolve(ref, site, namespace);
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
