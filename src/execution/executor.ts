import type { Connection, ConnectorDefinition, ConnectorResult, Operation, PrimitiveOperation } from '../connectors/connector.ts';
import { ApiError, type ValidationIssue, validationFailed } from '../core/errors.ts';
import type { ExecuteBudget } from '../transport/budget.ts';
import { batchSchema, fieldIssues, issuesOf, syncSchema, testSchema } from './request-checks.ts';

type Fields = Record<string, unknown>;

interface BatchEntry {
  operation: PrimitiveOperation;
  fields: Fields;
  /** Where the entry's fields sit in the request, for issue paths: `operations.2.` or `operations.2.data.`. */
  prefix: string;
}

interface EntryOutcome {
  index: number;
  operation: PrimitiveOperation;
  success: boolean;
  data?: Record<string, unknown>;
  error?: { code: string; message: string; details?: Record<string, unknown> };
  errors?: unknown[];
}

/** An empty object, null or absent sync part is skipped. */
function present(part: unknown): part is Fields {
  return typeof part === 'object' && part !== null && Object.keys(part).length > 0;
}

/** A sync's parts that are present, in the order they run. */
function syncParts(fields: Fields): { part: 'outbound' | 'inbound'; operation: PrimitiveOperation; fields: Fields }[] {
  const parts = [
    { part: 'outbound', operation: 'send', fields: fields.outbound },
    { part: 'inbound', operation: 'receive', fields: fields.inbound },
  ] as const;
  return parts.filter((p): p is (typeof parts)[number] & { fields: Fields } => present(p.fields));
}

function batchEntries(fields: Fields): BatchEntry[] {
  return (fields.operations as Fields[]).map((entry, index) => {
    const { operation, type, data, ...inline } = entry;
    return {
      operation: (operation ?? type ?? 'receive') as PrimitiveOperation,
      fields: (data as Fields | undefined) ?? inline,
      prefix: data === undefined ? `operations.${index}.` : `operations.${index}.data.`,
    };
  });
}

/**
 * A failure that lists issues (validation_failed, invalid_soap_params) found for one part of a
 * composed request, with its issue paths under the part's place in the request, as the checks made
 * before anything ran have them.
 */
function underPrefix(error: unknown, prefix: string): unknown {
  if (!(error instanceof ApiError) || !Array.isArray(error.details?.issues)) return error;
  const issues = (error.details.issues as ValidationIssue[]).map((issue) => ({ ...issue, path: prefix + issue.path }));
  if (error.code === 'validation_failed') return validationFailed(issues);
  return error.withDetails({ issues });
}

/**
 * Checks an execute request before its integration is bound: the operation is offered, and its fields fit the
 * schemas. What the connector finds wrong with a send or receive comes next, from the bound connection (`prepare`,
 * called by `runExecute` and `checkWithConnection`). A sync whose every part breaks its schema is refused here; one
 * with a part that fits is refused with the connection, so that every problem of both parts is answered at once. A
 * batch's entries are each their own result, checked when they run.
 */
export function checkExecuteRequest(definition: ConnectorDefinition, operation: Operation, fields: Fields): void {
  if (!definition.offers.includes(operation)) {
    throw new ApiError('unsupported_operation', `The ${definition.id} connector does not offer ${operation}.`, {
      operation,
      supported_operations: definition.offers,
    });
  }
  switch (operation) {
    case 'send':
    case 'receive': {
      const issues = fieldIssues(definition, operation, fields);
      if (issues.length > 0) throw validationFailed(issues);
      return;
    }
    case 'test': {
      const issues = issuesOf('test', testSchema, fields);
      if (issues.length > 0) throw validationFailed(issues);
      return;
    }
    case 'sync': {
      const issues = issuesOf('sync', syncSchema, fields);
      if (issues.length === 0 && !present(fields.outbound) && !present(fields.inbound)) {
        issues.push({ path: 'outbound', message: 'sync needs an outbound or an inbound part (both are empty or absent)' });
      }
      if (issues.length > 0) throw validationFailed(issues);
      const partIssues = syncParts(fields).map((p) => fieldIssues(definition, p.operation, p.fields, `${p.part}.`));
      if (partIssues.every((found) => found.length > 0)) throw validationFailed(partIssues.flat());
      return;
    }
    case 'batch': {
      const issues = issuesOf('batch', batchSchema, fields);
      if (issues.length > 0) throw validationFailed(issues);
      return;
    }
  }
}

