import { ApiError, listedIssues, type ValidationIssue } from '../../errors.ts';
import type { CallFields } from './schemas.ts';
import { inputParameters, type PortInfo, type WsdlModel } from './wsdl-model.ts';

/**
 * A call checked against the WSDL before anything is sent: the method must be an operation of the
 * port (`unknown_soap_method`), and the params must fit its input (`invalid_soap_params`: unknown
 * names, missing required ones, a list where one value fits).
 */
export function checkWsdlCall(model: WsdlModel, service: string, port: PortInfo, fields: CallFields): void {
  if (!port.operations.includes(fields.method)) {
    throw new ApiError('unknown_soap_method', `${fields.method} is not an operation of ${service}/${port.name}.`, {
      method: fields.method,
      available_methods: port.operations,
    });
  }
  const expected = inputParameters(model, service, port.name, fields.method);
  const params = fields.params ?? {};
  const issues: ValidationIssue[] = [];
  for (const [name, value] of Object.entries(params)) {
    const declared = expected.find((p) => p.name === name);
    if (!declared) issues.push({ path: `params.${name}`, message: `is not a parameter of ${fields.method}` });
    else if (Array.isArray(value) && !declared.repeated)
      issues.push({ path: `params.${name}`, message: 'takes one value, not a list' });
  }
  for (const p of expected) {
    if (p.required && !Object.hasOwn(params, p.name)) issues.push({ path: `params.${p.name}`, message: 'is required' });
  }
  if (issues.length > 0) {
    throw new ApiError(
      'invalid_soap_params',
      `The params do not fit ${fields.method}: ${issues
        .slice(0, 3)
        .map((i) => `${i.path} ${i.message}`)
        .join('; ')}${issues.length > 3 ? `; and ${issues.length - 3} more` : ''}.`,
      {
        ...listedIssues(issues),
        expected: expected.map((p) => ({ name: p.name, type: p.type, required: p.required, repeated: p.repeated })),
      },
    );
  }
}
