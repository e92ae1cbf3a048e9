import type { DocumentNode, GraphQLSchema, OperationDefinitionNode } from 'graphql';
import { ApiError, type ValidationIssue } from '../../core/errors.ts';
import { isJsonObject } from '../../core/json-object.ts';
import { type CatalogOperation, cleanDescription, maxDescriptionLength } from '../catalog.ts';
import { receiveAnswerSchema, rootRecordSchemas, sendAnswerSchema } from './catalog-answers.ts';
import { InputDefinitions, InputSchemas, SchemaBudget } from './catalog-input.ts';
import { operationShape, shapeSchema } from './catalog-output.ts';
import { rootFieldEntries } from './catalog-root-fields.ts';
import { type DocumentField, graphql, type ParsedOperation, parseOperation } from './document.ts';

/**
 * The GraphQL half of the operation catalogue (docs/catalog.md): the integration's saved documents
 * (`catalog.documents`), then with `catalog.root_fields` one entry per root field, each with the JSON Schema of the
 * variables it takes and of the `data` execute answers for it.
 */

/** The most saved documents an integration's `catalog.documents` holds. */
export const maxCatalogDocuments = 200;
/** The longest name of a saved document: it becomes part of a tool's name (`<integration id>.<name>`). */
export const maxDocumentNameLength = 128;

const namePattern = /^[A-Za-z0-9_.-]+$/;
const savedDocumentKeys = new Set(['name', 'document', 'description']);

/** A saved document: an operation the integration offers by name. */
export interface SavedDocument {
  name: string;
  document: string;
  description?: string;
}

/** The integration's `catalog` settings this connector reads. */
export interface GraphqlCatalogSettings {
  documents?: SavedDocument[];
  root_fields?: boolean;
}

/**
 * The problems of an integration's `catalog.documents` (none when it is absent): an array of at most
 * `maxCatalogDocuments` `{name, document, description?}`, names unique, each document one query or mutation (fragments
 * beside it allowed) within execute's bounds, and, when the upstream's schema is known, valid against it.
 *
 * @example catalogDocumentIssues([{ name: 'users', document: '{ users { id } }' }], schema) // []
 */
export function catalogDocumentIssues(documents: unknown, schema: GraphQLSchema | undefined): ValidationIssue[] {
  const at = 'catalog.documents';
  if (documents === undefined) return [];
  if (!Array.isArray(documents)) {
    return [{ path: at, message: 'must be an array of saved documents ({name, document, description?}).' }];
  }
  if (documents.length > maxCatalogDocuments) {
    return [{ path: at, message: `has ${documents.length} documents; at most ${maxCatalogDocuments} can be saved.` }];
  }
  const issues: ValidationIssue[] = [];
  const names = new Set<string>();
  documents.forEach((saved: unknown, index) => {
    const path = `${at}[${index}]`;
    if (!isJsonObject(saved)) {
      issues.push({ path, message: 'must be an object {name, document, description?}.' });
      return;
    }
    for (const key of Object.keys(saved)) {
      if (!savedDocumentKeys.has(key)) {
        issues.push({ path: `${path}.${key}`, message: 'is not a field of a saved document (name, document, description).' });
      }
    }
    const name = nameIssue(saved.name, names);
    if (name !== undefined) issues.push({ path: `${path}.name`, message: name });
    if (typeof saved.name === 'string') names.add(saved.name);
    for (const message of documentIssues(saved.document, schema)) issues.push({ path: `${path}.document`, message });
    const { description } = saved;
    if (description !== undefined && (typeof description !== 'string' || description.length > maxDescriptionLength)) {
      issues.push({ path: `${path}.description`, message: `must be a string of at most ${maxDescriptionLength} characters.` });
    }
  });
  return issues;
}

function nameIssue(name: unknown, earlier: ReadonlySet<string>): string | undefined {
  if (typeof name !== 'string' || name.length === 0 || name.length > maxDocumentNameLength || !namePattern.test(name)) {
    return `must be 1 to ${maxDocumentNameLength} characters of A-Z, a-z, 0-9, "_", "." and "-".`;
  }
  return earlier.has(name) ? `"${name}" names an earlier document too; names must be unique.` : undefined;
}

/** Why a saved document cannot be offered: its own rules, then the upstream's schema (at most 10 of its errors). */
function documentIssues(document: unknown, schema: GraphQLSchema | undefined): string[] {
  if (typeof document !== 'string') return ['must be a string holding a GraphQL query or mutation.'];
  let parsed: ParsedOperation;
  try {
    parsed = parseSavedDocument(document);
  } catch (error) {
    if (!(error instanceof ApiError) || error.code !== 'validation_failed') throw error;
    return ((error.details?.issues ?? []) as ValidationIssue[]).map(({ path, message }) =>
      path === 'operation_name'
        ? 'holds several operations; a saved document holds one (fragments beside it are fine).'
        : message,
    );
  }
  return schema === undefined ? [] : schemaErrors(schema, parsed.document);
}

function schemaErrors(schema: GraphQLSchema, document: DocumentNode): string[] {
  const { validate, GraphQLError } = graphql();
  let errors: ReturnType<typeof validate>;
  try {
    errors = validate(schema, document, undefined, { maxErrors: 10 });
  } catch (error) {
    // graphql-js refuses to validate against a schema that is itself invalid: the upstream's fault, not the document's.
    if (error instanceof GraphQLError || !(error instanceof Error)) throw error;
    return [];
  }
  return errors.map((error) => {
    const where = error.locations?.[0];
    const at = where === undefined ? '' : ` (line ${where.line}, column ${where.column})`;
    return `does not fit the upstream's schema: ${error.message}${at}`;
  });
}

