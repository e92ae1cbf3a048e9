import { ApiError, listedIssues } from '../../errors.ts';
import { paramIssues } from './param-checks.ts';
import type { CallFields } from './schemas.ts';
import { inputModel, signatureOf } from './signature.ts';
import { bindingMethod, type PortInfo, type WsdlModel } from './wsdl-model.ts';

/**
 * A call checked against the WSDL before anything is sent: the method must be an operation of the port
 * (`unknown_soap_method`), and the params must fit its input at every depth (`invalid_soap_params`: unknown names,
 * missing required ones, a list where one value fits, values that do not fit their type or enumeration), each
 * problem with its full path; `details.expected` is the operation's parameters as `test` shows them.
 */
export function checkWsdlCall(model: WsdlModel, service: string, port: PortInfo, fields: CallFields): void {
  if (!port.operations.includes(fields.method)) {
    throw new ApiError('unknown_soap_method', `${fields.method} is not an operation of ${service}/${port.name}.`, {
      method: fields.method,
      available_methods: port.operations,
    });
  }
  const method = bindingMethod(model, service, port.name, fields.method);
  const issues = paramIssues(inputModel(model.schema, method), fields.params ?? {}, 'params', fields.method);
  if (issues.length > 0) {
    throw new ApiError(
      'invalid_soap_params',
      `The params do not fit ${fields.method}: ${issues
        .slice(0, 3)
        .map((i) => `${i.path} ${i.message}`)
        .join('; ')}${issues.length > 3 ? `; and ${issues.length - 3} more` : ''}.`,
      { ...listedIssues(issues), expected: signatureOf(model.schema, fields.method, method).parameters },
    );
  }
}
