import { ApiError } from '../../../core/errors.ts';
import type { WsSecurityOptions } from './config.ts';
import type { SigningMaterial } from './keys.ts';
import { inspectWsSecurity } from './problems.ts';

/** What `test` reports under `details.ws_security`; throws `integration_misconfigured` when the options cannot be used. */
export function describeWsSecurity(options: WsSecurityOptions): {
  username_token: boolean;
  timestamp: boolean;
  signature: { subject: string; not_after: string } | null;
} {
  const material = usableMaterial(options);
  return {
    username_token: options.username_token !== undefined,
    timestamp: options.timestamp !== undefined,
    signature: material ? { subject: material.subject, not_after: material.certificate.validToDate.toISOString() } : null,
  };
}

// The signing material, when there is a signature, or `integration_misconfigured` with wsSecurityProblems' issues.
export function usableMaterial(options: WsSecurityOptions, now?: () => Date): SigningMaterial | undefined {
  const { problems, material } = inspectWsSecurity(options, { now });
  if (problems.length > 0) {
    throw new ApiError('integration_misconfigured', `ws_security: ${problems[0].message}`, { issues: problems });
  }
  return material;
}
