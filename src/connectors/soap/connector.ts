import { ApiError } from '../../core/errors.ts';
import { RawJson } from '../../core/raw-json.ts';
import { credentialsMayGoTo } from '../../credentials/destinations.ts';
import { authSecretPaths } from '../../credentials/schemes.ts';
import { tlsSecretPaths } from '../../egress/tls-config.ts';
import type { ResolvedIntegration } from '../../integrations/resolved-integration.ts';
import { traceWsdlLoad, tracingOn } from '../../telemetry/spans.ts';
import { bufferOf, failureOf, offThreadMinBytes, readOffThread } from '../../transport/answer-workers.ts';
import { redactUrl, type UpstreamResponse } from '../../transport/upstream.ts';
import { cacheVersion } from '../cache-version.ts';
import {
  type Connection,
  type ConnectorContext,
  type ConnectorDefinition,
  type ConnectorResult,
  defineConnector,
} from '../connector.ts';
import type { ResultMessage } from './answer-worker.ts';
import { buildEnvelope, requestHeaders, type SoapVersion, soapActionProblem } from './envelope.ts';
import { isWsdlUrl, soapActionFor } from './mode.ts';
import { requestIssues } from './request-issues.ts';
import { readSoapResponse } from './response.ts';
import { shapeResult } from './result-shape.ts';
import { type CallFields, callSchema, configProperties } from './schemas.ts';
import { operationLayout } from './signature.ts';
import { SoapHttp, wsdlLoadDefaults } from './soap-http.ts';
import { carriedCredentials, foreignAddress, settingsOf } from './soap-settings.ts';
import type { ComplexModel } from './type-model.ts';
import { WsdlCache } from './wsdl-cache.ts';
import { resolveWsdlCall } from './wsdl-checks.ts';
import { writeWsdlEnvelope } from './wsdl-envelope.ts';
import type { WsdlModel } from './wsdl-model.ts';
import { type WsSecurityOptions, wsSecuritySecretPaths } from './wsse/config.ts';
import { describeWsSecurity } from './wsse/material.ts';

/**
 * The header block's writer and signer, loaded with the first message that needs one: the XML DOM and XML-DSig
 * libraries it brings (xmldom, xml-crypto, xpath) are not loaded by an instance whose integrations never sign.
 */
let wsSecurityModule: Promise<typeof import('./wsse/security-header.ts')> | undefined;
const loadWsSecurity = () => {
  wsSecurityModule ??= import('./wsse/security-header.ts');
  return wsSecurityModule;
};

/**
 * WSDL mode's reading of WSDLs (the loader, the compiler, the schema model): loaded on the first WSDL, so that an
 * instance that never loads one does not carry it.
 */
let wsdlModuleLoaded: Promise<typeof import('./wsdl-model.ts')> | undefined;
// Kept once loaded: an import() call per use cost each warm call microseconds of module-map lookups.
const wsdlModule = () => {
  wsdlModuleLoaded ??= import('./wsdl-model.ts');
  return wsdlModuleLoaded;
};

/** The catalogue's schema compiler, loaded with the first catalogue asked for. */
let catalogModuleLoaded: Promise<typeof import('./catalog.ts')> | undefined;
const catalogModule = () => {
  catalogModuleLoaded ??= import('./catalog.ts');
  return catalogModuleLoaded;
};

/** The module a worker thread reads large answers with. */
const answerWorker = new URL('./answer-worker.ts', import.meta.url);

