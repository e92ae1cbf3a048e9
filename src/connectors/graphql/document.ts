import { createRequire } from 'node:module';
import type { DocumentNode, OperationDefinitionNode } from 'graphql';
import { validationFailed } from '../../core/errors.ts';

/**
 * graphql-js, loaded on the first document: an instance that runs no GraphQL integration does not carry it (~15 MiB).
 * Its CommonJS build, required synchronously: documents are parsed in synchronous request checks.
 */
let graphqlModule: typeof import('graphql') | undefined;
export function graphql(): typeof import('graphql') {
  graphqlModule ??= createRequire(import.meta.url)('graphql') as typeof import('graphql');
  return graphqlModule;
}

/** The request field that holds a document: `receive` sends `query`, `send` sends `mutation`. */
export type DocumentField = 'query' | 'mutation';

export interface VariableDeclaration {
  name: string;
  /** The declared type as written, e.g. `String` or `[ID!]!`. */
  type: string;
  /** Declared non-null without a default: the request must give it. */
  required: boolean;
}

/** The operation a request will run, checked locally before anything goes out. */
export interface ParsedOperation {
  kind: 'query' | 'mutation';
  /** The selected operation's name (the requested one, or the only operation's own name); undefined when anonymous. */
  operationName: string | undefined;
  variableNames: string[];
  variables: VariableDeclaration[];
  document: DocumentNode;
  /** The selected operation's node: its variable definitions are what `variables` are coerced by. */
  operation: OperationDefinitionNode;
}

/**
 * Parses a GraphQL document and selects the operation to run (docs/execute.md#documents-are-checked-first: documents are parsed
 * locally first). Anonymous `{ … }` shorthand is a query.
 *
 * @example parseOperation({ document: 'query Q($after: String) { users(after: $after) { nodes { id } } }', field: 'query' })
 * @throws ApiError `validation_failed` with one issue on `query`, `mutation` or `operation_name`.
 */
export function parseOperation(input: { document: string; field: DocumentField; operationName?: string }): ParsedOperation {
  if (input.document.length > maxCachedLength) return parseUncached(input);
  const key = `${input.field}\u0000${input.operationName ?? ''}\u0000${input.document}`;
  let parsed = parsedOperations.get(key);
  if (!parsed) {
    parsed = parseUncached(input);
    if (parsedOperations.size >= maxCachedOperations) parsedOperations.delete(parsedOperations.keys().next().value as string);
    parsedOperations.set(key, parsed);
  }
  return parsed;
}

/**
 * Parsed operations by document text (and field and operation name): a workflow sends the same few documents again
 * and again. Documents over 64 KiB are parsed each time, so the cache holds at most ~32 MB of text. Entries are shared:
 * callers read them, never change them.
 */
const parsedOperations = new Map<string, ParsedOperation>();
const maxCachedOperations = 500;
const maxCachedLength = 65_536;

function parseUncached(input: { document: string; field: DocumentField; operationName?: string }): ParsedOperation {
  const { field } = input;
  const document = parseDocument(input.document, field);
  const operations: OperationDefinitionNode[] = [];
  const { Kind, print } = graphql();
  for (const definition of document.definitions) {
    if (definition.kind === Kind.OPERATION_DEFINITION) operations.push(definition);
    else if (definition.kind !== Kind.FRAGMENT_DEFINITION) {
      throw invalid(field, `holds a type system definition (${definition.kind}); only operations and fragments can be sent.`);
    }
  }
  checkOperationNames(operations, field);
  // An empty operationName is what many clients send for "none".
  const operation = selectOperation(operations, field, input.operationName || undefined);
  if (operation.operation === 'subscription') {
    throw invalid(field, 'holds a subscription; subscriptions are not supported.');
  }
  if (operation.operation !== field) {
    const kind = operation.operation;
    throw invalid(
      field,
      `holds a ${kind}; send it in the \`${kind}\` field (operation ${kind === 'query' ? 'receive' : 'send'}).`,
    );
  }
  const variables = (operation.variableDefinitions ?? []).map(
    (definition): VariableDeclaration => ({
      name: definition.variable.name.value,
      type: print(definition.type),
      required: definition.type.kind === Kind.NON_NULL_TYPE && definition.defaultValue === undefined,
    }),
  );
  return {
    kind: operation.operation,
    operationName: operation.name?.value,
    variableNames: variables.map((variable) => variable.name),
    variables,
    document,
    operation,
  };
}

