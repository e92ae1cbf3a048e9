import { ApiError } from '../../core/errors.ts';
import { SchemaModel } from './schema-model.ts';
import { type Signature, signatureOf } from './signature.ts';
import type { SoapHttp } from './soap-http.ts';
import { readServices, type WsdlPort } from './wsdl-documents.ts';
import { loadWsdlDocuments, type WsdlDocuments } from './wsdl-loader.ts';
import { SchemaIndex } from './xsd-index.ts';

export interface PortInfo extends WsdlPort {
  /** Each operation name once, in the binding's order (overloads share one). */
  names: string[];
}

export interface ServiceInfo {
  name: string;
  ports: PortInfo[];
}

export interface WsdlModel {
  /** The schema types of the WSDL's messages, compiled on first use. */
  schema: SchemaModel;
  services: ServiceInfo[];
}

/**
 * Fetches (through `http`) a WSDL with everything it imports and includes, each document read once
 * (wsdl-loader.ts), and compiles it: the services, bindings and messages (wsdl-documents.ts), and the schemas'
 * global declarations (xsd-index.ts), from which the schema model compiles each type when a call first needs it.
 */
export async function loadWsdlModel(url: string, http: SoapHttp): Promise<WsdlModel> {
  try {
    return compileWsdl(await loadWsdlDocuments(url, (documentUrl) => http.get(documentUrl)));
  } catch (error) {
    if (error instanceof ApiError) throw error;
    // A defect of ours in reading some WSDL is still an answer about that WSDL, not a 500.
    throw new ApiError('upstream_invalid_response', 'The WSDL could not be read.', {
      reason: error instanceof Error ? error.message.slice(0, 300) : String(error),
    });
  }
}

/** The model of a WSDL's documents: its services, and its schemas' global declarations to compile types from. */
export function compileWsdl(documents: WsdlDocuments): WsdlModel {
  const services = readServices(documents.definitions).map((service) => ({
    name: service.name,
    ports: service.ports.map((port) => ({ ...port, names: [...new Set(port.operations.map((o) => o.name))] })),
  }));
  const index = new SchemaIndex(documents.schemas, documents.definitions[0].scope);
  return { schema: new SchemaModel(index), services };
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
