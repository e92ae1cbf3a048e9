import type { ValidationIssue } from '../../core/errors.ts';
import { typeKey } from './derived-types.ts';
import { envelopeIssues, soapActionProblem, valueKeys } from './envelope.ts';
import type { CallFields } from './schemas.ts';

/**
 * A request's soap_action that no HTTP header can carry, in either mode; without one, a request namespace that would
 * make raw mode's action unsendable (unless the envelope's checks already refused it). Checked with the request's own
 * problems, so a sync's inbound part is refused before its outbound part is sent.
 */
function actionIssues(fields: CallFields, envelopeIssues: ValidationIssue[]): ValidationIssue[] {
  const [path, value] = fields.soap_action === undefined ? ['namespace', fields.namespace] : ['soap_action', fields.soap_action];
  const problem = value === undefined ? undefined : soapActionProblem(value);
  if (problem === undefined || envelopeIssues.some((issue) => issue.path === path)) return [];
  const message = path === 'namespace' ? `${problem}, and raw mode sends it in the SOAP action` : problem;
  return [{ path, message }];
}

/** In WSDL mode a params object's `$type` names its derived type (derived-types.ts): no element either. */
const wsdlValueKeys: ReadonlySet<string> = new Set([...valueKeys, typeKey]);

/**
 * What is wrong with a call's fields whatever the integration: element and attribute names of params and
 * soap_headers XML cannot carry, and an action no header can. Found before anything runs, in either mode: a sync's bad
 * inbound part must be refused before its outbound part is sent (raw mode's buildEnvelope would only refuse it then).
 */
export function requestIssues(fields: CallFields, wsdlMode: boolean): ValidationIssue[] {
  const issues = envelopeIssues({
    ...(wsdlMode && { valueKeys: wsdlValueKeys }),
    version: '1.1',
    namespace: fields.namespace,
    method: fields.method,
    params: fields.params,
    soapHeaders: fields.soap_headers,
  });
  return [...issues, ...actionIssues(fields, issues)];
}