/**
 * Whether the operation declares `$name` (pagination needs the cursor variable, `$after` by default).
 *
 * @example hasVariable(parseOperation({ document: 'query($after: String) { a }', field: 'query' }), 'after') // true
 */
export function hasVariable(operation: Pick<ParsedOperation, 'variableNames'>, name: string): boolean {
  return operation.variableNames.includes(name);
}

/** The largest document a call may send, in bytes of UTF-8 (docs/limits.md#fields). */
export const maxDocumentBytes = 256 * 1024;
/** The most tokens graphql-js reads of a document before it gives up (its `maxTokens`). */
export const maxDocumentTokens = 20_000;

/**
 * The document parsed, within bounds read before parsing: parsing and checking a document costs time in proportion to
 * it, all on the event loop, so a megabyte of query would hold every tenant's calls for seconds.
 */
function parseDocument(source: string, field: DocumentField): DocumentNode {
  if (source.trim() === '') throw invalid(field, 'is empty; send a GraphQL document.');
  const bytes = Buffer.byteLength(source);
  if (bytes > maxDocumentBytes) {
    throw invalid(field, `is ${bytes} bytes; a GraphQL document may be at most ${maxDocumentBytes} bytes (256 KiB).`);
  }
  try {
    return graphql().parse(source, { maxTokens: maxDocumentTokens });
  } catch (error) {
    // graphql-js 16 says "more that N tokens": matched by what stays put.
    if (error instanceof graphql().GraphQLError && /\d+ tokens\. Parsing aborted/.test(error.message)) {
      throw invalid(
        field,
        `has more than ${maxDocumentTokens} tokens; a GraphQL document may have at most ${maxDocumentTokens}.`,
      );
    }
    if (error instanceof graphql().GraphQLError) {
      const where = error.locations?.[0];
      const at = where === undefined ? '' : ` (line ${where.line}, column ${where.column})`;
      throw invalid(field, `is not valid GraphQL: ${error.message}${at}`);
    }
    // The parser recurses once per nesting level: a pathologically deep document overflows the stack.
    if (error instanceof RangeError) throw invalid(field, 'is nested too deeply to parse.');
    throw error;
  }
}

/** Operation names must be unique, and an anonymous operation must be alone (GraphQL spec §5.2). */
function checkOperationNames(operations: OperationDefinitionNode[], field: DocumentField): void {
  if (operations.length === 0) throw invalid(field, 'holds no operation; it needs a query or a mutation.');
  if (operations.length === 1) return;
  if (operations.some((operation) => operation.name === undefined)) {
    throw invalid(field, 'holds an anonymous operation beside others; an anonymous operation must be the only one.');
  }
  const seen = new Set<string>();
  for (const operation of operations) {
    const name = operation.name!.value;
    if (seen.has(name)) throw invalid(field, `holds several operations named "${name}"; operation names must be unique.`);
    seen.add(name);
  }
}

function selectOperation(
  operations: OperationDefinitionNode[],
  field: DocumentField,
  operationName: string | undefined,
): OperationDefinitionNode {
  const names = operations.map((operation) => operation.name?.value).filter((name) => name !== undefined);
  if (operationName !== undefined) {
    const operation = operations.find((candidate) => candidate.name?.value === operationName);
    if (operation === undefined) {
      const known = names.length === 0 ? 'it has only an anonymous operation' : `it has ${names.join(', ')}`;
      throw invalid('operation_name', `no operation named "${operationName}" in the ${field} document; ${known}.`);
    }
    return operation;
  }
  if (operations.length > 1) {
    throw invalid('operation_name', `is required when the ${field} document holds several operations (${names.join(', ')}).`);
  }
  return operations[0];
}

function invalid(path: string, message: string) {
  return validationFailed([{ path, message }]);
}
