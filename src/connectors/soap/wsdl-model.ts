import { XMLParser } from 'fast-xml-parser';
import { Client, type IOptions } from 'soap';
import { open_wsdl, type WSDL } from 'soap/lib/wsdl/index.js';
import { ApiError } from '../../errors.ts';
import { SchemaModel } from './schema-model.ts';
import { type Signature, signatureOf } from './signature.ts';
import type { SoapHttp } from './soap-http.ts';

const soap12BindingNs = 'http://schemas.xmlsoap.org/wsdl/soap12/';

export interface PortInfo {
  name: string;
  soapVersion: '1.1' | '1.2';
  location: string;
  operations: string[];
}

export interface ServiceInfo {
  name: string;
  ports: PortInfo[];
}

export interface WsdlModel {
  wsdl: WSDL;
  /** The schema types of the WSDL's messages, resolved at every depth. */
  schema: SchemaModel;
  services: ServiceInfo[];
  /** node-soap clients by endpoint, built on first use: building one walks every operation. */
  clients: Map<string, Client>;
}

// biome-ignore lint/suspicious/noExplicitAny: node-soap's parsed WSDL elements are untyped.
type Element = any;

/** Fetches (through `http`) and parses a WSDL with its imports; only http(s) imports are followed. */
export async function loadWsdlModel(url: string, http: SoapHttp): Promise<WsdlModel> {
  const options = {
    httpClient: http,
    disableCache: true,
    wsdl_options: {
      // A WSDL must not make us read local files: imports resolve to http(s) URLs only.
      overrideImportLocation: (resolved: string) => {
        if (!/^https?:\/\//i.test(resolved))
          throw new ApiError('upstream_invalid_response', `The WSDL imports ${resolved}, which is not an http(s) URL.`);
        return resolved;
      },
    },
  } as unknown as IOptions;
  const wsdl = await new Promise<WSDL>((resolve, reject) => {
    open_wsdl(url, options, (error: unknown, parsed?: WSDL) => (error || !parsed ? reject(error) : resolve(parsed)));
  });
  return {
    wsdl,
    schema: new SchemaModel(wsdl),
    services: describeServices(wsdl, soap12Bindings(http.fetchedXml)),
    clients: new Map(),
  };
}

/** Names of the bindings declared with a SOAP 1.2 binding element, read from the WSDL documents. */
function soap12Bindings(documents: readonly string[]): Set<string> {
  const parser = new XMLParser({
    ignoreAttributes: false,
    attributeNamePrefix: '@',
    processEntities: false,
    htmlEntities: false,
  });
  const names = new Set<string>();
  for (const text of documents) {
    let root: Record<string, Element>;
    try {
      root = parser.parse(text) as Record<string, Element>;
    } catch {
      continue;
    }
    const definitionsKey = Object.keys(root).find((k) => k === 'definitions' || k.endsWith(':definitions'));
    const definitions = definitionsKey ? root[definitionsKey] : undefined;
    if (!definitions) continue;
    const soap12Prefixes = Object.entries(definitions)
      .filter(([k, v]) => k.startsWith('@xmlns:') && v === soap12BindingNs)
      .map(([k]) => k.slice('@xmlns:'.length));
    const bindingKey = Object.keys(definitions).find((k) => k === 'binding' || k.endsWith(':binding'));
    const bindings = bindingKey ? [definitions[bindingKey]].flat() : [];
    for (const binding of bindings) {
      const usesSoap12 = soap12Prefixes.some((p) => `${p}:binding` in binding);
      if (usesSoap12 && typeof binding['@name'] === 'string') names.add(binding['@name']);
    }
  }
  return names;
}

function describeServices(wsdl: WSDL, soap12: Set<string>): ServiceInfo[] {
  const services = (wsdl.definitions as Element).services as Record<string, Element>;
  return Object.entries(services).map(([name, service]) => ({
    name,
    ports: Object.entries(service.ports as Record<string, Element>).map(([portName, port]) => ({
      name: portName,
      soapVersion: soap12.has(bindingName(wsdl, port.binding)) ? '1.2' : '1.1',
      location: port.location,
      operations: Object.keys(port.binding.methods ?? {}),
    })),
  }));
}

function bindingName(wsdl: WSDL, binding: Element): string {
  const bindings = (wsdl.definitions as Element).bindings as Record<string, Element>;
  return Object.keys(bindings).find((name) => bindings[name] === binding) ?? '';
}

/**
 * The port to call: the one named, else the first SOAP 1.1 port, else the first port, of the service named or else
 * of the first service. A port named without a service is looked for in every service (the first one that has it).
 */
export function selectPort(model: WsdlModel, serviceName?: string, portName?: string): { service: ServiceInfo; port: PortInfo } {
  if (serviceName === undefined && portName !== undefined) {
    const all = model.services.flatMap((service) => service.ports.map((port) => ({ service, port })));
    const found = all.find((p) => p.port.name === portName);
    if (found) return found;
    throw new ApiError('validation_failed', `The WSDL has no port ${portName}.`, {
      issues: [{ path: 'port', message: `not in the WSDL; ports: ${all.map((p) => p.port.name).join(', ')}` }],
    });
  }
  const service = serviceName === undefined ? model.services[0] : model.services.find((s) => s.name === serviceName);
  if (!service) {
    throw new ApiError('validation_failed', `The WSDL has no service ${serviceName}.`, {
      issues: [{ path: 'service', message: `not in the WSDL; services: ${model.services.map((s) => s.name).join(', ')}` }],
    });
  }
  const port =
    portName === undefined
      ? (service.ports.find((p) => p.soapVersion === '1.1') ?? service.ports[0])
      : service.ports.find((p) => p.name === portName);
  if (!port) {
    throw new ApiError('validation_failed', `Service ${service.name} has no port ${portName}.`, {
      issues: [
        { path: 'port', message: `not in service ${service.name}; ports: ${service.ports.map((p) => p.name).join(', ')}` },
      ],
    });
  }
  return { service, port };
}

/** node-soap's binding method of an operation of a port (undefined when the port has no such operation). */
export function bindingMethod(model: WsdlModel, service: string, port: string, method: string): Element {
  const services = (model.wsdl.definitions as Element).services as Record<string, Element>;
  return services[service]?.ports?.[port]?.binding?.methods?.[method];
}

/** The signature of every operation of a port, in the WSDL's order (API.md section 6, `test`). */
export function portSignatures(model: WsdlModel, service: string, port: PortInfo): Signature[] {
  return port.operations.map((name) => signatureOf(model.schema, name, bindingMethod(model, service, port.name, name)));
}

export interface CallSettings {
  http: SoapHttp;
  soap12: boolean;
  soapHeaders?: Record<string, unknown>;
  soapAction?: string;
}

/**
 * The cached client for `endpoint`, set up for one call. node-soap's `_invoke` runs synchronously
 * from the method call to `httpClient.request`, so settings made here and the call made in the same
 * tick cannot mix with another call's: invoke the returned client's method at once, with no await between.
 */
export function prepareClient(model: WsdlModel, endpoint: string, call: CallSettings): Client {
  let client = model.clients.get(endpoint);
  if (!client) {
    // `$attributes` as in raw mode (node-soap's default key is `attributes`, which would make `$attributes` an element
    // named `$attributes`, and `attributes` an attribute list); every client sets it on the shared WSDL, so all say so.
    client = new Client(model.wsdl, endpoint, { httpClient: call.http, attributesKey: '$attributes' } as unknown as IOptions);
    model.clients.set(endpoint, client);
  }
  const mutable = client as unknown as { httpClient: SoapHttp; SOAPAction: string | undefined };
  mutable.httpClient = call.http;
  mutable.SOAPAction = call.soapAction;
  (model.wsdl.options as { forceSoap12Headers?: boolean }).forceSoap12Headers = call.soap12;
  client.clearSoapHeaders();
  if (call.soapHeaders) client.addSoapHeader(call.soapHeaders);
  return client;
}
