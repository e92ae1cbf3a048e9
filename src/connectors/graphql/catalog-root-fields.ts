import type {
  GraphQLCompositeType,
  GraphQLField,
  GraphQLNamedType,
  GraphQLObjectType,
  GraphQLOutputType,
  GraphQLSchema,
} from 'graphql';
import { validationFailed } from '../../core/errors.ts';
import { type CatalogOperation, cleanDescription, type JsonSchema } from '../catalog.ts';
import { receiveAnswerSchema, recordSchemas, sendAnswerSchema } from './catalog-answers.ts';
import { type InputDefinitions, InputSchemas, SchemaBudget } from './catalog-input.ts';
import { distinct, maxExactPossibleTypes, operationShape, type Shape, shapeSchema } from './catalog-output.ts';
import { graphql, maxDocumentBytes, maxDocumentTokens } from './document.ts';

/**
 * The catalogue's root-field entries (`catalog.root_fields: true`, docs/catalog.md): one per field of the Query type
 * (`read`) and of the Mutation type (`write`), run as a one-field document built from the arguments given and a
 * selection (the caller's `selection`, else a default one).
 */

/** The most root-field entries one schema gives (Query's fields first, then Mutation's). */
export const maxRootFieldEntries = 2_000;
/** The most scalar and enum fields a default selection names, over all its levels. */
export const maxDefaultSelectionFields = 60;

/**
 * An entry per root field whose name is not in `taken` (the saved documents' names: a document wins over a field of
 * its name; a Mutation field named as a Query field is left out too).
 */
export function rootFieldEntries(
  schema: GraphQLSchema,
  definitions: InputDefinitions,
  taken: ReadonlySet<string>,
): CatalogOperation[] {
  const names = new Set(taken);
  const entries: CatalogOperation[] = [];
  const roots = [
    ['read', schema.getQueryType()],
    ['write', schema.getMutationType()],
  ] as const;
  for (const [kind, root] of roots) {
    if (root == null) continue;
    for (const field of Object.values(root.getFields())) {
      if (entries.length >= maxRootFieldEntries) return entries;
      if (names.has(field.name)) continue;
      names.add(field.name);
      entries.push(rootFieldEntry(schema, definitions, kind, root, field));
    }
  }
  return entries;
}

type Field = GraphQLField<unknown, unknown>;

function rootFieldEntry(
  schema: GraphQLSchema,
  definitions: InputDefinitions,
  kind: 'read' | 'write',
  root: GraphQLObjectType,
  field: Field,
): CatalogOperation {
  const { getNamedType, isCompositeType } = graphql();
  const operation = kind === 'read' ? 'query' : 'mutation';
  const returned = getNamedType(field.type);
  const composite = isCompositeType(returned);
  // An argument named `selection` is the upstream's: the entry then always answers the default selection.
  const takesSelection = composite && !field.args.some((argument) => argument.name === 'selection');
  const fallback = composite ? defaultSelection(returned) : undefined;
  const inputs = new InputSchemas(schema, definitions);
  const selection: Record<string, JsonSchema> = takesSelection
    ? {
        selection: {
          type: 'string',
          minLength: 1,
          maxLength: maxDocumentBytes,
          description: `The fields to answer: a GraphQL selection set on ${returned.name}, in braces. Default: ${fallback}`,
        },
      }
    : {};
  const request = (input: Record<string, unknown>) => rootFieldRequest(operation, field, takesSelection, fallback, input);
  return {
    name: field.name,
    kind,
    description:
      cleanDescription(field.description ?? undefined) ||
      `The ${root.name} field ${field.name}, returning ${String(field.type)}.`,
    input_schema: inputs.object(
      field.args.map((argument) => inputs.argument(argument)),
      selection,
    ),
    output_schema: rootFieldOutput(schema, kind, field, request, takesSelection),
    request,
  };
}

/**
 * The answer of the default selection; with a `selection` input, any selection's answer also validates: a record (or
 * the field's value) is then only known to be an object (or a list of them) of the field's type.
 */
function rootFieldOutput(
  schema: GraphQLSchema,
  kind: 'read' | 'write',
  field: Field,
  request: (input: Record<string, unknown>) => Record<string, unknown>,
  takesSelection: boolean,
): JsonSchema {
  const built = request({});
  const document = graphql().parse(String(built.query ?? built.mutation));
  const operation = document.definitions[0];
  const data =
    operation.kind === graphql().Kind.OPERATION_DEFINITION
      ? operationShape(schema, document, operation, new SchemaBudget())
      : undefined;
  const value = data?.kind === 'object' ? data.variants[0].fields.get(field.name)?.shape : undefined;
  const exact: Shape = value ?? { kind: 'any' };
  const custom = takesSelection ? anySelection(field.type) : undefined;
  const note = (schema: JsonSchema) =>
    Object.keys(schema).length === 0 ? { description: 'The answer of a `selection` given.' } : schema;
  if (kind === 'read') {
    const records = recordSchemas(exact);
    if (custom !== undefined) records.push(...recordSchemas(custom).map(note));
    return receiveAnswerSchema(records);
  }
  const values = distinct([shapeSchema(exact), ...(custom === undefined ? [] : [note(shapeSchema(custom))])]);
  const object = {
    type: 'object',
    properties: { [field.name]: values.length === 1 ? values[0] : { anyOf: values } },
    required: [field.name],
    additionalProperties: false,
  };
  return sendAnswerSchema(object, 1);
}

