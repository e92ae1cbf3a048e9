import { append } from './append.ts';
import { xsdNamespaces } from './namespaces.ts';
import type { LoadedSchema } from './wsdl-loader.ts';
import type { XmlElement } from './xml-tree.ts';

/** One schema document as its declarations read it: the namespace its components are in, and its form defaults. */
export interface SchemaDocument {
  element: XmlElement;
  tns: string;
  /** `elementFormDefault="qualified"`: its local elements are written in `tns`. */
  elementsQualified: boolean;
  /** `attributeFormDefault="qualified"`: its local attributes are written in `tns`. */
  attributesQualified: boolean;
}

/** A global declaration: its element, and the schema document it is declared in. */
export interface Declared {
  node: XmlElement;
  schema: SchemaDocument;
}

/** A schema element's children in XML Schema's namespace (annotations and foreign extensions are other elements). */
export function xsdChildren(node: XmlElement): XmlElement[] {
  return node.children.filter((child) => xsdNamespaces.has(child.ns));
}

export function xsdChild(node: XmlElement, ...locals: string[]): XmlElement | undefined {
  return node.children.find((child) => xsdNamespaces.has(child.ns) && locals.includes(child.local));
}

/** What a schema declares at its top level, by kind. */
type Kind = 'element' | 'type' | 'group' | 'attribute' | 'attributeGroup';

const kinds: Record<string, Kind> = {
  element: 'element',
  complexType: 'type',
  simpleType: 'type',
  group: 'group',
  attribute: 'attribute',
  attributeGroup: 'attributeGroup',
};

/**
 * The global declarations of a WSDL's schemas, by kind and `{namespace}name` (XML Schema 3.15: the symbol spaces),
 * from every schema document, inline or imported, included and redefined ones in their includer's namespace when they
 * have none. The first declaration of a name is the one used. Each declaration keeps its schema document, whose
 * `elementFormDefault` decides its local elements' namespace however other documents of that namespace decide theirs.
 *
 * @example new SchemaIndex(documents.schemas, documents.definitions[0].scope).get('element', 'urn:x', 'Add')
 */
export class SchemaIndex {
  readonly #declared = new Map<string, Declared>();
  readonly #documents = new Map<XmlElement, SchemaDocument>();
  /** The schema documents of each namespace, for prefixes a site leaves undeclared. */
  readonly #byNamespace = new Map<string, SchemaDocument[]>();
  /** The WSDL's root: prefixes declared only there still count in imported schema documents, as generators assume. */
  readonly #fallbackScope: ReadonlyMap<string, string>;

  constructor(schemas: readonly LoadedSchema[], fallbackScope: ReadonlyMap<string, string>) {
    this.#fallbackScope = fallbackScope;
    for (const { element, tns } of schemas) {
      const document: SchemaDocument = {
        element,
        tns,
        elementsQualified: element.attributes.elementFormDefault === 'qualified',
        attributesQualified: element.attributes.attributeFormDefault === 'qualified',
      };
      this.#documents.set(element, document);
      append(this.#byNamespace, tns, document);
      for (const child of element.children) this.#add(child, document);
    }
  }

  #add(child: XmlElement, schema: SchemaDocument): void {
    if (!xsdNamespaces.has(child.ns)) return;
    if (child.local === 'redefine') {
      // A redefinition's components replace the redefined document's; read here as declarations of the redefiner.
      for (const redefined of child.children) this.#add(redefined, schema);
      return;
    }
    const kind = kinds[child.local];
    const name = child.attributes.name;
    if (kind === undefined || name === undefined) return;
    const key = `${kind}{${schema.tns}}${name}`;
    if (!this.#declared.has(key)) this.#declared.set(key, { node: child, schema });
  }

  /** The global declaration of that kind and name, or undefined. */
  get(kind: Kind, ns: string, local: string): Declared | undefined {
    return this.#declared.get(`${kind}{${ns}}${local}`);
  }

  /** Every global declaration of one kind, with its namespace and name, in the order declared. */
  *all(kind: Kind): Iterable<Declared & { ns: string; local: string }> {
    const prefix = `${kind}{`;
    for (const [key, declared] of this.#declared) {
      if (!key.startsWith(prefix)) continue;
      const close = key.indexOf('}', prefix.length);
      yield { ...declared, ns: key.slice(prefix.length, close), local: key.slice(close + 1) };
    }
  }

  /** The schema document a node of one of the schemas belongs to. */
  schemaOf(node: XmlElement): SchemaDocument | undefined {
    for (let at: XmlElement | undefined = node; at !== undefined; at = at.parent) {
      const document = this.#documents.get(at);
      if (document) return document;
    }
    return undefined;
  }

  /**
   * The namespace `prefix` stands for where `site` is written: the declarations in scope there, else those of the
   * other schema documents of `ns`, else the WSDL's root's.
   */
  prefix(prefix: string, site: XmlElement, ns: string | undefined): string | undefined {
    const found = site.scope.get(prefix);
    if (found !== undefined) return found;
    for (const document of this.#byNamespace.get(ns ?? '') ?? []) {
      const declared = document.element.scope.get(prefix);
      if (declared !== undefined) return declared;
    }
    return this.#fallbackScope.get(prefix);
  }

  /**
   * A QName written on a schema element, as a namespace and local name: its prefix looked up in the declarations in
   * scope there (see prefix). An unprefixed name is looked for in the schema's own target namespace, as
   * node-soap and zeep read the Glue and PHP generators' `type="Foo"` written without a default namespace.
   */
  resolve(qname: string, site: XmlElement, namespace: string | undefined): { ns: string | undefined; local: string } {
    const colon = qname.indexOf(':');
    const local = colon === -1 ? qname : qname.slice(colon + 1);
    if (colon === -1) return { ns: namespace ?? this.schemaOf(site)?.tns, local };
    return { ns: this.prefix(qname.slice(0, colon), site, namespace), local };
  }
}