function connect(
  integration: ResolvedIntegration,
  context: ConnectorContext,
  wsdlCache: WsdlCache<WsdlModel>,
): Connection<CallFields, CallFields> {
  const settings = settingsOf(integration, context);
  const wsdlMode = isWsdlUrl(settings.endpointUrl);
  const wsSecurity = integration.config.ws_security as WsSecurityOptions | undefined;

  // One parsed WSDL per integration version and configuration (a change to the integration loads it again).
  const cachedModel = (): Promise<WsdlModel> =>
    wsdlCache.get(`${integration.tenantId}\u0000${integration.id}`, cacheVersion(integration), async () => {
      const http = new SoapHttp(settings.http, { ...wsdlLoadDefaults, timeoutMs: settings.http.timeoutMs });
      return (await wsdlModule()).loadWsdlModel(settings.endpointUrl, http);
    });
  const model = (): Promise<WsdlModel> =>
    tracingOn() ? traceWsdlLoad(settings.endpointUrl, wsdlCache, cachedModel) : cachedModel();

  /** The WSDL, the port and the operation the call runs, checked against them: nothing is sent. */
  async function prepareWsdlCall(fields: CallFields) {
    const loaded = await model();
    const { service, port } = (await wsdlModule()).selectPort(loaded, fields.service, fields.port);
    const operation = resolveWsdlCall(loaded, service.name, port, fields);
    const address = URL.parse(settings.serviceUrl ?? port.location);
    if (address === null || (address.protocol !== 'http:' && address.protocol !== 'https:')) {
      // Generators leave placeholders (`REPLACE_WITH_ACTUAL_URL`, an empty address): the caller can set the address.
      throw new ApiError(
        'integration_misconfigured',
        `The WSDL's port ${port.name} has no http(s) address (${JSON.stringify(port.location.slice(0, 200))}); set config.service_url to the service's address.`,
        { field: 'config.service_url' },
      );
    }
    // The request's soap_action, when given, was checked with the request's own problems; the WSDL's is checked here.
    const declaredProblem = fields.soap_action === undefined ? soapActionProblem(operation.soapAction) : undefined;
    if (declaredProblem !== undefined) {
      throw new ApiError(
        'integration_misconfigured',
        `The WSDL's soapAction for ${operation.name} on port ${port.name} ${declaredProblem}; give the action in the request's soap_action.`,
        { operation: operation.name, port: port.name },
      );
    }
    const url = settings.serviceUrl ?? port.location;
    const credentials = carriedCredentials(integration, settings.hasCredentials);
    if (credentials.length > 0 && !credentialsMayGoTo(integration, url)) throw foreignAddress(port.name, url, credentials);
    return { loaded, port, operation, url };
  }

  /**
   * The action of a raw-mode call. One the request gave or derived from the request's namespace was checked with the
   * request's own problems (`requestIssues`); one derived from the configured namespace is checked here, before
   * anything is sent.
   */
  function rawAction(fields: CallFields): string {
    const namespace = fields.namespace ?? settings.namespace;
    const action = soapActionFor({ soapAction: fields.soap_action, namespace, method: fields.method });
    const problem = soapActionProblem(action);
    if (problem !== undefined) {
      throw new ApiError(
        'integration_misconfigured',
        `The SOAP action derived from config.namespace ${problem}; fix config.namespace, or give the request a soap_action.`,
        { field: 'config.namespace' },
      );
    }
    return action;
  }

  async function callWsdl(fields: CallFields, write: boolean): Promise<ConnectorResult> {
    const { loaded, port, operation, url } = await prepareWsdlCall(fields);
    const layout = operationLayout(loaded.schema, operation);
    const envelope = writeWsdlEnvelope({
      version: port.soapVersion,
      layout: layout.input,
      params: fields.params ?? {},
      soapHeaders: fields.soap_headers,
    });
    const response = await post(url, port.soapVersion, fields.soap_action ?? operation.soapAction, envelope, write);
    // A document-style output of several parts is the Body's elements, by name (the model's particles).
    const output = layout.output;
    const bodyParts = output !== undefined && output.wrapper === undefined && output.model.particles.length > 1;
    const data = await readResult(response, output?.model, bodyParts);
    return { data: data as Record<string, unknown>, messageCount: 1 };
  }

  async function callRaw(fields: CallFields, write: boolean): Promise<ConnectorResult> {
    const soapAction = rawAction(fields);
    const envelope = buildEnvelope({
      version: settings.version,
      namespace: fields.namespace ?? settings.namespace,
      method: fields.method,
      params: fields.params,
      soapHeaders: fields.soap_headers,
    });
    const response = await post(settings.endpointUrl, settings.version, soapAction, envelope, write);
    return { data: (await readResult(response)) as Record<string, unknown>, messageCount: 1 };
  }

  /**
   * The answer's result (a fault or an HTTP error thrown), shaped by WSDL mode's output `model` when there is one. A
   * large answer is read by a worker thread (answer-worker.ts), so that its megabytes never hold the event loop; what
   * comes back is its JSON text, already redacted.
   */
  async function readResult(response: UpstreamResponse, model?: ComplexModel, bodyParts = false): Promise<unknown> {
    if (response.size < offThreadMinBytes) {
      const result = readSoapResponse(response.status, response.headers, response.body, {
        bodyParts,
        maxResolvedBytes: context.budget.maxBytes,
      });
      return model ? shapeResult(model, result) : result;
    }
    const read = await readOffThread<ResultMessage>(
      context.workers,
      answerWorker,
      'readSoapAnswer',
      response,
      context.secrets.secrets,
      { ...(model && { model, bodyParts }), maxResolvedBytes: context.budget.maxBytes },
    );
    if (!read.ok) throw failureOf(read.failure);
    return new RawJson([bufferOf(read.text)]);
  }

  /**
   * POSTs an envelope, with the integration's `wsse:Security` header block when it has `ws_security` (a fresh nonce,
   * timestamp and signature for each message): the answer, to be read by `readResult`.
   */
  function post(
    url: string,
    version: SoapVersion,
    soapAction: string,
    envelope: string,
    write: boolean,
  ): Promise<UpstreamResponse> {
    const send = (body: string | (() => string)) =>
      settings.http.send({
        url,
        method: 'POST',
        // The credentials go first (credentials.send): an auth header named Content-Type or SOAPAction cannot replace these.
        headers: requestHeaders({ version, soapAction }),
        body,
        // A receive changes nothing upstream: retried after timeouts, resets, 502 and 504 too (docs/resilience.md).
        write,
        timeoutMs: settings.http.timeoutMs,
        maxBodyBytes: settings.http.maxBodyBytes,
        budget: settings.http.budget,
      });
    if (!wsSecurity) return send(envelope);
    // Made for each attempt: a retry carries a fresh nonce, timestamp and signature, never a replay of the first.
    return loadWsSecurity().then(({ applyWsSecurity }) => send(() => applyWsSecurity(envelope, wsSecurity)));
  }

  const call = (fields: CallFields, write: boolean) => (wsdlMode ? callWsdl : callRaw)(fields, write);
  /** What `test` says of `ws_security`: which parts are set, and the signing certificate's subject and expiry. */
  const securityReport = () => (wsSecurity ? { ws_security: describeWsSecurity(wsSecurity) } : {});

  return {
    send: (fields) => call(fields, true),
    receive: (fields) => call(fields, false),
    /**
     * The request's own problems first, which need nothing loaded; then, when it has none, the call as it would be
     * made: the method and params against the WSDL (loaded when not cached), or raw mode's action.
     */
    async prepare(_operation, fields) {
      const issues = requestIssues(fields, wsdlMode);
      if (issues.length > 0) return issues;
      if (wsdlMode) await prepareWsdlCall(fields);
      else rawAction(fields);
      return [];
    },
    /** The operation catalogue (docs/catalog.md#soap): every operation of the WSDL; raw mode has none. */
    async catalog(catalog) {
      if (!wsdlMode) return [];
      const loaded = await model();
      return (await catalogModule()).soapCatalog(loaded, {}, new Set(catalog.read_operations));
    },
    async test() {
      const endpoint = redactUrl(settings.endpointUrl);
      if (wsdlMode) {
        const loaded = await model();
        const wsdl = await wsdlModule();
        const services = loaded.services.map((s) => ({
          name: s.name,
          ports: s.ports.map((p) => ({
            name: p.name,
            soap_version: p.soapVersion,
            operations: p.names,
            signatures: wsdl.portSignatures(loaded, p),
          })),
        }));
        return {
          data: {
            message: 'SOAP connection test succeeded',
            details: { endpoint_url: endpoint, mode: 'wsdl', services, ...securityReport() },
          },
          messageCount: 0,
        };
      }
      // Raw mode has no description to read: any HTTP answer shows the endpoint is there.
      const response = await settings.http.send({
        url: settings.endpointUrl,
        method: 'GET',
        headers: {},
        timeoutMs: settings.http.timeoutMs,
        maxBodyBytes: settings.http.maxBodyBytes,
        budget: settings.http.budget,
      });
      return {
        data: {
          message: 'SOAP connection test succeeded',
          details: { endpoint_url: endpoint, mode: 'raw', http_status: response.status, ...securityReport() },
        },
        messageCount: 0,
      };
    },
  };
}

