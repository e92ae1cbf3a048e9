import { isIP } from 'node:net';
import { ApiError } from '../core/errors.ts';
import type { EgressPolicy } from '../egress/policy.ts';

function invalid(message: string): ApiError {
  return new ApiError('validation_failed', `url: ${message}`, { issues: [{ path: 'url', message }] });
}

/**
 * Checks a webhook URL when it is set: an absolute http(s) URL without user name or password (a receiver checks the
 * signature, not credentials in the URL, which would be shown wherever the URL is). A host that is an IP address the
 * webhook egress policy refuses is refused now (`egress_denied`); a host name is judged on every delivery, by the
 * addresses it resolves to then.
 */
export function checkWebhookUrl(text: string, policy: EgressPolicy): string {
  const url = URL.parse(text);
  if (url === null) throw invalid('must be an absolute URL');
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw invalid('must be an http or https URL');
  if (url.username !== '' || url.password !== '') throw invalid('must not carry a user name or password');
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  if (isIP(host) !== 0) {
    const decision = policy.check(host);
    if (!decision.allowed) {
      throw new ApiError('egress_denied', `Delivering to ${host} is refused by the egress policy: ${decision.reason}.`, {
        host,
        address: host,
      });
    }
  }
  return text;
}
