import { soapEncodingNamespace } from './namespaces.ts';
import {
  type AttributeModel,
  type ComplexModel,
  type SimpleModel,
  simpleModelOf,
  type TypeLookup,
  type TypeModel,
} from './type-model.ts';
import type { XmlElement } from './xml-tree.ts';
import { type SchemaIndex, xsdChild, xsdChildren } from './xsd-index.ts';

type Node = XmlElement;

/** The schema nodes that declare a complex type's attributes. */
export const attributeUses = new Set(['attribute', 'attributeGroup', 'anyAttribute']);

/** Compiles the attributes of a complex type (for SchemaModel): declared, referenced, in groups, inherited, prohibited. */
export class AttributeCompiler {
  readonly #index: SchemaIndex;
  readonly #types: TypeLookup;

  constructor(index: SchemaIndex, types: TypeLookup) {
    this.#index = index;
    this.#types = types;
  }

  /** The attributes a base type gives a type derived from it (extension and restriction both keep them). */
  inherit(model: ComplexModel, base: TypeModel): void {
    if (base.kind !== 'complex') return;
    if (base.attributes) model.attributes = [...(model.attributes ?? []), ...base.attributes];
    model.anyAttribute ||= base.anyAttribute;
  }

  /**
   * Adds what an `attribute`, `attributeGroup` (a reference to a global group) or `anyAttribute` declares. An attribute
   * declared again replaces the inherited one of its name; `use="prohibited"` removes it.
   */
  use(model: ComplexModel, node: Node, namespace: string | undefined, groups: Set<Node>): void {
    if (node.local === 'anyAttribute') {
      model.anyAttribute = true;
    } else if (node.local === 'attributeGroup' && node.attributes.ref) {
      const { ns, local } = this.#index.resolve(node.attributes.ref, node, namespace);
      const group = ns === undefined ? undefined : this.#index.get('attributeGroup', ns, local)?.node;
      // A group that contains itself (through others) is read once.
      if (group === undefined || groups.has(group)) return;
      groups.add(group);
      for (const child of xsdChildren(group)) this.use(model, child, ns, groups);
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
      const { ns, local } = this.#index.resolve(node.attributes.ref, node, namespace);
      // soapenc:arrayType on a SOAP-encoded array's restriction describes the array (see soapArrayItem in schema-model.ts).
      if (ns === soapEncodingNamespace) return undefined;
      const declaration = ns === undefined ? undefined : this.#index.get('attribute', ns, local)?.node;
      const model = declaration ? this.#attributeType(declaration, ns) : simpleModelOf('anySimpleType');
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
    const model = type
      ? this.#types.namedType(type, node, namespace)
      : inline
        ? this.#types.typeOf(inline, namespace)
        : undefined;
    return model?.kind === 'simple' ? model : simpleModelOf('anySimpleType');
  }
}
