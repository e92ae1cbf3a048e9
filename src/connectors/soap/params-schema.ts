import type { JsonSchema } from '../catalog.ts';
import { typeLabel } from './derived-types.ts';
import { nullFits, restricted, scalarAlternatives, scalarSchema } from './scalar-schema.ts';
import { byName, maxSchemaSize, SchemaDefinitions, typesSchema } from './schema-definitions.ts';
import { type AttributeModel, type ComplexModel, type Particle, particleIndex, type SimpleModel } from './type-model.ts';

/**
 * The JSON Schema of an operation's `params` (docs/catalog.md#soap): exactly what execute takes, as its params check
 * (param-checks.ts `paramIssues`) and the envelope's writer (wsdl-envelope.ts) decide it, walked through the same
 * compiled types at every depth:
 * - a complex type is an object of its elements (`required` as `minOccurs`, a substitution group's head satisfied by a
 *   member standing in for it), closed unless it has `xsd:any`; `$attributes` (the declared ones by their types,
 *   prefixed names and `xmlns` beside them), `$value` (simple content's text, else any text), and with derived types
 *   `$type` naming one, the value then of that type; simple content may be its text alone;
 * - a repeated element takes a list of its values, or one alone; a nillable or optional one takes null;
 * - a simple element takes its value (scalar-schema.ts), a list type's a list of items too, or `{$value, $attributes}`;
 * - a SOAP-encoded array is sent as given: anything.
 * Names under `xsd:any` and in `$attributes` are not held to XML's name rules, which the writer checks.
 * `$attributes: null` is refused where the type requires an attribute (param-checks lets it through; it then sends
 * none).
 */
export class ParamsSchemas {
  readonly #defs = new SchemaDefinitions();
  readonly #maxSize: number;
  /** One key per built-in: every element of a built-in type, whatever its model object, shares one definition. */
  readonly #builtins = new Map<string, object>();

  /** `maxSize`: the most characters of JSON one schema takes (schema-definitions.ts). */
  constructor(maxSize = maxSchemaSize) {
    this.#maxSize = maxSize;
  }

  /** The schema of the params of an operation whose input's content is `model`. */
  params(model: ComplexModel): JsonSchema {
    return this.#defs.schema(this.#complexValue(model, false), this.#maxSize);
  }