export interface SoapConnectorSettings {
  /** Parsed WSDLs kept at most (IX_WSDL_CACHE_SIZE), and for how long (IX_WSDL_CACHE_TTL_SECONDS). */
  wsdlCacheSize: number;
  wsdlCacheTtlMs: number;
}

/**
 * SOAP 1.1 and 1.2, with a WSDL (parsed once and cached, in this connector's own cache) or raw (docs/execute.md#soap-connector).
 */
export function soapConnector(settings: SoapConnectorSettings): ConnectorDefinition {
  const wsdlCache = new WsdlCache<WsdlModel>(settings.wsdlCacheSize, settings.wsdlCacheTtlMs);
  return defineConnector<typeof callSchema, typeof callSchema>({
    id: 'soap-1.0.0',
    configProperties,
    secretFields: ['auth_value', ...authSecretPaths, ...tlsSecretPaths, ...wsSecuritySecretPaths],
    authShorthands: ['auth_header', 'auth_value'],
    shorthandAuth: (config) =>
      typeof config.auth_header === 'string' && typeof config.auth_value === 'string'
        ? { type: 'header', name: config.auth_header, value: config.auth_value }
        : undefined,
    urlFields: ['endpoint_url', 'service_url', 'auth.token_url'],
    defaults: { timeout_seconds: 60, soap_version: '1.1' },
    offers: ['send', 'receive', 'sync', 'batch', 'test'],
    requestSchemas: { send: callSchema, receive: callSchema },
    connect: (integration, context) => connect(integration, context, wsdlCache),
    stats: () => ({ cacheHits: wsdlCache.hits, cacheMisses: wsdlCache.loads, cacheEntries: wsdlCache.size }),
  });
}
