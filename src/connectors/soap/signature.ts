import { typeLabels } from './derived-types.ts';
import type { SchemaModel } from './schema-model.ts';
import { type AttributeModel, type ComplexModel, type Particle, simpleModelOf, type TypeModel } from './type-model.ts';
import type { BoundMessage, BoundOperation, QName, WsdlPart } from './wsdl-documents.ts';

/** One parameter as `test` shows it (docs/execute.md#signatures): nested to the depth the schema has, cut at 8 levels. */
export interface Param {
  name: string;
  type: string;
  required: boolean;
  repeated: boolean;
  nillable?: true;
  enum?: string[];
  /** The attributes the element's type declares, given in `$attributes` (XML Schema attributes, listed). */
  attributes?: AttributeParam[];
  /** The types derived from the element's type, which `$type` may name (derived-types.ts). */
  derived_types?: string[];
  /** For a member of a substitution group: the element it may stand in for. */
  substitutes?: string;
  children?: Param[];
}

/** An attribute as `test` shows it. */
export interface AttributeParam {
  name: string;
  type: string;
  required: boolean;
  enum?: string[];
}

export interface Signature {
  operation: string;
  /** The wrapper element's name (document/literal) or the input message's (rpc). */
  input: string;
  parameters: Param[];
  /** The attributes of the input's wrapper element, when its type declares any: `params.$attributes` takes them. */
  attributes?: AttributeParam[];
  /** The headers the binding declares for the input (`soap:header`), when it declares any: `soap_headers` takes them. */
  headers?: Param[];
  output: string | null;
}

/** Children deeper than this are not listed (docs/execute.md#signatures); validation still follows the schema all the way. */
const listedDepth = 8;
/**
 * Parameters (and enumeration values) listed in one signature at most: deep and wide schemas (Exchange's EWS) would
 * otherwise list each shared type again at every place it is used, 130 MB for one `test`. Past it, and for a type
 * that contains itself, children are left out; validation still follows the whole schema.
 */
const listedBudget = 2000;

/** How a message is written in the Body: inside `wrapper` (when there is one) the elements `model` describes. */
export interface MessageLayout {
  /** The element around the params: an rpc operation's wrapper, a document/literal part's element. */
  wrapper: QName | undefined;
  /** The params: the wrapper's content, or the Body's when there is no wrapper. */
  model: ComplexModel;
  /** The signature's `input`/`output`: the wrapper element's name for document/literal, else the message's. */
  name: string;
  /** The header elements the binding declares, by part name; written by the schema when `soap_headers` has them. */
  headers: ComplexModel;
}

const unknownModel = (): ComplexModel => ({
  kind: 'complex',
  type: 'unknown',
  particles: [],
  open: true,
  anyAt: 0,
  anyAttribute: true,
});
const layouts = new WeakMap<BoundOperation, { input: MessageLayout; output: MessageLayout | undefined }>();

/** The layouts of an operation's input and output (computed once per operation of a loaded WSDL). */
export function operationLayout(schema: SchemaModel, operation: BoundOperation) {
  let layout = layouts.get(operation);
  if (!layout) {
    layout = {
      input: messageLayout(schema, operation, operation.input, operation.name) ?? {
        wrapper: undefined,
        model: unknownModel(),
        name: operation.name,
        headers: headerModel(schema, []),
      },
      output: messageLayout(schema, operation, operation.output, `${operation.name}Response`, 'output'),
    };
    layouts.set(operation, layout);
  }
  return layout;
}

/** A message's layout in the Body (see bodyLayout) and the headers its binding declares. */
function messageLayout(
  schema: SchemaModel,
  operation: BoundOperation,
  message: BoundMessage | undefined,
  rpcName: string,
  side: 'input' | 'output' = 'input',
): MessageLayout | undefined {
  if (!message) return undefined;
  const layout = bodyLayout(schema, operation, message, rpcName, side);
  return { ...layout, headers: headerModel(schema, message.headers) };
}

/**
 * The header elements a binding declares, as an open model (other headers, such as WS-Security's, are the caller's
 * to write): each named after its part, as zeep names them (EWS's part Impersonation is a t:ExchangeImpersonation),
 * and optional, as a header may be sent or not.
 */
function headerModel(schema: SchemaModel, parts: WsdlPart[]): ComplexModel {
  const particles = parts
    .filter((part) => part.element !== undefined)
    .map((part) => partParticle(schema, part, part.name, part.element?.ns ?? '', part.element?.local, false));
  return { kind: 'complex', type: 'headers', particles, open: true, anyAt: particles.length, anyAttribute: true };
}

/**
 * A message as WSDL 1.1 §3.5 and WS-I Basic Profile 1.1 §4.7 lay it out in the Body:
 * - rpc: a wrapper named after the operation (`Response` added for the output), in `soap:body`'s namespace (none
 *   given: unqualified), holding one unqualified element per part, named after the part;
 * - document, one part: the part's global element (for a `type=` part, an unqualified element named after the part),
 *   whose content is the params (a simple type's text is `$value`);
 * - document, several parts: the parts' elements side by side in the Body, each a param (named after its element;
 *   in an output after its part, as python-zeep and PHP's SoapClient name what they read);
 * - document, no parts: an empty Body.
 * An element no schema declares is open: nothing can be checked against it.
 */