  /** A complex type's value: its object (or its text), or one of a derived type's with `$type`. */
  #complexValue(model: ComplexModel, scalars: boolean): JsonSchema {
    if (model.arrayOf) return scalars ? {} : { type: 'object' };
    const branches: JsonSchema[] = [];
    if (scalars && model.text) branches.push(scalarSchema(model.text, this.#defs));
    branches.push(this.#objectBody(model, false));
    for (const [key, derived] of model.subtypes ?? []) {
      const label = typeLabel(model, key.slice(1, key.indexOf('}')), key.slice(key.indexOf('}') + 1));
      const names = label === key ? [key] : [label, key];
      const named = { type: 'object', properties: { $type: { enum: names } }, required: ['$type'] };
      if (derived.arrayOf) branches.push(named);
      else {
        const body = this.#defs.ref(derived, 'derived', `${derived.type}.derived`, () => this.#objectBody(derived, true));
        branches.push({ ...named, allOf: [body] });
      }
    }
    return branches.length === 1 ? branches[0] : { anyOf: branches };
  }

  #complexRef(model: ComplexModel, hint: string): JsonSchema {
    const name = model.type === 'anonymous' ? hint : model.type;
    return this.#defs.ref(model, 'complex', name, () => this.#complexValue(model, true));
  }

  /** A complex type's object; `$type` left to the derived branch that names it (`typed`), else refused. */
  #objectBody(model: ComplexModel, typed: boolean): JsonSchema {
    const { byName: particles } = particleIndex(model);
    const properties = byName();
    const patternProperties: Record<string, JsonSchema | boolean> = {};
    for (const [name, particle] of particles) properties[name] = this.#particle(particle);
    const required: string[] = [];
    const standingIn: JsonSchema[] = [];
    const seen = new Set<string>();
    for (const particle of model.particles) {
      if (!particle.required || seen.has(particle.name)) continue;
      seen.add(particle.name);
      // A substitution group's head is there when a member stands in for it.
      const members = model.particles.filter((p) => p.substitutes === particle.name);
      if (members.length === 0) required.push(particle.name);
      else
        standingIn.push({ anyOf: [particle, ...members].map((p) => ({ properties: { [p.name]: true }, required: [p.name] })) });
    }
    if (model.attributes?.length || model.anyAttribute) {
      properties.$attributes = this.#attributes(model);
      if (model.attributes?.some((a) => a.required)) required.push('$attributes');
    } else {
      patternProperties['^\\$attributes$'] = this.#defs.ref(foreign, 'attributes', 'prefixed.attributes', () => ({
        anyOf: [{ type: 'object', patternProperties: callersOwn, additionalProperties: false }, { type: 'null' }],
      }));
    }
    if (model.text) properties.$value = this.#text(model.text);
    else patternProperties['^\\$value$'] = scalarOrNull;
    if (typed) properties.$type = { type: 'string' };
    else if (model.open) patternProperties['^\\$type$'] = false;
    return {
      type: 'object',
      properties,
      ...(required.length > 0 && { required }),
      ...(standingIn.length > 0 && { allOf: standingIn }),
      patternProperties,
      ...(!model.open && { additionalProperties: false }),
    };
  }

  /** An element: its value, a list of them when it repeats, null when nillable or optional. */
  #particle(particle: Particle): JsonSchema {
    const model = particle.model;
    const nullable = particle.nillable || !particle.required;
    // A SOAP-encoded array is sent as given (a list, or one value); only a null is the element's own to refuse.
    if (model.kind === 'complex' && model.arrayOf) return nullable ? {} : { not: { type: 'null' } };
    const value = model.kind === 'simple' ? this.#element(model) : this.#complexRef(model, particle.name);
    const one = nullable ? { anyOf: [value, { type: 'null' }] } : value;
    if (!particle.repeated) return one;
    return { anyOf: [...((one.anyOf as JsonSchema[] | undefined) ?? [one]), { type: 'array', items: one }] };
  }

  /** A simple element's value: a scalar, a list type's items as a list, or `{$value, $attributes}`. */
  #element(model: SimpleModel): JsonSchema {
    let key: object = model;
    if (!restricted(model)) {
      key = this.#builtins.get(model.builtin) ?? {};
      this.#builtins.set(model.builtin, key);
    }
    const name = key === model ? model.type : `xs.${model.builtin}`;
    return this.#defs.ref(key, 'element', name, () => {
      const branches = scalarAlternatives(model, this.#defs);
      if (model.list !== undefined) {
        const count = model.facets;
        const min = count?.length ?? count?.minLength;
        const max = count?.length ?? count?.maxLength;
        branches.push({
          type: 'array',
          items: scalarSchema(model.list, this.#defs),
          ...(min !== undefined && { minItems: min }),
          ...(max !== undefined && { maxItems: max }),
        });
      }
      const wrapper = {
        type: 'object',
        properties: {
          $value: this.#text(model),
          $attributes: this.#defs.ref(foreign, 'any-attributes', 'attributes', () => ({
            anyOf: [{ type: 'object', additionalProperties: scalarOrNull }, { type: 'null' }],
          })),
        },
        additionalProperties: false,
      };
      return { anyOf: [...branches, wrapper] };
    });
  }

  /** A text (`$value`): a value of its type, or null (no text) where the check takes null for it. */
  #text(model: SimpleModel): JsonSchema {
    const scalar = scalarSchema(model, this.#defs);
    return nullFits(model) ? { anyOf: [scalar, { type: 'null' }] } : scalar;
  }

  /** `$attributes`: the declared ones by their types, and others only prefixed (or any, with anyAttribute). */
  #attributes(model: ComplexModel): JsonSchema {
    const declared = new Map<string, AttributeModel>((model.attributes ?? []).map((a) => [a.name, a]));
    const requiredNames = new Set((model.attributes ?? []).filter((a) => a.required).map((a) => a.name));
    const properties = byName();
    for (const [name, attribute] of declared) {
      const value = scalarSchema(attribute.model, this.#defs);
      properties[name] = requiredNames.has(name) ? value : { anyOf: [value, { type: 'null' }] };
    }
    const object = {
      type: 'object',
      properties,
      ...(requiredNames.size > 0 && { required: [...requiredNames] }),
      ...(model.anyAttribute
        ? { additionalProperties: scalarOrNull }
        : { patternProperties: callersOwn, additionalProperties: false }),
    };
    return requiredNames.size > 0 ? object : { anyOf: [object, { type: 'null' }] };
  }
}

/** Any one text, or nothing: what the writer takes for a text or an attribute no type is declared for. */
const scalarOrNull: JsonSchema = typesSchema(['string', 'number', 'boolean', 'null']);

/** Attributes a caller may always add: prefixed names (`xsi:type`, `p:x`) and `xmlns` (param-checks' rule). */
const callersOwn: Record<string, JsonSchema> = { '^[^:]*:': scalarOrNull, '^xmlns$': scalarOrNull };

/** The key of the definitions shared by every type (attributes no type declares). */
const foreign = {};
