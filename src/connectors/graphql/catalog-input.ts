import type {
  GraphQLArgument,
  GraphQLInputField,
  GraphQLInputObjectType,
  GraphQLInputType,
  GraphQLSchema,
  TypeNode,
} from 'graphql';
import { cleanDescription, type JsonSchema } from '../catalog.ts';
import { graphql } from './document.ts';

/**
 * The input half of the GraphQL catalogue (docs/catalog.md): the JSON Schema of the `variables` a document or a root
 * field takes, exactly as graphql-js's input coercion (`getVariableValues`, the GraphQL specification's input coercion)
 * accepts them, so that what the schema admits is what execute's schema-aware check admits.
 */

/**
 * What one entry's schema may cost, in units of about one property each (a description costs one more per 50
 * characters, an enumeration one per value), about 50 KB of JSON at most: a schema with thousands of types gives no
 * entry a schema of megabytes. Beyond it, what is left is described permissively (an input object as
 * `{type: 'object'}`, an enumeration as a string, an output object as `{type: 'object'}`).
 */
export const maxSchemaCost = 1_500;
/** An enumeration with more values than this is described as a string (input and output alike). */
export const maxEnumValues = 1_000;

/** An entry's schema budget: each part takes what it costs while enough is left. */
export class SchemaBudget {
  #left: number;

  constructor(total = maxSchemaCost) {
    this.#left = total;
  }

  /** Takes `cost` when that much is left; false (and nothing taken) otherwise. */
  take(cost: number): boolean {
    if (cost > this.#left) return false;
    this.#left -= cost;
    return true;
  }
}

/** graphql-js's Int: a signed 32-bit integer (GraphQL spec §3.5.1); input coercion refuses any other number. */
const int32Schema: JsonSchema = Object.freeze({ type: 'integer', minimum: -2_147_483_648, maximum: 2_147_483_647 });

/**
 * The built-in scalars as input coercion takes them: ID also accepts an integer (which it turns into a string).
 * A schema cannot redefine them, so they hold without the schema too.
 */
const builtinInputScalars: Readonly<Record<string, JsonSchema>> = Object.freeze({
  Int: int32Schema,
  Float: Object.freeze({ type: 'number' }),
  String: Object.freeze({ type: 'string' }),
  Boolean: Object.freeze({ type: 'boolean' }),
  ID: Object.freeze({ anyOf: [{ type: 'string' }, { type: 'integer' }] }),
});

/** Any value but null: a non-null custom scalar, whose own parsing the catalogue cannot know. */
const notNull: JsonSchema = Object.freeze({ not: { type: 'null' } });

/**
 * `schema` that also admits null, written as compactly as strict Ajv compiles it (`type: [X, 'null']`, an enum with
 * null, or one more `anyOf` branch).
 *
 * @example orNull({ type: 'string' }) // { type: ['string', 'null'] }
 */
export function orNull(schema: JsonSchema): JsonSchema {
  const keys = Object.keys(schema);
  if (keys.length === 0 || schema === notNull) return {};
  if (typeof schema.type === 'string' && !('const' in schema)) {
    const nullable: JsonSchema = { ...schema, type: [schema.type, 'null'] };
    if (Array.isArray(schema.enum)) nullable.enum = [...schema.enum, null];
    return nullable;
  }
  if (keys.length === 1 && Array.isArray(schema.anyOf)) return { anyOf: [...schema.anyOf, { type: 'null' }] };
  return { anyOf: [schema, { type: 'null' }] };
}

/** A variable or an argument, as the input object's property that gives its value. */
export interface InputSlot {
  name: string;
  /** Its JSON Schema, null included when the type is nullable. */
  schema: JsonSchema;
  /** Non-null without a default: coercion refuses a call without it. */
  required: boolean;
}

/** An input object's schema, what it costs, and the input objects it refers to. */
interface Definition {
  schema: JsonSchema;
  cost: number;
  refers: readonly GraphQLInputObjectType[];
}

/** Where a schema being written notes what it costs and the input objects it refers to. */
interface Tally {
  cost: number;
  refers: GraphQLInputObjectType[];
}

/**
 * The input objects of one schema, each described once (`$defs` entries), shared by the entries of one catalogue:
 * two thousand root fields that take the same input objects describe them once.
 */
export class InputDefinitions {
  readonly #definitions = new Map<GraphQLInputObjectType, Definition>();

