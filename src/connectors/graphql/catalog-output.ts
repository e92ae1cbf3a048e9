import type {
  DirectiveNode,
  DocumentNode,
  FieldNode,
  FragmentDefinitionNode,
  GraphQLCompositeType,
  GraphQLField,
  GraphQLObjectType,
  GraphQLOutputType,
  GraphQLSchema,
  InlineFragmentNode,
  OperationDefinitionNode,
  SelectionSetNode,
} from 'graphql';
import type { JsonSchema } from '../catalog.ts';
import { maxEnumValues, orNull, type SchemaBudget } from './catalog-input.ts';
import { graphql } from './document.ts';

/**
 * The output half of the GraphQL catalogue (docs/catalog.md): the shape of the `data` a selection answers, walked
 * from the upstream's schema. Exact where that is cheap (aliases, `__typename`, fragments on abstract types as one
 * variant per possible type); permissive where exact would cost (deeper than `maxOutputDepth`, more possible types
 * than `maxExactPossibleTypes`, past the entry's budget); never narrower than what a conforming upstream answers.
 */

/** How deep the walk follows a selection; deeper objects are described as `{type: 'object'}`. */
export const maxOutputDepth = 16;
/**
 * Fragments that narrow an abstract type to some of its possible types are described as one variant per possible type
 * (`anyOf`) up to this many; beyond, as one object whose narrowed fields are optional.
 */
export const maxExactPossibleTypes = 16;

/** A value's shape: what `shapeSchema` writes as JSON Schema, and what the records rule reads. */
export type Shape =
  /** `schema` describes the non-null values. */
  | { kind: 'leaf'; schema: JsonSchema; nullable: boolean }
  | { kind: 'list'; item: Shape; nullable: boolean }
  /** One variant per possible runtime type (or one for them all). */
  | { kind: 'object'; variants: ObjectShape[]; nullable: boolean }
  /** An object whose keys are not known (past a bound, or a selection the catalogue cannot see). */
  | { kind: 'open'; nullable: boolean }
  /** Any JSON value: a custom scalar, or a field the schema does not have. */
  | { kind: 'any' };

export interface ObjectShape {
  /** By response key (alias or field name); `optional` when only selected under @include/@skip or a narrowing fragment. */
  fields: Map<string, { shape: Shape; optional: boolean }>;
}

const anyShape: Shape = { kind: 'any' };

/** The built-in scalars as an upstream serializes them. Int without its 32-bit range: some servers answer 64 bits. */
const builtinOutputScalars: Readonly<Record<string, JsonSchema>> = Object.freeze({
  Int: { type: 'integer' },
  Float: { type: 'number' },
  String: { type: 'string' },
  ID: { type: 'string' },
  Boolean: { type: 'boolean' },
});

interface Gathered {
  /** Each field node under the key, with the type it was selected on (the parent, or a fragment's condition). */
  nodes: Array<{ node: FieldNode; scope: GraphQLCompositeType }>;
  optional: boolean;
}

type Applies = 'always' | 'sometimes' | 'never';

/** The shapes of one document's selections against the upstream's schema, within one entry's budget. */
export class SelectionShapes {
  readonly #schema: GraphQLSchema;
  readonly #fragments: ReadonlyMap<string, FragmentDefinitionNode>;
  readonly #budget: SchemaBudget;

  constructor(schema: GraphQLSchema, fragments: ReadonlyMap<string, FragmentDefinitionNode>, budget: SchemaBudget) {
    this.#schema = schema;
    this.#fragments = fragments;
    this.#budget = budget;
  }

  /** The shape of an operation's `data`: its root type with its selection set. */
  root(type: GraphQLObjectType, selectionSet: SelectionSetNode): Shape {
    return this.#composite(type, [selectionSet], 0, false);
  }

  /** The shape of a value of `type` with `sets` merged as its selection. */
  output(type: GraphQLOutputType, sets: readonly SelectionSetNode[], depth: number, nullable = true): Shape {
    const { isNonNullType, isListType, isEnumType, isScalarType, isSpecifiedScalarType } = graphql();
    if (isNonNullType(type)) return this.output(type.ofType, sets, depth, false);
    if (isListType(type)) return { kind: 'list', item: this.output(type.ofType, sets, depth), nullable };
    if (isEnumType(type)) {
      const values = type.getValues();
      const schema =
        // Ajv refuses an empty `enum`: an enumeration without values (an invalid schema) is any string.
        values.length > 0 && values.length <= maxEnumValues && this.#budget.take(values.length)
          ? { type: 'string', enum: values.map((value) => value.name) }
          : { type: 'string' };
      return { kind: 'leaf', schema, nullable };
    }
    if (isScalarType(type)) {
      return isSpecifiedScalarType(type) ? { kind: 'leaf', schema: builtinOutputScalars[type.name], nullable } : anyShape;
    }
    return this.#composite(type, sets, depth, nullable);
  }

