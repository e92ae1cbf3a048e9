import { ApiError, listedIssues, validationFailed } from '../../core/errors.ts';
import { paramIssues } from './param-checks.ts';
import type { CallFields } from './schemas.ts';
import { operationLayout, signatureOf } from './signature.ts';
import type { BoundOperation } from './wsdl-documents.ts';
import type { PortInfo, WsdlModel } from './wsdl-model.ts';

/**
 * The operation a call runs, checked against the WSDL before anything is sent (docs/execute.md#wsdl-mode):
 * - the method must be an operation of the port (`unknown_soap_method`, listing the port's operations);
 * - of overloads (operations sharing the name), `input` chooses by the signature's `input` (one no overload has:
 *   `validation_failed` on `input`); without it, the one whose input the params fit is run, and several fitting is
 *   `ambiguous_soap_method` with their signatures in `details.overloads`;
 * - the params must fit the input at every depth (`invalid_soap_params`: unknown names, missing required ones, a list
 *   where one value fits, values that do not fit their type or enumeration), each problem with its full path;
 *   `details.expected` is the operation's parameters as `test` shows them. When no overload fits, the problems are
 *   those of the overload that comes closest (fewest problems), and `details.overloads` lists them all.
 */
export function resolveWsdlCall(model: WsdlModel, service: string, port: PortInfo, fields: CallFields): BoundOperation {
  const named = port.operations.filter((operation) => operation.name === fields.method);
  if (named.length === 0) {
    throw new ApiError('unknown_soap_method', `${fields.method} is not an operation of ${service}/${port.name}.`, {
      method: fields.method,
      available_methods: port.names,
    });
  }
  const inputName = (operation: BoundOperation) => operationLayout(model.schema, operation).input.name;
  const candidates = fields.input === undefined ? named : named.filter((operation) => inputName(operation) === fields.input);
  if (candidates.length === 0) {
    throw validationFailed([
      { path: 'input', message: `is not an input of ${fields.method}; inputs: ${named.map(inputName).join(', ')}` },
    ]);
  }
  const checked = candidates.map((operation) => ({
    operation,
    issues: paramIssues(operationLayout(model.schema, operation).input.model, fields.params ?? {}, 'params', fields.method),
  }));
  const fitting = checked.filter((c) => c.issues.length === 0);
  if (fitting.length === 1) {
    checkHeaders(model, fitting[0].operation, fields);
    return fitting[0].operation;
  }
  if (fitting.length > 1) {
    throw new ApiError(
      'ambiguous_soap_method',
      `${fitting.length} overloads of ${fields.method} fit the params (inputs ${fitting.map((c) => inputName(c.operation)).join(', ')}); choose one with \`input\`.`,
      { method: fields.method, overloads: fitting.map((c) => signatureOf(model.schema, c.operation)) },
    );
  }
  const closest = checked.reduce((best, c) => (c.issues.length < best.issues.length ? c : best));
  const { issues } = closest;
  throw new ApiError(
    'invalid_soap_params',
    `The params do not fit ${fields.method}${candidates.length > 1 ? ` (no overload fits; the closest is input ${inputName(closest.operation)})` : ''}: ${issues
      .slice(0, 3)
      .map((i) => `${i.path} ${i.message}`)
      .join('; ')}${issues.length > 3 ? `; and ${issues.length - 3} more` : ''}.`,
    {
      ...listedIssues(issues),
      expected: signatureOf(model.schema, closest.operation).parameters,
      ...(candidates.length > 1 && { overloads: candidates.map((operation) => signatureOf(model.schema, operation)) }),
    },
  );
}

/** The headers the binding declares, when `soap_headers` has them, checked as params are (others are the caller's). */
function checkHeaders(model: WsdlModel, operation: BoundOperation, fields: CallFields): void {
  if (fields.soap_headers === undefined) return;
  const issues = paramIssues(
    operationLayout(model.schema, operation).input.headers,
    fields.soap_headers,
    'soap_headers',
    'the headers',
  );
  if (issues.length > 0) {
    throw new ApiError(
      'invalid_soap_params',
      `The soap_headers do not fit the headers ${operation.name} declares: ${issues[0].path} ${issues[0].message}.`,
      {
        ...listedIssues(issues),
        expected: signatureOf(model.schema, operation).headers ?? [],
      },
    );
  }
}