/** A value of `type` under any selection: lists and nulls as the type says, objects of unknown keys. */
function anySelection(type: GraphQLOutputType, nullable = true): Shape {
  const { isNonNullType, isListType } = graphql();
  if (isNonNullType(type)) return anySelection(type.ofType, false);
  if (isListType(type)) return { kind: 'list', item: anySelection(type.ofType), nullable };
  return { kind: 'open', nullable };
}

/**
 * The selection a root field answers by default: the scalar and enum fields of its type, and of the object fields
 * it has, two levels deep (at most `maxDefaultSelectionFields`, each level's own first); deprecated fields and fields
 * with required arguments left out; `__typename` on interfaces and unions, and each union member's fields (a name
 * another member gives another type left out, so that they merge). A Relay connection is looked through: its scalar
 * fields (`totalCount`) and `edges { node { … } }` (or `nodes { … }`), the node's fields counting as the connection's
 * level. `pageInfo` and cursors are not selected: the records rule answers only the nodes, and the catalogue's calls
 * do not paginate.
 *
 * @example defaultSelection(schema.getType('CustomerConnection')) // '{ totalCount edges { node { id name … } } }'
 */
export function defaultSelection(type: GraphQLNamedType): string | undefined {
  if (!graphql().isCompositeType(type)) return undefined;
  return selectionOf(type, 1, { fields: maxDefaultSelectionFields }, new Set()) ?? '{ __typename }';
}

function selectionOf(
  type: GraphQLCompositeType,
  level: number,
  left: { fields: number },
  through: ReadonlySet<string>,
  typed?: Map<string, string>,
): string | undefined {
  const { isUnionType, isAbstractType, isLeafType, getNamedType, isCompositeType } = graphql();
  const parts: string[] = isAbstractType(type) ? ['__typename'] : [];
  if (isUnionType(type)) {
    // Members' fields share the response keys: a name another member gave another type would not merge.
    const typed = new Map<string, string>();
    for (const member of type.getTypes().slice(0, maxExactPossibleTypes)) {
      const inner = selectionOf(member, level, left, through, typed);
      if (inner !== undefined) parts.push(`... on ${member.name} ${inner}`);
    }
    return `{ ${parts.join(' ')} }`;
  }
  const fields = Object.values(type.getFields()).filter(selectable);
  // A union's member is not looked through (its `edges` could clash with another member's).
  const connection = through.has(type.name) || typed !== undefined ? undefined : connectionOf(fields);
  const fits = (field: Field) => {
    const typeName = String(field.type);
    if ((typed?.get(field.name) ?? typeName) !== typeName) return false;
    typed?.set(field.name, typeName);
    return true;
  };
  // This level's scalars first, so that nested objects do not take the whole allowance.
  for (const field of fields) {
    if (left.fields > 0 && isLeafType(getNamedType(field.type)) && fits(field)) {
      left.fields--;
      parts.push(field.name);
    }
  }
  for (const field of connection === undefined && level < 2 ? fields : []) {
    const named = getNamedType(field.type);
    if (left.fields <= 0 || !isCompositeType(named) || !fits(field)) continue;
    const inner = selectionOf(named, level + 1, left, through);
    if (inner !== undefined) parts.push(`${field.name} ${inner}`);
  }
  if (connection !== undefined) {
    const inner = selectionOf(connection.node, level, left, new Set([...through, type.name])) ?? '{ __typename }';
    parts.push(connection.list === 'edges' ? `edges { node ${inner} }` : `nodes ${inner}`);
  }
  return parts.length === 0 ? undefined : `{ ${parts.join(' ')} }`;
}

/** Selectable without arguments and not deprecated. */
function selectable(field: Field): boolean {
  const { isNonNullType } = graphql();
  if (field.deprecationReason != null) return false;
  return !field.args.some((argument) => isNonNullType(argument.type) && argument.defaultValue === undefined);
}

