import type { JsonSchema } from '../catalog.ts';
import { typeLabel } from './derived-types.ts';
import { shapeResult } from './result-shape.ts';
import { byName, maxSchemaSize, SchemaDefinitions, typesSchema } from './schema-definitions.ts';
import type { MessageLayout } from './signature.ts';
import { type ComplexModel, type Particle, particleIndex, type SimpleModel, type TypeModel } from './type-model.ts';

/**
 * The JSON Schema of the `data` execute answers for an operation (docs/catalog.md#soap): what the answer's reader
 * makes of the output (response.ts, then result-shape.ts `shapeResult`), walked through the same compiled types. A
 * repeated element is always a list; numbers and booleans are typed as the reader types them, and text that is not
 * one exactly stays text (an int beyond 2^53, an empty element: `integer` or `string`); `$attributes` and simple
 * content's `$value`; `$type` and the derived type's members where an answer names a derived type; an empty complex
 * element is `{}`, a nil one null; a SOAP-encoded array a list.
 *
 * It takes a little more than a conforming answer holds rather than refuse a real one (an MCP client holds a tool's
 * result to it): no element or attribute is required (an upstream may leave one out), elements and attributes the
 * schema does not declare are let through as read (as the reader keeps them), an optional element may be null, a
 * decimal may be a number (an answer's `xsi:type` may name an integer type), and no enumeration, facet or format is
 * asserted (the reader checks none).
 */
export class ResultSchemas {
  readonly #defs = new SchemaDefinitions();
  readonly #maxSize: number;

  /** `maxSize`: the most characters of JSON one schema takes (schema-definitions.ts). */
  constructor(maxSize = maxSchemaSize) {
    this.#maxSize = maxSize;
  }

  /** The schema of `data` for an operation whose output is `output` (none: a one-way operation's, read as it comes). */
  data(output: MessageLayout | undefined): JsonSchema {
    if (output === undefined) return { type: 'object' };
    return this.#defs.schema(this.#complexValue(output.model, true), this.#maxSize);
  }

  /** A complex element's value; `top`: the whole result, which is never bare text and may carry `$attachments`. */
  #complexValue(model: ComplexModel, top: boolean): JsonSchema {
    if (model.arrayOf) return this.#array(model.arrayOf);
    const branches: JsonSchema[] = [];
    // Simple content without attributes is its text, as read: untyped.
    if (model.text && !top) branches.push({ type: 'string' });
    const body = this.#objectBody(model, model.subtypes !== undefined && model.subtypes.size > 0);
    if (top) (body.properties as Record<string, JsonSchema>).$attachments = attachments;
    branches.push(body);
    for (const [key, derived] of model.subtypes ?? []) {
      if (derived.arrayOf) {
        branches.push(this.#array(derived.arrayOf));
        continue;
      }
      const label = typeLabel(model, key.slice(1, key.indexOf('}')), key.slice(key.indexOf('}') + 1));
      const members = this.#defs.ref(derived, 'derived', `${derived.type}.derived`, () => this.#objectBody(derived, false));
      branches.push({ type: 'object', properties: { $type: { const: label } }, required: ['$type'], allOf: [members] });
    }
    return branches.length === 1 ? branches[0] : { anyOf: branches };
  }

  /** A SOAP-encoded array: the list of its items. */
  #array(items: TypeModel): JsonSchema {
    return { type: 'array', items: { anyOf: [this.#value(items, 'item'), { type: 'null' }] } };
  }

  /** A complex type's object: its elements by name, its attributes, its text; `$type` only in a derived type's branch. */
  #objectBody(model: ComplexModel, hasDerived: boolean): JsonSchema {
    const properties = byName();
    const { firstOfName, byElementName } = particleIndex(model);
    const declaredTwice = new Set(model.particles.filter((_, i) => !firstOfName[i]).map((p) => p.name));
    for (const particle of byElementName.values()) {
      properties[particle.name] = this.#particle(particle, declaredTwice.has(particle.name));
    }
    if (model.attributes?.length) {
      const typed = byName();
      for (const attribute of model.attributes) typed[attribute.name] = resultScalar(attribute.model);
      properties.$attributes = { type: 'object', properties: typed, additionalProperties: { type: 'string' } };
    }
    if (model.text) properties.$value = resultScalar(model.text);
    return { type: 'object', properties, ...(hasDerived && { patternProperties: { '^\\$type$': false } }) };
  }

  /** An element: a list when it may repeat (one read alone too), null when nil or absent-able. */
  #particle(particle: Particle, declaredTwice: boolean): JsonSchema {
    const value = this.#value(particle.model, particle.name);
    const one = particle.nillable || !particle.required ? { anyOf: [value, { type: 'null' }] } : value;
    if (particle.repeated) return { type: 'array', items: one };
    // A name declared twice (in two branches of a choice) may be read twice: the reader then gives a list.
    return declaredTwice ? { anyOf: [one, { type: 'array', items: one }] } : one;
  }

  #value(model: TypeModel, hint: string): JsonSchema {
    if (model.kind === 'simple') return resultScalar(model);
    return this.#defs.ref(model, 'result', model.type === 'anonymous' ? hint : model.type, () =>
      this.#complexValue(model, false),
    );
  }
}

/**
 * A simple value as the reader types it, found by asking the reader itself (`shapeResult`) how it reads an integer,
 * a decimal and a boolean text of the type: a list is a list of its items; a number or boolean type's value is that
 * or, when not exactly one, its text.
 */
export function resultScalar(model: SimpleModel): JsonSchema {
  if (model.list === undefined && model.union === undefined) {
    // An answer's xsi:type names the built-in its value is read as: anything for anyType, any scalar for anySimpleType.
    if (model.builtin === 'anyType') return {};
    if (model.builtin === 'anySimpleType') return typesSchema(['string', 'number', 'boolean']);
  }
  const integer = readAs(model, '1');
  if (Array.isArray(integer)) return { type: 'array', items: resultScalar(model.list as SimpleModel) };
  const types = ['string'];
  if (typeof readAs(model, '1.5') === 'number' || model.builtin === 'decimal') types.push('number');
  else if (typeof integer === 'number') types.push('integer');
  if (typeof readAs(model, 'true') === 'boolean') types.push('boolean');
  return model.builtin === 'base64Binary' ? { type: 'string', contentEncoding: 'base64' } : typesSchema(types);
}

/** What the reader makes of `text` as the value of an element of `model`. */
function readAs(model: SimpleModel, text: string): unknown {
  const holder: ComplexModel = {
    kind: 'complex',
    type: 'value',
    open: false,
    particles: [{ name: 'v', ns: '', required: true, repeated: false, nillable: false, model }],
  };
  return (shapeResult(holder, { v: text }) as Record<string, unknown>).v;
}

/** MTOM and SOAP with Attachments: the parts no `xop:Include` took (mime.ts). */
const attachments: JsonSchema = {
  type: 'array',
  items: {
    type: 'object',
    properties: {
      content_id: { type: ['string', 'null'] },
      content_type: { type: ['string', 'null'] },
      size: { type: 'integer' },
      base64: { type: 'string', contentEncoding: 'base64' },
    },
  },
};
