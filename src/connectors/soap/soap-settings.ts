import { ApiError } from '../../core/errors.ts';
import type { TlsConfig } from '../../egress/tls.ts';
import type { ResolvedIntegration } from '../../integrations/resolved-integration.ts';
import { redactUrl } from '../../transport/upstream.ts';
import type { ConnectorContext } from '../connector.ts';
import type { SoapHttpOptions } from './soap-http.ts';

/** What a SOAP integration's config says for its calls (connector.ts), and the credentials they carry. */

/** An integration's SOAP settings, read from its config when a call connects. */
export interface SoapSettings {
  endpointUrl: string;
  serviceUrl: string | undefined;
  namespace: string | undefined;
  version: '1.1' | '1.2';
  /** Whether the integration has an auth header to send. */
  hasCredentials: boolean;
  http: SoapHttpOptions;
}

/**
 * Headers the transport or the SOAP protocol sets itself: an auth header under one of these names would break the
 * message framing (undici refuses some of them with an error that is no upstream failure: a 500) or the SOAP
 * request, so such a configuration cannot run.
 */
const reservedHeaders = new Set([
  'host',
  'content-length',
  'transfer-encoding',
  'connection',
  'keep-alive',
  'proxy-connection',
  'upgrade',
  'te',
  'trailer',
  'expect',
  'accept-encoding',
  'content-type',
  'soapaction',
]);

export function settingsOf(integration: ResolvedIntegration, context: ConnectorContext): SoapSettings {
  const c = integration.config;
  if (typeof c.endpoint_url !== 'string' || c.endpoint_url === '') {
    throw new ApiError('integration_misconfigured', 'The integration has no endpoint_url; set config.endpoint_url to run it.', {
      missing: ['config.endpoint_url'],
    });
  }
  // `auth_header`/`auth_value` are the shorthand of `auth: {type: "header"}` (shorthandAuth); the transport's own
  // header names are refused for `auth` when it is written, and for the shorthand here.
  if (!c.auth && typeof c.auth_header === 'string' && typeof c.auth_value === 'string') {
    const name = c.auth_header.toLowerCase();
    if (reservedHeaders.has(name)) {
      throw new ApiError(
        'integration_misconfigured',
        `The auth_header ${c.auth_header} is set by the transport itself and cannot carry the credential; choose another header name.`,
        { field: 'config.auth_header' },
      );
    }
  }
  return {
    endpointUrl: c.endpoint_url,
    serviceUrl: typeof c.service_url === 'string' ? c.service_url : undefined,
    namespace: typeof c.namespace === 'string' ? c.namespace : undefined,
    version: c.soap_version === '1.2' ? '1.2' : '1.1',
    hasCredentials: context.credentials.any,
    http: {
      send: (request) => context.credentials.send(context.dispatcher, request),
      timeoutMs: integration.settings.timeoutMs,
      maxBodyBytes: context.upstreamMaxBytes,
      budget: context.budget,
    },
  };
}

/**
 * The credentials a call of the integration would carry, by the config field that holds them: `auth` and the
 * shorthands (a header), `ws_security` (a password or a signature in the envelope), a TLS client certificate (its
 * key proves the owner's identity in the handshake). Empty when it carries none.
 */
export function carriedCredentials(integration: ResolvedIntegration, headers: boolean): string[] {
  const config = integration.config;
  const tls = config.tls as TlsConfig | undefined;
  return [
    ...(headers ? ['auth'] : []),
    ...(config.ws_security !== undefined && config.ws_security !== null ? ['ws_security'] : []),
    ...(typeof tls?.client_key === 'string' ? ['tls.client_key'] : []),
  ];
}

/**
 * A WSDL-mode call whose address (the WSDL's `soap:address`, no `service_url` set) is on an origin the owner did not
 * name, while the integration carries credentials (any of them: an auth header, a WS-Security password or signature,
 * a TLS client certificate). The WSDL's host named that address, not the owner: sending the credential there would
 * let whoever writes the WSDL (or an import of it) collect it, and sending the call without it would fail at the
 * service in a way that hides why. So nothing is sent, and the owner is told how to allow it: `service_url` names the
 * address, and a credential goes where its owner sent it (docs/security.md#secrets-follow-their-origin).
 */
export function foreignAddress(portName: string, address: string, credentials: string[]): ApiError {
  const origin = URL.parse(address)?.origin ?? address;
  const what = credentials.map((field) => `config.${field}`).join(', ');
  return new ApiError(
    'integration_misconfigured',
    `The WSDL's port ${portName} has its address on ${origin}, an origin the integration does not name, so nothing is sent there: the call would carry ${what}. Set config.service_url to that address to send calls (and their credentials) to it.`,
    { field: 'config.service_url', address: redactUrl(address), origin, credentials: credentials.map((f) => `config.${f}`) },
  );
}
