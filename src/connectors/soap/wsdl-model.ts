import type { IOptions } from 'soap';
import { open_wsdl, type WSDL } from 'soap/lib/wsdl/index.js';
import { ApiError } from '../../errors.ts';
import { SchemaModel } from './schema-model.ts';
import { type Signature, signatureOf } from './signature.ts';
import type { SoapHttp } from './soap-http.ts';
import { readWsdlDocuments, type WsdlPort } from './wsdl-documents.ts';

export interface PortInfo extends WsdlPort {
  /** Each operation name once, in the binding's order (overloads share one). */
  names: string[];
}

export interface ServiceInfo {
  name: string;
  ports: PortInfo[];
}

export interface WsdlModel {
  /** The schema types of the WSDL's messages, resolved at every depth. */
  schema: SchemaModel;
  services: ServiceInfo[];
}

/**
 * Fetches (through `http`) and parses a WSDL with its imports; only http(s) imports are followed. node-soap reads the
 * schemas; the services, bindings and messages are read from the fetched documents (wsdl-documents.ts).
 */
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
  const documents = readWsdlDocuments(http.fetchedXml);
  const services = documents.services.map((service) => ({
    name: service.name,
    ports: service.ports.map((port) => ({ ...port, names: [...new Set(port.operations.map((o) => o.name))] })),
  }));
  return { schema: new SchemaModel(wsdl, documents.globals), services };
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

/** The signature of every operation of a port, overloads each with their own, in the WSDL's order (docs/execute.md#soap-test). */
export function portSignatures(model: WsdlModel, port: PortInfo): Signature[] {
  return port.operations.map((operation) => signatureOf(model.schema, operation));
}
