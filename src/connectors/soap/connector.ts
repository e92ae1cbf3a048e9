import { ApiError, type ValidationIssue } from '../../core/errors.ts';
import { RawJson } from '../../core/raw-json.ts';
import { credentialsMayGoTo } from '../../credentials/destinations.ts';
import { authSecretPaths } from '../../credentials/schemes.ts';
import type { TlsConfig } from '../../egress/tls.ts';
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
import { typeKey } from './derived-types.ts';
import { buildEnvelope, envelopeIssues, requestHeaders, type SoapVersion, soapActionProblem, valueKeys } from './envelope.ts';
import { isWsdlUrl, soapActionFor } from './mode.ts';
import { readSoapResponse } from './response.ts';
import { shapeResult } from './result-shape.ts';
import type { ComplexModel } from './schema-model.ts';
import { type CallFields, callSchema, configProperties } from './schemas.ts';
import { operationLayout } from './signature.ts';
import { SoapHttp, type SoapHttpOptions, wsdlLoadDefaults } from './soap-http.ts';
import { WsdlCache } from './wsdl-cache.ts';
import { resolveWsdlCall } from './wsdl-checks.ts';
import { writeWsdlEnvelope } from './wsdl-envelope.ts';
import type { WsdlModel } from './wsdl-model.ts';
import { type WsSecurityOptions, wsSecuritySecretPaths } from './wsse/config.ts';
import { applyWsSecurity, describeWsSecurity } from './wsse/security-header.ts';

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

interface SoapSettings {
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

/** The module a worker thread reads large answers with. */
const answerWorker = new URL('./answer-worker.ts', import.meta.url);

function settingsOf(integration: ResolvedIntegration, context: ConnectorContext): SoapSettings {
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
function carriedCredentials(integration: ResolvedIntegration, headers: boolean): string[] {
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
function foreignAddress(portName: string, address: string, credentials: string[]): ApiError {
  const origin = URL.parse(address)?.origin ?? address;
  const what = credentials.map((field) => `config.${field}`).join(', ');
  return new ApiError(
    'integration_misconfigured',
    `The WSDL's port ${portName} has its address on ${origin}, an origin the integration does not name, so nothing is sent there: the call would carry ${what}. Set config.service_url to that address to send calls (and their credentials) to it.`,
    { field: 'config.service_url', address: redactUrl(address), origin, credentials: credentials.map((f) => `config.${f}`) },
  );
}

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
    return settings.http.send({
      url,
      method: 'POST',
      // The credentials go first (credentials.send): an auth header named Content-Type or SOAPAction cannot replace these.
      headers: requestHeaders({ version, soapAction }),
      // Made for each attempt: a retry carries a fresh nonce, timestamp and signature, never a replay of the first.
      body: wsSecurity ? () => applyWsSecurity(envelope, wsSecurity) : envelope,
      // A receive changes nothing upstream: retried after timeouts, resets, 502 and 504 too (docs/resilience.md).
      write,
      timeoutMs: settings.http.timeoutMs,
      maxBodyBytes: settings.http.maxBodyBytes,
      budget: settings.http.budget,
    });
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
function requestIssues(fields: CallFields, wsdlMode: boolean): ValidationIssue[] {
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