/**
 * A saved document's one operation, a query or a mutation: parsed by execute's rules (document.ts), as the field
 * its kind goes in. The likelier field is tried first, so that a document is usually parsed once.
 *
 * @throws ApiError `validation_failed`: the first attempt's issues.
 */
function parseSavedDocument(document: string): ParsedOperation {
  const fields: DocumentField[] = /\bmutation\b/.test(document) ? ['mutation', 'query'] : ['query', 'mutation'];
  try {
    return parseOperation({ document, field: fields[0] });
  } catch (first) {
    try {
      return parseOperation({ document, field: fields[1] });
    } catch {
      throw first;
    }
  }
}

/**
 * The catalogue of a GraphQL integration: an entry per saved document (in their order), then, with `root_fields` and
 * a schema, an entry per root field whose name no document took. Without the upstream's schema, an entry's variables
 * are typed from their declarations (built-in scalars; other named types unconstrained) and its answer is the
 * envelope only. A saved document that no longer parses is left out; one that no longer fits the schema is described
 * as far as it does (what the schema lacks is unconstrained). Entries share parts of their schemas (an input
 * object's definition, a scalar's): read them, never change them.
 *
 * @example graphqlCatalog(schema, { documents: [{ name: 'users', document: '{ users { id } }' }], root_fields: true })
 */
export function graphqlCatalog(schema: GraphQLSchema | undefined, catalog: GraphqlCatalogSettings): CatalogOperation[] {
  const entries: CatalogOperation[] = [];
  const names = new Set<string>();
  const definitions = new InputDefinitions();
  for (const saved of catalog.documents ?? []) {
    // Stored before a rule it breaks, a document is left out rather than failing the whole catalogue.
    if (typeof saved.name !== 'string' || names.has(saved.name)) continue;
    const entry = documentEntry(schema, definitions, saved);
    if (entry === undefined) continue;
    names.add(saved.name);
    entries.push(entry);
  }
  if (catalog.root_fields === true && schema !== undefined) entries.push(...rootFieldEntries(schema, definitions, names));
  return entries;
}

function documentEntry(
  schema: GraphQLSchema | undefined,
  definitions: InputDefinitions,
  saved: SavedDocument,
): CatalogOperation | undefined {
  let parsed: ParsedOperation;
  try {
    parsed = parseSavedDocument(saved.document);
  } catch {
    return undefined;
  }
  const { kind, operation, operationName } = parsed;
  const inputs = new InputSchemas(schema, definitions);
  const slots = (operation.variableDefinitions ?? []).map((definition) =>
    inputs.variable(definition.variable.name.value, definition.type, definition.defaultValue !== undefined),
  );
  const shape = schema === undefined ? undefined : operationShape(schema, parsed.document, operation, new SchemaBudget());
  const rootKeys = shape?.kind === 'object' ? shape.variants[0].fields.size : undefined;
  const { document } = saved;
  return {
    name: saved.name,
    kind: kind === 'query' ? 'read' : 'write',
    description: cleanDescription(saved.description) || generatedDescription(parsed),
    input_schema: inputs.object(slots),
    output_schema:
      kind === 'query'
        ? receiveAnswerSchema(shape && rootRecordSchemas(shape))
        : sendAnswerSchema(shape && shapeSchema(shape), rootKeys),
    request: (input) => ({
      [kind]: document,
      ...(operationName !== undefined && { operation_name: operationName }),
      variables: input,
    }),
  };
}

/** What a saved document without a description does, in one line: its kind, its name, the root fields it selects. */
function generatedDescription(parsed: ParsedOperation): string {
  const fields = rootFieldNames(parsed.document, parsed.operation);
  const shown = fields.length > 10 ? `${fields.slice(0, 10).join(', ')} and ${fields.length - 10} more` : fields.join(', ');
  const name = parsed.operationName === undefined ? '' : ` ${parsed.operationName}`;
  const kind = parsed.kind === 'query' ? 'Query' : 'Mutation';
  return fields.length === 0 ? `${kind}${name}.` : `${kind}${name}: ${parsed.kind === 'query' ? 'reads' : 'runs'} ${shown}.`;
}

/** The root fields an operation selects, through its fragments (each followed once), in order, once each. */
function rootFieldNames(document: DocumentNode, operation: OperationDefinitionNode): string[] {
  const { Kind } = graphql();
  const names = new Set<string>();
  const followed = new Set<string>();
  const pending = [operation.selectionSet];
  for (let set = pending.shift(); set !== undefined; set = pending.shift()) {
    for (const selection of set.selections) {
      if (selection.kind === Kind.FIELD) {
        if (selection.name.value !== '__typename') names.add(selection.name.value);
      } else if (selection.kind === Kind.INLINE_FRAGMENT) pending.push(selection.selectionSet);
      else if (!followed.has(selection.name.value)) {
        followed.add(selection.name.value);
        const fragment = document.definitions.find(
          (definition) => definition.kind === Kind.FRAGMENT_DEFINITION && definition.name.value === selection.name.value,
        );
        if (fragment?.kind === Kind.FRAGMENT_DEFINITION) pending.push(fragment.selectionSet);
      }
    }
  }
  return [...names];
}
