import type { Facets } from './facets.ts';
import type { XmlElement } from './xml-tree.ts';

/**
 * What a compiled XML Schema type is (schema-model.ts compiles them): a simple value or an element's content, its
 * particles and attributes; and the built-in types by name.
 */

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

/** Other types of the schema being compiled, by their declaration or by a QName written on a site (SchemaModel). */
export interface TypeLookup {
  typeOf(node: XmlElement, namespace: string | undefined): TypeModel;
  namedType(qname: string | undefined, site: XmlElement, namespace: string | undefined): TypeModel;
}

/** The model of a value of any type: what a name no schema declares stands for. */
export const anyType: SimpleModel = { kind: 'simple', type: 'xs:anyType', builtin: 'anyType' };

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

export function arrayModel(items: TypeModel): ComplexModel {
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
