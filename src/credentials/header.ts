import { type CredentialScheme, headerValue } from './scheme.ts';

/**
 * Headers a credential may not take the name of: those the transport writes itself (framing, content negotiation,
 * SOAP's action) or that change how the connection is used. A credential there would corrupt the request.
 */
export const transportHeaders: ReadonlySet<string> = new Set([
  'host',
  'content-length',
  'transfer-encoding',
  'connection',
  'keep-alive',
  'upgrade',
  'proxy-authorization',
  'proxy-connection',
  'te',
  'trailer',
  'expect',
  'accept',
  'accept-encoding',
  'content-type',
  'content-encoding',
  'soapaction',
  'traceparent',
  'tracestate',
]);

/** Any one header: `<name>: <value>` (an API key header, a vendor's own scheme). */
export const headerScheme: CredentialScheme = {
  type: 'header',
  properties: {
    // An HTTP field name (RFC 9110 token).
    name: { type: 'string', minLength: 1, maxLength: 256, pattern: "^[!#$%&'*+.^_`|~0-9A-Za-z-]+$" },
    value: headerValue,
  },
  required: ['name', 'value'],
  secretFields: ['value'],
  problems: (auth) =>
    typeof auth.name === 'string' && transportHeaders.has(auth.name.toLowerCase())
      ? [{ path: 'config.auth.name', message: `${auth.name} is written by the transport itself; choose another header` }]
      : [],
  headers: (auth) => ({ [String(auth.name).toLowerCase()]: String(auth.value) }),
};