/** A Relay connection's list of nodes: `edges` (a list of objects with a composite `node`), else `nodes`. */
function connectionOf(fields: Field[]): { list: 'edges' | 'nodes'; node: GraphQLCompositeType } | undefined {
  const { getNamedType, isCompositeType, isListType, isNonNullType, isObjectType, isInterfaceType } = graphql();
  const listOf = (field: Field | undefined) => {
    if (field === undefined) return undefined;
    const type = isNonNullType(field.type) ? field.type.ofType : field.type;
    return isListType(type) ? getNamedType(type) : undefined;
  };
  const edge = listOf(fields.find((field) => field.name === 'edges'));
  if (edge !== undefined && (isObjectType(edge) || isInterfaceType(edge))) {
    const node = Object.values(edge.getFields()).find((field) => field.name === 'node' && selectable(field));
    const named = node === undefined ? undefined : getNamedType(node.type);
    if (named !== undefined && isCompositeType(named)) return { list: 'edges', node: named };
  }
  const nodes = listOf(fields.find((field) => field.name === 'nodes'));
  return nodes !== undefined && isCompositeType(nodes) ? { list: 'nodes', node: nodes } : undefined;
}

/**
 * The execute request of a root field: `{query|mutation: document, variables}`, the document declaring a variable
 * per argument given (typed as the schema types the argument) and selecting `selection` (else the default).
 *
 * @throws ApiError `validation_failed` on an input that is no argument, or on `selection` when it is not exactly one
 * selection set (nothing may be added beside it: no operation, no fragment definition, no field of the root).
 */
function rootFieldRequest(
  operation: 'query' | 'mutation',
  field: Field,
  takesSelection: boolean,
  fallback: string | undefined,
  input: Record<string, unknown>,
): Record<string, unknown> {
  const declared: string[] = [];
  const passed: string[] = [];
  const given: Array<[string, unknown]> = [];
  for (const [name, value] of Object.entries(input)) {
    if ((takesSelection && name === 'selection') || value === undefined) continue;
    const argument = field.args.find((candidate) => candidate.name === name);
    if (argument === undefined) throw invalid(name, `is not an argument of ${field.name}.`);
    declared.push(`$${name}: ${String(argument.type)}`);
    passed.push(`${name}: $${name}`);
    given.push([name, value]);
  }
  // Own properties whatever the names (an argument named `__proto__` must not set a prototype).
  const variables = Object.fromEntries(given);
  const head = `${operation}${declared.length > 0 ? ` (${declared.join(', ')})` : ''} { ${field.name}${passed.length > 0 ? `(${passed.join(', ')})` : ''}`;
  const chosen = takesSelection ? input.selection : undefined;
  if (chosen === undefined) {
    return { [operation]: fallback === undefined ? `${head} }` : `${head} ${fallback} }`, variables };
  }
  if (typeof chosen !== 'string') throw invalid('selection', 'must be a string: a GraphQL selection set such as "{ id name }".');
  const selection = chosen.trim();
  // The closing brace on a line of its own: a comment at the selection's end cannot take it.
  const document = `${head} ${selection}\n}`;
  checkSelection(document, head.length + 1, selection, operation, field.name);
  return { [operation]: document, variables };
}

/** The built document holds the caller's selection as the root field's selection set, and nothing else. */
function checkSelection(document: string, start: number, selection: string, operation: string, fieldName: string): void {
  const shape = 'must be one GraphQL selection set in braces, such as "{ id name }"';
  if (!selection.startsWith('{') || !selection.endsWith('}')) throw invalid('selection', `${shape}.`);
  const bytes = Buffer.byteLength(document);
  if (bytes > maxDocumentBytes) throw invalid('selection', `makes a document of ${bytes} bytes; at most ${maxDocumentBytes}.`);
  const { parse, Kind, GraphQLError } = graphql();
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(document, { maxTokens: maxDocumentTokens });
  } catch (error) {
    if (error instanceof GraphQLError) throw invalid('selection', `${shape}: ${error.message}`);
    if (error instanceof RangeError) throw invalid('selection', 'is nested too deeply to parse.');
    throw error;
  }
  const [definition, ...others] = parsed.definitions;
  const root = definition.kind === Kind.OPERATION_DEFINITION ? definition.selectionSet.selections : [];
  const field = root.length === 1 && root[0].kind === Kind.FIELD ? root[0] : undefined;
  const exact =
    others.length === 0 &&
    definition.kind === Kind.OPERATION_DEFINITION &&
    definition.operation === operation &&
    field !== undefined &&
    field.alias === undefined &&
    field.name.value === fieldName &&
    (field.directives?.length ?? 0) === 0 &&
    field.selectionSet?.loc?.start === start &&
    field.selectionSet.loc.end === start + selection.length;
  if (!exact) throw invalid('selection', `${shape}, and nothing beside it.`);
}

function invalid(path: string, message: string) {
  return validationFailed([{ path, message }]);
}
