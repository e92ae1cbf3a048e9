import { ApiError, type ValidationIssue } from '../../core/errors.ts';
import type { PrimitiveCall } from '../connector.ts';
import { type DocumentField, hasVariable, parseOperation } from './document.ts';
import { parseRecordsPath } from './records.ts';
import type { ReceiveFields, SendFields } from './schemas.ts';
import { checkAgainstSchema, type KnownSchema } from './upstream-schema.ts';

/** A call's checks before it is sent: its own request (connector.ts's `prepare`), then against the upstream's schema. */

/** The validation issues `check` throws (none when it returns); any other error goes on. */
function issuesFrom(check: () => void): ValidationIssue[] {
  try {
    check();
    return [];
  } catch (error) {
    if (error instanceof ApiError && error.code === 'validation_failed')
      return (error.details?.issues as ValidationIssue[]) ?? [];
    throw error;
  }
}

export function cursorVariableOf(fields: ReceiveFields): string {
  const fromPaginate = typeof fields.paginate === 'object' ? fields.paginate.cursor_variable : undefined;
  return fromPaginate ?? fields.cursor_variable ?? 'after';
}

/**
 * Everything about a request that can be known wrong before it is sent: a document's syntax and kind, its operation
 * name, the cursor variable pagination needs, and records_path. Nothing about the integration comes into it.
 */
export function requestIssues(...call: PrimitiveCall<SendFields, ReceiveFields>): ValidationIssue[] {
  if (call[0] === 'send') {
    const send = call[1];
    return issuesFrom(() => parseOperation({ document: send.mutation, field: 'mutation', operationName: send.operation_name }));
  }
  const receive = call[1];
  const issues = issuesFrom(() => {
    const parsed = parseOperation({ document: receive.query, field: 'query', operationName: receive.operation_name });
    const variable = cursorVariableOf(receive);
    if (receive.paginate && !hasVariable(parsed, variable)) {
      throw new ApiError('validation_failed', undefined, {
        issues: [{ path: 'query', message: `paginate needs the query to declare $${variable} (the Relay cursor variable)` }],
      });
    }
  });
  const recordsPath = receive.records_path;
  if (recordsPath !== undefined) issues.push(...issuesFrom(() => parseRecordsPath(recordsPath)));
  return issues;
}

/** The document (and variables) of a send or receive checked against a known schema; nothing when there is none. */
export function checkCall(known: KnownSchema, call: PrimitiveCall<SendFields, ReceiveFields>): void {
  if (!known.available) return;
  const [text, field, operationName, variables]: [
    string,
    DocumentField,
    string | undefined,
    Record<string, unknown> | undefined,
  ] =
    call[0] === 'send'
      ? [call[1].mutation, 'mutation', call[1].operation_name, call[1].variables]
      : [call[1].query, 'query', call[1].operation_name, call[1].variables];
  const parsed = parseOperation({ document: text, field, operationName });
  checkAgainstSchema(known.schema, text, parsed, variables);
}
