/**
 * The connectors' plain configuration fields (src/connectors/*\/schemas.ts `configProperties`), as the forms show them.
 * Credentials (`auth` and the older `token`, `auth_header`/`auth_value`), `tls` and `ws_security` have sections of
 * their own (lib/auth-form.js, lib/tls-form.js, lib/ws-security-form.js).
 */
export const connectors = {
  'graphql-1.0.0': {
    label: 'GraphQL',
    target: 'base_url',
    fields: [
      {
        name: 'base_url',
        label: 'Base URL',
        type: 'url',
        required: true,
        hint: '/graphql is appended unless the path already contains it.',
        placeholder: 'https://api.example.com',
      },
      { name: 'timeout_seconds', label: 'Timeout (seconds)', type: 'number', min: 1, max: 300, placeholder: '30' },
    ],
  },
  'soap-1.0.0': {
    label: 'SOAP',
    target: 'endpoint_url',
    fields: [
      {
        name: 'endpoint_url',
        label: 'Endpoint URL',
        type: 'url',
        required: true,
        hint: 'With ?wsdl (or a .wsdl path) methods are read from the WSDL; otherwise calls are sent as given.',
        placeholder: 'https://soap.example.com/Service.svc?wsdl',
      },
      { name: 'service_url', label: 'Service URL', type: 'url', hint: 'Overrides the WSDL’s soap:address (optional).' },
      { name: 'soap_version', label: 'SOAP version', options: ['1.1', '1.2'], hint: 'Without a WSDL; 1.1 by default.' },
      { name: 'namespace', label: 'Namespace', hint: 'Without a WSDL: the target namespace of the method element.' },
      { name: 'timeout_seconds', label: 'Timeout (seconds)', type: 'number', min: 1, max: 300, placeholder: '60' },
    ],
  },
};

export function connectorLabel(id) {
  return connectors[id]?.label ?? id;
}

const graphqlQuery = '{ __typename }';

/** A starting body for the try-it-out editor: the fields of `operation` (without `operation` itself). */
export function exampleBody(connector, operation) {
  const soap = connector === 'soap-1.0.0';
  switch (operation) {
    case 'test':
      return {};
    case 'send':
      return soap ? { method: 'MethodName', params: {} } : { mutation: 'mutation { }', variables: {} };
    case 'receive':
      return soap ? { method: 'MethodName', params: {} } : { query: graphqlQuery, variables: {} };
    case 'sync':
      return soap
        ? { outbound: { method: 'Send', params: {} }, inbound: { method: 'Receive', params: {} } }
        : { inbound: { query: graphqlQuery } };
    case 'batch':
      return soap
        ? { operations: [{ operation: 'receive', data: { method: 'MethodName', params: {} } }] }
        : { operations: [{ operation: 'receive', data: { query: graphqlQuery } }] };
    default:
      return {};
  }
}

export const operations = ['receive', 'send', 'sync', 'batch', 'test'];

/** The body field holding a GraphQL document (`receive` → `query`, `send` → `mutation`), or undefined. */
export function documentField(connector, operation) {
  if (connector !== 'graphql-1.0.0') return undefined;
  return { receive: 'query', send: 'mutation' }[operation];
}