  /** An input object's fields: `required` = non-null without default; a @oneOf object takes exactly one, not null. */
  definition(type: GraphQLInputObjectType): Definition {
    let definition = this.#definitions.get(type);
    if (definition === undefined) {
      const tally: Tally = { cost: 1, refers: [] };
      definition = { schema: inputObjectSchema(type, tally), cost: tally.cost, refers: tally.refers };
      this.#definitions.set(type, definition);
    }
    return definition;
  }
}

/**
 * The JSON Schemas of one entry's input: input objects go to `$defs` and are referenced as `#/$defs/<TypeName>`
 * (recursion included), as many as the entry's budget takes, nearest first; one past it is `{type: 'object'}`.
 * Without the upstream's schema only the built-in scalars are known; any other named type is unconstrained (`{}`).
 */
export class InputSchemas {
  readonly #schema: GraphQLSchema | undefined;
  readonly #definitions: InputDefinitions;
  readonly #budget: SchemaBudget;
  readonly #tally: Tally = { cost: 0, refers: [] };

  constructor(schema: GraphQLSchema | undefined, definitions = new InputDefinitions(), budget = new SchemaBudget()) {
    this.#schema = schema;
    this.#definitions = definitions;
    this.#budget = budget;
  }

  /** The slot of a variable declared as `type` (a type reference of the document), with or without a default. */
  variable(name: string, type: TypeNode, hasDefault: boolean): InputSlot {
    const { Kind, typeFromAST, isInputType } = graphql();
    const required = type.kind === Kind.NON_NULL_TYPE && !hasDefault;
    if (this.#schema === undefined) return { name, schema: declaredSchema(type), required };
    const resolved = typeFromAST(this.#schema, type);
    return { name, schema: resolved !== undefined && isInputType(resolved) ? schemaOf(resolved, this.#tally) : {}, required };
  }

  /** The slot of a field's argument, with its description. */
  argument(argument: GraphQLArgument): InputSlot {
    return { name: argument.name, schema: describedSchema(argument, this.#tally), required: isRequired(argument) };
  }

  /**
   * The object whose properties are `slots` (no other key: an unknown variable would only be ignored), with the
   * `$defs` of the input objects it reaches.
   */
  object(slots: InputSlot[], extra: Record<string, JsonSchema> = {}): JsonSchema {
    // A document that declares a variable twice (invalid, but it parses) gives it once: `required` must not repeat.
    const byName = new Map<string, InputSlot>();
    for (const slot of slots) if (!byName.has(slot.name)) byName.set(slot.name, slot);
    const unique = [...byName.values()];
    const required = unique.filter((slot) => slot.required).map((slot) => slot.name);
    const object: JsonSchema = {
      type: 'object',
      properties: Object.fromEntries([...unique.map((slot) => [slot.name, slot.schema] as const), ...Object.entries(extra)]),
      ...(required.length > 0 && { required }),
      additionalProperties: false,
    };
    const defs = this.#defs();
    return defs.length === 0 ? object : { ...object, $defs: Object.fromEntries(defs) };
  }

  /** The input objects the slots reach, breadth first, within the budget (a worklist: no deep stack). */
  #defs(): Array<[string, JsonSchema]> {
    this.#budget.take(this.#tally.cost);
    const defs = new Map<string, JsonSchema>();
    const pending = [...this.#tally.refers];
    for (let type = pending.shift(); type !== undefined; type = pending.shift()) {
      if (defs.has(type.name)) continue;
      const definition = this.#definitions.definition(type);
      if (this.#budget.take(definition.cost)) {
        defs.set(type.name, definition.schema);
        pending.push(...definition.refers);
      } else defs.set(type.name, { type: 'object' });
    }
    return [...defs];
  }
}

function inputObjectSchema(type: GraphQLInputObjectType, tally: Tally): JsonSchema {
  const fields = Object.values(type.getFields());
  tally.cost += fields.length;
  if (type.isOneOf) {
    const { isNonNullType } = graphql();
    const properties = fields.map((field) => {
      const value = valueSchema(isNonNullType(field.type) ? field.type.ofType : field.type, tally);
      return [field.name, withDescription(value, field, tally)] as const;
    });
    return {
      type: 'object',
      properties: Object.fromEntries(properties),
      minProperties: 1,
      maxProperties: 1,
      additionalProperties: false,
    };
  }
  const required = fields.filter(isRequired).map((field) => field.name);
  return {
    type: 'object',
    properties: Object.fromEntries(fields.map((field) => [field.name, describedSchema(field, tally)])),
    ...(required.length > 0 && { required }),
    additionalProperties: false,
  };
}

/** The schema of a value of `type`: null admitted unless the type is non-null. */
function schemaOf(type: GraphQLInputType, tally: Tally): JsonSchema {
  const { isNonNullType } = graphql();
  return isNonNullType(type) ? valueSchema(type.ofType, tally) : orNull(valueSchema(type, tally));
}

/** The schema of a non-null value of `type`. */
function valueSchema(type: GraphQLInputType, tally: Tally): JsonSchema {
  const { isListType, isNonNullType, isEnumType, isInputObjectType, isSpecifiedScalarType } = graphql();
  tally.cost++;
  if (isNonNullType(type)) return valueSchema(type.ofType, tally);
  if (isListType(type)) {
    // GraphQL input coercion takes a single item where a list is expected, as a list of one (spec §3.11).
    const item = type.ofType;
    const single = valueSchema(isNonNullType(item) ? item.ofType : item, tally);
    return { anyOf: [{ type: 'array', items: schemaOf(item, tally) }, ...branches(single)] };
  }
  if (isEnumType(type)) {
    const values = type.getValues();
    // Ajv refuses an empty `enum`: an enumeration without values (an invalid schema) is any string.
    if (values.length === 0 || values.length > maxEnumValues) return { type: 'string' };
    tally.cost += values.length;
    return { type: 'string', enum: values.map((value) => value.name) };
  }
  if (isInputObjectType(type)) {
    tally.refers.push(type);
    return { $ref: `#/$defs/${type.name}` };
  }
  return isSpecifiedScalarType(type) ? builtinInputScalars[type.name] : notNull;
}

/** A schema's `anyOf` branches, or the schema as the one branch. */
function branches(schema: JsonSchema): JsonSchema[] {
  return Object.keys(schema).length === 1 && Array.isArray(schema.anyOf) ? (schema.anyOf as JsonSchema[]) : [schema];
}

function isRequired(slot: GraphQLArgument | GraphQLInputField): boolean {
  return graphql().isNonNullType(slot.type) && slot.defaultValue === undefined;
}

function describedSchema(slot: GraphQLArgument | GraphQLInputField, tally: Tally): JsonSchema {
  return withDescription(schemaOf(slot.type, tally), slot, tally);
}

/** The upstream's description (cleaned) and deprecation beside a schema. */
function withDescription(schema: JsonSchema, slot: GraphQLArgument | GraphQLInputField, tally: Tally): JsonSchema {
  const description = cleanDescription(slot.description ?? undefined);
  tally.cost += Math.ceil(description.length / 50);
  const described = description === '' ? schema : { ...schema, description };
  return slot.deprecationReason == null ? described : { ...described, deprecated: true };
}

/** A declared type without the schema: the built-in scalars, lists and non-null; any other name is unconstrained. */
function declaredSchema(type: TypeNode): JsonSchema {
  const { Kind } = graphql();
  const value = (node: TypeNode): JsonSchema => {
    if (node.kind === Kind.NON_NULL_TYPE) return value(node.type);
    // Own keys only: a type named `constructor` is no built-in.
    if (node.kind === Kind.NAMED_TYPE) {
      return Object.hasOwn(builtinInputScalars, node.name.value) ? builtinInputScalars[node.name.value] : {};
    }
    return { anyOf: [{ type: 'array', items: of(node.type) }, ...branches(value(node.type))] };
  };
  const of = (node: TypeNode): JsonSchema => (node.kind === Kind.NON_NULL_TYPE ? value(node.type) : orNull(value(node)));
  return of(type);
}