  #composite(type: GraphQLCompositeType, sets: readonly SelectionSetNode[], depth: number, nullable: boolean): Shape {
    const open: Shape = { kind: 'open', nullable };
    if (depth > maxOutputDepth || !this.#budget.take(1)) return open;
    const { isObjectType } = graphql();
    const possible = isObjectType(type) ? [type] : this.#schema.getPossibleTypes(type);
    const state = { narrowed: false };
    const gathered = this.#gather(sets, type, possible, state);
    if (gathered === undefined) return open;
    if (!state.narrowed || possible.length > maxExactPossibleTypes) {
      return { kind: 'object', variants: [this.#object(gathered, possible, depth)], nullable };
    }
    const variants: ObjectShape[] = [];
    for (const runtime of possible) {
      const exact = this.#gather(sets, type, [runtime], { narrowed: false });
      if (exact === undefined) return open;
      variants.push(this.#object(exact, [runtime], depth));
    }
    return { kind: 'object', variants, nullable };
  }

  #object(gathered: Map<string, Gathered>, runtime: readonly GraphQLObjectType[], depth: number): ObjectShape {
    const fields: ObjectShape['fields'] = new Map();
    for (const [key, { nodes, optional }] of gathered) fields.set(key, { shape: this.#field(nodes, runtime, depth), optional });
    return { fields };
  }

  /** The shape under one response key: its field's type (from the runtime type when there is one) and merged selections. */
  #field(nodes: Gathered['nodes'], runtime: readonly GraphQLObjectType[], depth: number): Shape {
    const name = nodes[0].node.name.value;
    if (nodes.some(({ node }) => node.name.value !== name)) return anyShape;
    if (name === '__typename') return this.#typename(runtime);
    const definitions = new Set(
      runtime.length === 1 ? [fieldOf(runtime[0], name)] : nodes.map(({ scope }) => fieldOf(scope, name)),
    );
    const [definition] = definitions;
    // Several definitions: the same key selected on different object types in a merged variant.
    if (definitions.size !== 1 || definition === undefined) return anyShape;
    const sets = nodes.map(({ node }) => node.selectionSet).filter((set) => set !== undefined);
    return this.output(definition.type, sets, depth + 1);
  }

  #typename(runtime: readonly GraphQLObjectType[]): Shape {
    if (runtime.length === 1) return { kind: 'leaf', schema: { type: 'string', const: runtime[0].name }, nullable: false };
    const names = runtime.map((type) => type.name);
    const schema = names.length > 0 && this.#budget.take(names.length) ? { type: 'string', enum: names } : { type: 'string' };
    return { kind: 'leaf', schema, nullable: false };
  }

  /**
   * The fields `sets` select on `parent` when its value is one of `runtime` (GraphQL's CollectFields, for a set of
   * runtime types): a fragment that applies to some of them only makes its fields optional and sets `narrowed`.
   * Undefined past the budget (a fragment spread many times over counts each time).
   */
  #gather(
    sets: readonly SelectionSetNode[],
    parent: GraphQLCompositeType,
    runtime: readonly GraphQLObjectType[],
    state: { narrowed: boolean },
  ): Map<string, Gathered> | undefined {
    const { Kind } = graphql();
    const fields = new Map<string, Gathered>();
    const visit = (set: SelectionSetNode, scope: GraphQLCompositeType, optional: boolean, spread: ReadonlySet<string>) => {
      for (const selection of set.selections) {
        if (!this.#budget.take(1)) return false;
        const included = inclusionOf(selection.directives);
        if (included === 'never') continue;
        const conditional = optional || included === 'sometimes';
        if (selection.kind === Kind.FIELD) {
          const key = selection.alias?.value ?? selection.name.value;
          const known = fields.get(key);
          if (known === undefined) fields.set(key, { nodes: [{ node: selection, scope }], optional: conditional });
          else {
            known.nodes.push({ node: selection, scope });
            known.optional &&= conditional;
          }
          continue;
        }
        let fragment: InlineFragmentNode | FragmentDefinitionNode | undefined = selection as InlineFragmentNode;
        let followed = spread;
        if (selection.kind === Kind.FRAGMENT_SPREAD) {
          const name = selection.name.value;
          fragment = spread.has(name) ? undefined : this.#fragments.get(name);
          followed = new Set([...spread, name]);
        }
        if (fragment === undefined) continue;
        const condition = this.#conditionType(fragment.typeCondition?.name.value);
        const applies = condition === null ? 'always' : this.#applies(condition, runtime);
        if (applies === 'never') continue;
        if (applies === 'sometimes') state.narrowed = true;
        const inner = condition ?? scope;
        if (!visit(fragment.selectionSet, inner, conditional || applies === 'sometimes', followed)) return false;
      }
      return true;
    };
    for (const set of sets) if (!visit(set, parent, false, new Set())) return undefined;
    return fields;
  }

  /** A fragment's condition: null when it has none, undefined when the schema has no such composite type. */
  #conditionType(name: string | undefined): GraphQLCompositeType | null | undefined {
    if (name === undefined) return null;
    const type = this.#schema.getType(name);
    return type !== undefined && graphql().isCompositeType(type) ? type : undefined;
  }

  /** Whether a fragment on `condition` applies to each of the runtime types; an unknown condition applies sometimes. */
  #applies(condition: GraphQLCompositeType | undefined, runtime: readonly GraphQLObjectType[]): Applies {
    if (condition === undefined) return 'sometimes';
    const { isAbstractType } = graphql();
    const matching = runtime.filter(
      (type) => type === condition || (isAbstractType(condition) && this.#schema.isSubType(condition, type)),
    ).length;
    return matching === 0 ? 'never' : matching === runtime.length ? 'always' : 'sometimes';
  }
}

/** A type's field by name (own keys only), or undefined (a union has none, a drifted schema may lack it). */
function fieldOf(type: GraphQLCompositeType, name: string): GraphQLField<unknown, unknown> | undefined {
  if (!('getFields' in type)) return undefined;
  const fields = type.getFields();
  return Object.hasOwn(fields, name) ? fields[name] : undefined;
}

/** Whether @skip and @include keep a selection: literal arguments decide, a variable makes it `sometimes`. */
function inclusionOf(directives: readonly DirectiveNode[] | undefined): Applies {
  let result: Applies = 'always';
  for (const directive of directives ?? []) {
    const name = directive.name.value;
    if (name !== 'skip' && name !== 'include') continue;
    const argument = directive.arguments?.find((candidate) => candidate.name.value === 'if')?.value;
    if (argument?.kind === graphql().Kind.BOOLEAN) {
      if (argument.value === (name === 'skip')) return 'never';
    } else result = 'sometimes';
  }
  return result;
}

/**
 * A shape as JSON Schema 2020-12: objects closed (`additionalProperties: false`: an answer has exactly the selected
 * keys), variants as `anyOf`, nullable values admitting null.
 */
export function shapeSchema(shape: Shape): JsonSchema {
  switch (shape.kind) {
    case 'any':
      return {};
    case 'leaf':
      return shape.nullable ? orNull(shape.schema) : shape.schema;
    case 'list':
      return { type: shape.nullable ? ['array', 'null'] : 'array', items: shapeSchema(shape.item) };
    case 'open':
      return { type: shape.nullable ? ['object', 'null'] : 'object' };
    case 'object': {
      const variants = distinct(shape.variants.map(objectSchema));
      if (variants.length === 1) return shape.nullable ? { ...variants[0], type: ['object', 'null'] } : variants[0];
      return { anyOf: shape.nullable ? [...variants, { type: 'null' }] : variants };
    }
  }
}

/** One object variant: its keys, `required` unless optional, no other key. */
export function objectSchema(object: ObjectShape): JsonSchema {
  const entries = [...object.fields];
  const required = entries.filter(([, field]) => !field.optional).map(([key]) => key);
  return {
    type: 'object',
    properties: Object.fromEntries(entries.map(([key, field]) => [key, shapeSchema(field.shape)])),
    ...(required.length > 0 && { required }),
    additionalProperties: false,
  };
}

/** The schemas once each (by their JSON text), in order. */
export function distinct(schemas: JsonSchema[]): JsonSchema[] {
  const seen = new Set<string>();
  return schemas.filter((schema) => {
    const text = JSON.stringify(schema);
    if (seen.has(text)) return false;
    seen.add(text);
    return true;
  });
}

/**
 * The shape of the `data` an operation answers, or undefined when the schema has no root type for it (a mutation
 * against a schema without one).
 */
export function operationShape(
  schema: GraphQLSchema,
  document: DocumentNode,
  operation: OperationDefinitionNode,
  budget: SchemaBudget,
): Shape | undefined {
  const root = operation.operation === 'mutation' ? schema.getMutationType() : schema.getQueryType();
  if (root == null) return undefined;
  const { Kind } = graphql();
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const definition of document.definitions) {
    if (definition.kind === Kind.FRAGMENT_DEFINITION && !fragments.has(definition.name.value)) {
      fragments.set(definition.name.value, definition);
    }
  }
  return new SelectionShapes(schema, fragments, budget).root(root, operation.selectionSet);
}