function throwIssues(issues: ValidationIssue[] | undefined): void {
  if (issues && issues.length > 0) throw validationFailed(issues);
}

/**
 * What the connection finds wrong with a send or receive before it is sent (`Connection.prepare`), thrown; a promise
 * only when the connection answers with one, so that a request with nothing to load goes on in the same turn.
 */
function prepare(connection: Connection, operation: PrimitiveOperation, fields: Fields): Promise<void> | undefined {
  const issues = connection.prepare?.(operation, fields);
  if (issues instanceof Promise) return issues.then(throwIssues);
  throwIssues(issues);
  return undefined;
}

/** A failure of one part of a sync, as the answer gives it: paths under the part, its stage, and the outbound's data. */
function partFailure(error: unknown, part: 'outbound' | 'inbound', outbound: ConnectorResult | null): unknown {
  return withStage(underPrefix(error, `${part}.`), {
    stage: part,
    ...(part === 'inbound' && { outbound: outbound?.data ?? null }),
  });
}

/**
 * Both parts of a sync, prepared before either runs: a bad inbound part must not leave an outbound part sent. The
 * problems of the parts' fields (their schema's, and those `prepare` resolves with) are answered first, every one of
 * both parts in one validation_failed; then what stops the outbound part, then the inbound part, each with its stage.
 *
 * The parts are prepared at once: each finds its own fields' problems without loading anything, and whatever both
 * need loaded (a WSDL) is loaded once for both, failure included.
 */
async function prepareSync(definition: ConnectorDefinition, connection: Connection, fields: Fields): Promise<void> {
  const parts = syncParts(fields);
  const settled = await Promise.allSettled(
    parts.map(async ({ part, operation, fields: partFields }) => {
      const schemaIssues = fieldIssues(definition, operation, partFields, `${part}.`);
      if (schemaIssues.length > 0) return schemaIssues;
      const issues = (await connection.prepare?.(operation, partFields)) ?? [];
      return issues.map((issue) => ({ ...issue, path: `${part}.${issue.path}` }));
    }),
  );
  const issues = settled.flatMap((outcome) => (outcome.status === 'fulfilled' ? outcome.value : []));
  if (issues.length > 0) throw validationFailed(issues);
  for (const [index, outcome] of settled.entries()) {
    if (outcome.status === 'rejected') throw partFailure(outcome.reason, parts[index].part, null);
  }
}

/**
 * What the connector finds wrong with each send and receive of the request (a GraphQL document's syntax, a SOAP
 * method and its params against the WSDL), before anything is sent: what an async call is checked with before it is
 * accepted, after `checkExecuteRequest`. A batch's entries are each their own result, checked when they run.
 */
export async function checkWithConnection(
  definition: ConnectorDefinition,
  connection: Connection,
  operation: Operation,
  fields: Fields,
): Promise<void> {
  if (operation === 'send' || operation === 'receive') return prepare(connection, operation, fields);
  if (operation === 'sync') await prepareSync(definition, connection, fields);
}

/**
 * Whether running the request again can change nothing upstream that its first run did not: reads only (`receive`,
 * `test`, a batch of receives, a sync without an outbound part). A run cut short by its process dying is run again
 * only then (docs/async.md#exactly-once).
 */
export function mayRunTwice(operation: Operation, fields: Fields): boolean {
  switch (operation) {
    case 'receive':
    case 'test':
      return true;
    case 'send':
      return false;
    case 'sync':
      return !present(fields.outbound);
    case 'batch':
      return batchEntries(fields).every((entry) => entry.operation === 'receive');
  }
}

/**
 * Runs a send or receive, prepared first unless the caller has prepared it (a sync's parts); never throws, it rejects.
 * Its upstream requests are retried by the transport, each on its own (docs/resilience.md). Not an async function: a
 * receive's promise is the connection's own, with no frame of this one waiting on it.
 */
function runPrimitive(
  connection: Connection,
  operation: PrimitiveOperation,
  fields: Fields,
  budget: ExecuteBudget,
  { prepared = false } = {},
): Promise<ConnectorResult> {
  if (operation !== 'receive') return runSend(connection, fields, budget, prepared);
  // What the receive throws before its promise exists (a field problem, a URL its credentials cannot go to) is its
  // rejection, so that a batch entry's `.catch` sees it.
  try {
    const preparing = prepared ? undefined : prepare(connection, operation, fields);
    return preparing ? preparing.then(() => connection.receive(fields)) : connection.receive(fields);
  } catch (error) {
    return Promise.reject(error);
  }
}

