import type { GraphQLError, GraphQLSchema, IntrospectionQuery } from 'graphql';
import { ApiError } from '../../core/errors.ts';
import { graphql, type ParsedOperation } from './document.ts';
import type { UpstreamSchema } from './schema-cache.ts';

/** The largest introspection answer used (docs/limits.md#upstreams): a larger one is not read further. */
export const introspectionMaxBytes = 5 * 1024 * 1024;

/**
 * How deep `ofType` may wrap a type reference. The standard introspection query follows 9 levels, so a deeper
 * reference cannot be read whole from any server; an answer deeper than this was not made by that query.
 */
const maxTypeRefDepth = 16;

/**
 * A schema as the connector keeps it: graphql-js's schema, its counts for `test`, and the documents already validated
 * against it (their errors), so a workflow's repeated document is validated once.
 */
export interface CheckedSchema {
  readonly schema: GraphQLSchema;
  readonly queryType: string | null;
  readonly mutationType: string | null;
  /** Entries of `__schema.types` in the answer, built-in and `__` types included. */
  readonly types: number;
  readonly validated: Map<string, readonly GraphQLError[]>;
}

export type KnownSchema = UpstreamSchema<CheckedSchema>;

/** The standard introspection query (graphql-js's, with descriptions): what every GraphQL server answers. */
export function introspectionQuery(): string {
  return graphql().getIntrospectionQuery();
}

/** No schema, and why: calls are then checked for syntax only. */
export function noSchema(reason: string, now = new Date()): KnownSchema {
  return { available: false, reason, fetchedAt: now.toISOString(), bytes: 256 + reason.length * 2 };
}

/**
 * The schema of an introspection answer's `data` (`bytes`: the answer's size, the measure the cache bounds), or no
 * schema when the answer has no usable `__schema`: type references deeper than any introspection query follows, or a
 * schema graphql-js cannot build. Never throws.
 */
export function schemaOfIntrospection(data: Record<string, unknown>, bytes: number, now = new Date()): KnownSchema {
  const introspection = data as unknown as IntrospectionQuery;
  const schema = introspection.__schema;
  if (typeof schema !== 'object' || schema === null || !Array.isArray(schema.types)) {
    return noSchema('The introspection answer has no __schema with types.', now);
  }
  const tooDeep = schema.types.find((type) => typeRefsDeeperThan(type, maxTypeRefDepth));
  if (tooDeep !== undefined) {
    return noSchema(
      `The introspection answer nests type references (ofType) deeper than ${maxTypeRefDepth} levels in ${String((tooDeep as { name?: unknown }).name)}.`,
      now,
    );
  }
  try {
    const built = graphql().buildClientSchema(introspection, { assumeValid: false });
    // A schema the specification's rules refuse (an object type without fields, say) would make graphql-js's
    // `validate` throw on every call checked against it: such an upstream has no schema to check by.
    const invalid = graphql().validateSchema(built);
    if (invalid.length > 0) {
      const more = invalid.length > 1 ? ` (and ${invalid.length - 1} more)` : '';
      return noSchema(`The upstream's schema breaks the GraphQL specification: ${invalid[0].message}${more}`.slice(0, 500), now);
    }
    const checked: CheckedSchema = {
      schema: built,
      queryType: schema.queryType?.name ?? null,
      mutationType: schema.mutationType?.name ?? null,
      types: schema.types.length,
      validated: new Map(),
    };
    // Counted at 3x its answer's bytes, an over-estimate on purpose: the realistic test schema, built, held about 1x its
    // answer on the heap (validated documents and their errors come on top), so the bound errs towards keeping less.
    return { available: true, schema: checked, fetchedAt: now.toISOString(), bytes: bytes * 3 };
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    return noSchema(`The introspection answer does not describe a usable schema: ${message}`, now);
  }
}

/** Whether a type's fields, arguments, input fields or interfaces reference a type wrapped deeper than `max`. */
function typeRefsDeeperThan(type: unknown, max: number): boolean {
  const refs: unknown[] = [];
  const t = type as Record<string, unknown>;
  for (const list of [t.fields, t.inputFields]) {
    if (!Array.isArray(list)) continue;
    for (const field of list as Array<Record<string, unknown>>) {
      refs.push(field?.type);
      if (Array.isArray(field?.args)) for (const arg of field.args as Array<Record<string, unknown>>) refs.push(arg?.type);
    }
  }
  for (const ref of refs) {
    let depth = 0;
    for (let at = ref as Record<string, unknown> | null | undefined; at?.ofType; at = at.ofType as Record<string, unknown>) {
      if (++depth > max) return true;
    }
  }
  return false;
}

/** How many validated documents one schema remembers; beyond, the oldest is forgotten. */
const maxValidatedDocuments = 200;
/** Documents longer than this are validated each time (and not remembered). */
const maxRememberedLength = 65_536;

/**
 * Checks an operation against the upstream's schema before it is sent: the GraphQL specification's validation rules
 * (graphql-js's `validate`), then its `variables` coerced by their declared types (graphql-js's `getVariableValues`).
 *
 * @throws ApiError `graphql_validation_failed` with `details.errors: [{message, locations, path?}]`.
 */
export function checkAgainstSchema(
  checked: CheckedSchema,
  text: string,
  operation: ParsedOperation,
  variables: Record<string, unknown> | undefined,
): void {
  const { validate, getVariableValues } = graphql();
  let errors = checked.validated.get(text);
  if (errors === undefined) {
    errors = validate(checked.schema, operation.document, undefined, { maxErrors: 50 });
    if (text.length <= maxRememberedLength) {
      if (checked.validated.size >= maxValidatedDocuments) {
        checked.validated.delete(checked.validated.keys().next().value as string);
      }
      checked.validated.set(text, errors);
    }
  }
  if (errors.length > 0) throw validationErrors(errors);
  const definitions = operation.operation.variableDefinitions ?? [];
  if (definitions.length === 0) return;
  const coerced = getVariableValues(checked.schema, definitions, variables ?? {}, { maxErrors: 50 });
  if (coerced.errors) throw validationErrors(coerced.errors);
}

function validationErrors(errors: readonly GraphQLError[]): ApiError {
  const listed = errors.map((error) => ({
    message: error.message,
    locations: error.locations?.map(({ line, column }) => ({ line, column })) ?? [],
    ...(error.path && { path: error.path }),
  }));
  const more = listed.length > 1 ? ` (and ${listed.length - 1} more)` : '';
  return new ApiError(
    'graphql_validation_failed',
    `The document does not fit the upstream's schema: ${listed[0].message}${more}`,
    { errors: listed },
  );
}

/** The schema as SDL (`GET /integrations/{id}/schema`). */
export function sdlOf(checked: CheckedSchema): string {
  return graphql().printSchema(checked.schema);
}
