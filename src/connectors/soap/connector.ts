import { ApiError } from '../../errors.ts';
import { bodyExcerpt } from '../../transport/excerpt.ts';
import { redactUrl, sendUpstream } from '../../transport/upstream.ts';
import type { Connection, ConnectorContext, ConnectorDefinition, ConnectorResult, ResolvedIntegration } from '../connector.ts';
import { buildEnvelope, requestHeaders } from './envelope.ts';
import { isWsdlUrl, soapActionFor } from './mode.ts';
import { readSoapResponse } from './response.ts';
import { type CallFields, callSchema, configProperties } from './schemas.ts';
import { SoapHttp, type SoapHttpOptions } from './soap-http.ts';
import { checkWsdlCall } from './wsdl-checks.ts';
import { loadWsdlModel, prepareClient, selectPort, type WsdlModel } from './wsdl-model.ts';

interface SoapSettings {
  endpointUrl: string;
  serviceUrl: string | undefined;
  namespace: string | undefined;
  version: '1.1' | '1.2';
  http: SoapHttpOptions;
}

function settingsOf(integration: ResolvedIntegration, context: ConnectorContext): SoapSettings {
  const c = integration.config;
  if (typeof c.endpoint_url !== 'string' || c.endpoint_url === '') {
    throw new ApiError('integration_misconfigured', 'The integration has no endpoint_url; set config.endpoint_url to run it.', {
      missing: ['config.endpoint_url'],
    });
  }
  const headers: Record<string, string> = {};
  if (typeof c.auth_header === 'string' && typeof c.auth_value === 'string') headers[c.auth_header.toLowerCase()] = c.auth_value;
  return {
    endpointUrl: c.endpoint_url,
    serviceUrl: typeof c.service_url === 'string' ? c.service_url : undefined,
    namespace: typeof c.namespace === 'string' ? c.namespace : undefined,
    version: c.soap_version === '1.2' ? '1.2' : '1.1',
    http: {
      dispatcher: context.dispatcher,
      headers,
      timeoutMs: Number(c.timeout_seconds) * 1000,
      maxBodyBytes: context.upstreamMaxBytes,
    },
  };
}

/** A node-soap failure in the contract's terms, read from the raw answer node-soap was given. */
function wsdlCallFailure(error: unknown, http: SoapHttp): unknown {
  if (error instanceof ApiError || !http.last) return error;
  try {
    // A fault, an HTTP error or an unreadable answer, as raw mode would report it.
    readSoapResponse(http.last.status, http.last.headers, http.last.body);
  } catch (failure) {
    return failure;
  }
  return new ApiError('upstream_invalid_response', 'The upstream answer does not fit the WSDL.', {
    reason: error instanceof Error ? error.message.slice(0, 300) : String(error),
  });
}

function wsdlLoadFailure(error: unknown, http: SoapHttp): unknown {
  if (error instanceof ApiError) return error;
  const last = http.last;
  if (last && (last.status < 200 || last.status >= 300)) {
    return new ApiError('upstream_http_error', `Fetching the WSDL answered HTTP ${last.status}.`, {
      upstream_status: last.status,
      body_excerpt: bodyExcerpt(last.body),
    });
  }
  return new ApiError('upstream_invalid_response', 'The WSDL could not be read.', {
    reason: error instanceof Error ? error.message.slice(0, 300) : String(error),
  });
}