async function runSend(
  connection: Connection,
  fields: Fields,
  budget: ExecuteBudget,
  prepared: boolean,
): Promise<ConnectorResult> {
  if (!prepared) await prepare(connection, 'send', fields);
  const postsBefore = budget.stats.posts;
  try {
    return await connection.send(fields);
  } finally {
    if (budget.stats.posts > postsBefore) budget.stats.wroteUpstream = true;
  }
}

function withStage(error: unknown, details: Record<string, unknown>): unknown {
  if (!(error instanceof ApiError)) return error;
  return error.withDetails(details);
}

async function runSync(
  definition: ConnectorDefinition,
  connection: Connection,
  fields: Fields,
  budget: ExecuteBudget,
): Promise<ConnectorResult> {
  await prepareSync(definition, connection, fields);
  let outbound: ConnectorResult | null = null;
  if (present(fields.outbound)) {
    try {
      outbound = await runPrimitive(connection, 'send', fields.outbound, budget, { prepared: true });
    } catch (error) {
      throw partFailure(error, 'outbound', null);
    }
  }
  let inbound: ConnectorResult | null = null;
  if (present(fields.inbound)) {
    try {
      inbound = await runPrimitive(connection, 'receive', fields.inbound, budget, { prepared: true });
    } catch (error) {
      throw partFailure(error, 'inbound', outbound);
    }
  }
  const errors = [...(outbound?.errors ?? []), ...(inbound?.errors ?? [])];
  const messageCount = (outbound?.messageCount ?? 0) + (inbound?.messageCount ?? 0);
  return {
    data: { message_count: messageCount, outbound: outbound?.data ?? null, inbound: inbound?.data ?? null },
    messageCount,
    errors: errors.length > 0 ? errors : undefined,
  };
}

async function runBatch(
  definition: ConnectorDefinition,
  connection: Connection,
  fields: Fields,
  budget: ExecuteBudget,
): Promise<ConnectorResult> {
  const results: EntryOutcome[] = [];
  // Each succeeded entry's own count, as its connector reported it (never read back from its data, which is upstream's).
  let messageCount = 0;
  let failedOnce = false;
  for (const [index, entry] of batchEntries(fields).entries()) {
    if (failedOnce && fields.stop_on_error === true) {
      results.push({
        index,
        operation: entry.operation,
        success: false,
        error: { code: 'skipped', message: 'Skipped: an earlier entry failed and stop_on_error is set.' },
      });
      continue;
    }
    try {
      const issues = fieldIssues(definition, entry.operation, entry.fields, entry.prefix);
      if (issues.length > 0) throw validationFailed(issues);
      // Prepared when it runs, not before: an entry's problem is that entry's result.
      const result = await runPrimitive(connection, entry.operation, entry.fields, budget).catch((error: unknown) => {
        throw underPrefix(error, entry.prefix);
      });
      messageCount += result.messageCount;
      results.push({
        index,
        operation: entry.operation,
        success: true,
        data: result.data,
        ...(result.errors && { errors: result.errors }),
      });
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
      failedOnce = true;
      results.push({
        index,
        operation: entry.operation,
        success: false,
        error: { code: error.code, message: error.message, ...(error.details && { details: error.details }) },
        ...(error.upstreamErrors && { errors: error.upstreamErrors }),
      });
    }
  }
  const succeeded = results.filter((r) => r.success);
  const skipped = results.filter((r) => r.error?.code === 'skipped').length;
  return {
    data: {
      message_count: messageCount,
      succeeded: succeeded.length,
      failed: results.length - succeeded.length - skipped,
      skipped,
      results,
    },
    messageCount,
  };
}

/**
 * Runs a checked execute request. send, receive and test go to the connector; sync and batch are
 * composed here, once, for every connector.
 */
export function runExecute(
  definition: ConnectorDefinition,
  connection: Connection,
  operation: Operation,
  fields: Fields,
  budget: ExecuteBudget,
): Promise<ConnectorResult> {
  switch (operation) {
    case 'send':
    case 'receive':
      return runPrimitive(connection, operation, fields, budget);
    case 'test':
      return connection.test();
    case 'sync':
      return runSync(definition, connection, fields, budget);
    case 'batch':
      return runBatch(definition, connection, fields, budget);
  }
}
