import { type ComplexModel, type Particle, type SchemaModel, simpleModelOf, type TypeModel } from './schema-model.ts';

// biome-ignore lint/suspicious/noExplicitAny: node-soap's parsed WSDL elements are untyped.
type Node = any;

/** One parameter as `test` shows it (API.md section 6): nested to the depth the schema has, cut at 8 levels. */
export interface Param {
  name: string;
  type: string;
  required: boolean;
  repeated: boolean;
  nillable?: true;
  enum?: string[];
  children?: Param[];
}

export interface Signature {
  operation: string;
  /** The wrapper element's name (document/literal) or the input message's (rpc). */
  input: string;
  parameters: Param[];
  output: string | null;
}

/** Children deeper than this are not listed (API.md section 6); validation still follows the schema all the way. */
const listedDepth = 8;
/**
 * Parameters (and enumeration values) listed in one signature at most: deep and wide schemas (Exchange's EWS) would
 * otherwise list each shared type again at every place it is used, 130 MB for one `test`. Past it, and for a type
 * that contains itself, children are left out; validation still follows the whole schema.
 */
const listedBudget = 2000;

/**
 * What an operation's input takes, as one complex model whose particles are the params: for document/literal the
 * content of the message part's element (wrapped: the wrapper's children; a `type=` wrapper is followed to its named
 * type), for rpc the message's parts. An input node-soap could not resolve (a message or element the WSDL never
 * declares) is open: nothing can be checked against it.
 */
export function inputModel(schema: SchemaModel, method: Node): ComplexModel {
  return messageModel(schema, method?.input);
}

/** What an operation's answer holds, read the same way as its input (the response wrapper's content, or rpc parts). */
export function outputModel(schema: SchemaModel, method: Node): ComplexModel {
  return messageModel(schema, method?.output);
}

function messageModel(schema: SchemaModel, input: Node): ComplexModel {
  if (!input) return { kind: 'complex', type: 'unknown', particles: [], open: true };
  if (input.parts !== undefined || input.$lookupType === undefined) return rpcModel(schema, input);
  const content = schema.elementType(input, input.targetNamespace);
  if (content.kind === 'complex') return content;
  // A bare part of a simple type: its value is the whole body, given as `$value`.
  return { kind: 'complex', type: content.type, particles: [], open: false, text: content };
}

/** rpc: one particle per message part, each required; node-soap resolved the parts' types to schema nodes. */
function rpcModel(schema: SchemaModel, message: Node): ComplexModel {
  const particles: Particle[] = Object.entries((message.parts ?? {}) as Record<string, Node>).map(([name, part]) => {
    let model: TypeModel | undefined;
    return {
      name,
      required: true,
      repeated: false,
      nillable: true,
      get model() {
        model ??=
          typeof part === 'object' && part !== null
            ? schema.typeOf(part, part.xmlns)
            : typeof part === 'string'
              ? schema.namedType(part, message, undefined)
              : simpleModelOf('anyType');
        return model;
      },
    };
  });
  return { kind: 'complex', type: message.$name ?? 'input', particles, open: false };
}

/** The signature of one operation of a port's binding. */
export function signatureOf(schema: SchemaModel, name: string, method: Node): Signature {
  const input = method?.input;
  return {
    operation: name,
    input: input?.$name ?? name,
    parameters: listParams(inputModel(schema, method).particles, 1, { left: listedBudget }, new Set()),
    output: method?.output?.$name ?? null,
  };
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
    if (model.kind === 'simple' && model.enumeration) {
      param.enum = model.enumeration;
      budget.left -= model.enumeration.length;
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