function connect(integration: ResolvedIntegration, context: ConnectorContext): Connection {
  const settings = settingsOf(integration, context);
  const wsdlMode = isWsdlUrl(settings.endpointUrl);

  // One parsed WSDL per integration version (a change to the integration loads it again).
  const model = (): Promise<WsdlModel> =>
    context.wsdlCache.get(`${integration.tenantId}\u0000${integration.id}`, String(integration.version), async () => {
      const http = new SoapHttp(settings.http);
      try {
        return await loadWsdlModel(settings.endpointUrl, http);
      } catch (error) {
        throw wsdlLoadFailure(error, http);
      }
    }) as Promise<WsdlModel>;

  async function callWsdl(fields: CallFields): Promise<ConnectorResult> {
    const loaded = await model();
    const { service, port } = selectPort(loaded, fields.service, fields.port);
    checkWsdlCall(loaded, service.name, port, fields);
    const http = new SoapHttp(settings.http);
    const client = prepareClient(loaded, settings.serviceUrl ?? port.location, {
      http,
      soap12: port.soapVersion === '1.2',
      soapHeaders: fields.soap_headers,
      soapAction: fields.soap_action,
    });
    type Operation = (args: unknown, callback: (error: unknown, value: unknown) => void) => void;
    const operation = (client as unknown as Record<string, Record<string, Record<string, Operation>>>)[service.name][port.name][
      fields.method
    ];
    // The Promise executor runs at once: the client prepared above is invoked in the same tick.
    const result = await new Promise<unknown>((resolve, reject) => {
      operation.call(client, fields.params ?? {}, (error: unknown, value: unknown) =>
        error ? reject(wsdlCallFailure(error, http)) : resolve(value),
      );
    });
    return { data: (result as Record<string, unknown> | null) ?? {}, messageCount: 1 };
  }

  async function callRaw(fields: CallFields): Promise<ConnectorResult> {
    const namespace = fields.namespace ?? settings.namespace;
    const envelope = buildEnvelope({
      version: settings.version,
      namespace,
      method: fields.method,
      params: fields.params,
      soapHeaders: fields.soap_headers,
    });
    const soapAction = soapActionFor({ soapAction: fields.soap_action, namespace, method: fields.method });
    const response = await sendUpstream(settings.http.dispatcher, {
      url: settings.endpointUrl,
      method: 'POST',
      // The envelope's own headers last: an auth_header named Content-Type or SOAPAction cannot replace them.
      headers: { ...settings.http.headers, ...requestHeaders({ version: settings.version, soapAction }) },
      body: envelope,
      timeoutMs: settings.http.timeoutMs,
      maxBodyBytes: settings.http.maxBodyBytes,
    });
    return { data: readSoapResponse(response.status, response.headers, response.body), messageCount: 1 };
  }

  const call = (fields: Record<string, unknown>) => (wsdlMode ? callWsdl : callRaw)(fields as unknown as CallFields);

  return {
    send: call,
    receive: call,
    async test() {
      const endpoint = redactUrl(settings.endpointUrl);
      if (wsdlMode) {
        const loaded = await model();
        const services = loaded.services.map((s) => ({
          name: s.name,
          ports: s.ports.map((p) => ({ name: p.name, soap_version: p.soapVersion, operations: p.operations })),
        }));
        return {
          data: { message: 'SOAP connection test succeeded', details: { endpoint_url: endpoint, mode: 'wsdl', services } },
          messageCount: 0,
        };
      }
      // Raw mode has no description to read: any HTTP answer shows the endpoint is there.
      const response = await sendUpstream(settings.http.dispatcher, {
        url: settings.endpointUrl,
        method: 'GET',
        headers: settings.http.headers,
        timeoutMs: settings.http.timeoutMs,
        maxBodyBytes: settings.http.maxBodyBytes,
      });
      return {
        data: {
          message: 'SOAP connection test succeeded',
          details: { endpoint_url: endpoint, mode: 'raw', http_status: response.status },
        },
        messageCount: 0,
      };
    },
  };
}

/** SOAP 1.1 and 1.2, with a WSDL (node-soap, parsed once and cached) or raw (API.md section 6). */
export const soapConnector: ConnectorDefinition = {
  id: 'soap-1.0.0',
  configProperties,
  secretFields: ['auth_value'],
  defaults: { timeout_seconds: 60, soap_version: '1.1' },
  offers: ['send', 'receive', 'sync', 'batch', 'test'],
  requestSchemas: { send: callSchema, receive: callSchema },
  connect,
};