function bodyLayout(
  schema: SchemaModel,
  operation: BoundOperation,
  message: BoundMessage,
  rpcName: string,
  side: 'input' | 'output',
): Omit<MessageLayout, 'headers'> {
  const parts = message.parts;
  if (operation.style === 'rpc') {
    // A part declared with element= (WS-I BP R2203 forbids it in rpc) is that element, qualified, as zeep writes it;
    // the param keeps the part's name.
    const particles = parts.map((part) => partParticle(schema, part, part.name, part.element?.ns ?? '', part.element?.local));
    return {
      wrapper: { ns: message.namespace ?? '', local: rpcName },
      model: { kind: 'complex', type: message.name, particles, open: false },
      name: message.name,
    };
  }
  if (parts.length === 1) {
    const [part] = parts;
    const wrapper = part.element ?? { ns: '', local: part.name };
    const declaration = part.element ? schema.globalElement(part.element.ns, part.element.local) : undefined;
    const content = declaration
      ? schema.elementType(declaration, part.element?.ns)
      : part.type
        ? schema.typeNamed(part.type.ns, part.type.local)
        : unknownModel();
    // A bare part of a simple type: its value is the whole element, given as `$value`.
    const model: ComplexModel =
      content.kind === 'complex' ? content : { kind: 'complex', type: content.type, particles: [], open: false, text: content };
    return { wrapper, model, name: part.element ? wrapper.local : message.name };
  }
  const particles = parts.map((part) => {
    if (!part.element) return partParticle(schema, part, part.name, '');
    const name = side === 'output' ? part.name : part.element.local;
    return partParticle(schema, part, name, part.element.ns, part.element.local);
  });
  return { wrapper: undefined, model: { kind: 'complex', type: message.name, particles, open: false }, name: message.name };
}

/** A message part as one param: required, of the part's type or element's type, resolved on first use. */
function partParticle(
  schema: SchemaModel,
  part: WsdlPart,
  name: string,
  ns: string,
  elementName?: string,
  required = true,
): Particle {
  let model: TypeModel | undefined;
  return {
    name,
    ns,
    ...(elementName !== undefined && elementName !== name && { elementName }),
    required,
    repeated: false,
    nillable: true,
    get model() {
      if (model) return model;
      const declaration = part.element ? schema.globalElement(part.element.ns, part.element.local) : undefined;
      model = declaration
        ? schema.elementType(declaration, part.element?.ns)
        : part.type
          ? schema.typeNamed(part.type.ns, part.type.local)
          : simpleModelOf('anyType');
      return model;
    },
  };
}

/** The signature of one operation of a port's binding. */
export function signatureOf(schema: SchemaModel, operation: BoundOperation): Signature {
  const { input, output } = operationLayout(schema, operation);
  const headers = input.headers.particles;
  return {
    operation: operation.name,
    input: input.name,
    parameters: listParams(input.model.particles, 1, { left: listedBudget }, new Set()),
    ...(input.model.attributes?.length && { attributes: listAttributes(input.model.attributes) }),
    ...(headers.length > 0 && { headers: listParams(headers, 1, { left: listedBudget }, new Set()) }),
    output: output?.name ?? null,
  };
}

function listAttributes(attributes: AttributeModel[]): AttributeParam[] {
  return attributes.map((a) => ({
    name: a.name,
    type: a.model.type,
    required: a.required,
    ...(a.model.enumeration && { enum: a.model.enumeration }),
  }));
}

function listParams(particles: Particle[], depth: number, budget: { left: number }, path: Set<TypeModel>): Param[] {
  const params: Param[] = [];
  for (const particle of particles) {
    // Top-level parameters are always listed: they are the signature; only nested children are left out.
    if (budget.left <= 0 && depth > 1) break;
    const model = particle.model;
    const param: Param = { name: particle.name, type: model.type, required: particle.required, repeated: particle.repeated };
    budget.left -= 1;
    if (particle.nillable) param.nillable = true;
    if (particle.substitutes !== undefined) param.substitutes = particle.substitutes;
    if (model.kind === 'complex' && model.subtypes !== undefined && model.subtypes.size > 0) {
      param.derived_types = typeLabels(model);
      budget.left -= model.subtypes.size;
    }
    if (model.kind === 'simple' && model.enumeration) {
      param.enum = model.enumeration;
      budget.left -= model.enumeration.length;
    }
    if (model.kind === 'complex' && model.attributes?.length) {
      param.attributes = listAttributes(model.attributes);
      budget.left -= model.attributes.length;
    }
    const expand = model.kind === 'complex' && model.particles.length > 0 && depth < listedDepth && !path.has(model);
    if (expand && budget.left > 0) {
      path.add(model);
      param.children = listParams(model.particles, depth + 1, budget, path);
      path.delete(model);
    }
    params.push(param);
  }
  return params;
}
