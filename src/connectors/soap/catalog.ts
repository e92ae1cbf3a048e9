import { type CatalogOperation, cleanDescription } from '../catalog.ts';
import { ParamsSchemas } from './params-schema.ts';
import { ResultSchemas } from './result-schema.ts';
import { operationLayout } from './signature.ts';
import type { BoundOperation } from './wsdl-documents.ts';
import { type PortInfo, type ServiceInfo, selectPort, type WsdlModel } from './wsdl-model.ts';

/**
 * The SOAP half of the operation catalogue (docs/catalog.md#soap): one entry per operation of every service and port of
 * a WSDL, an overloaded operation one entry per overload, each with the JSON Schema of the params execute takes for it
 * (params-schema.ts) and of the `data` it answers (result-schema.ts).
 *
 * Names are unique within the integration and stay the same while the WSDL does: the operations of the port execute
 * calls by default are named by their operation name (`GetWeather`), those of every other port
 * `<service>.<port>.<operation>`; the second, third… overload of a name take `~2`, `~3`… in the WSDL's order. Each
 * entry's `request` names its service and port (and the overload's input), so that it runs exactly that operation.
 *
 * @example soapCatalog(model, {}, new Set(['GetWeather'])) // [{ name: 'GetWeather', kind: 'read', … }, …]
 */
export function soapCatalog(
  model: WsdlModel,
  choice: { service?: string; port?: string },
  readOperations: ReadonlySet<string>,
): CatalogOperation[] {
  const calledByDefault = defaultPort(model, choice);
  // Shared by every entry: a type's schema is built once, and named alike in each entry's `$defs`.
  const params = new ParamsSchemas();
  const results = new ResultSchemas();
  const taken = new Set<string>();
  const entries: CatalogOperation[] = [];
  for (const service of model.services) {
    for (const port of service.ports) {
      const qualifier = port === calledByDefault ? '' : `${service.name}.${port.name}.`;
      const overloads = new Map<string, number>();
      for (const operation of port.operations) overloads.set(operation.name, (overloads.get(operation.name) ?? 0) + 1);
      const seen = new Map<string, number>();
      for (const operation of port.operations) {
        const nth = (seen.get(operation.name) ?? 0) + 1;
        seen.set(operation.name, nth);
        const overloaded = (overloads.get(operation.name) ?? 0) > 1;
        const name = uniqueName(`${qualifier}${operation.name}${nth > 1 ? `~${nth}` : ''}`, taken);
        entries.push(entry(model, { service, port, operation, overloaded }, name, readOperations, { params, results }));
      }
    }
  }
  return entries;
}

interface Located {
  service: ServiceInfo;
  port: PortInfo;
  operation: BoundOperation;
  overloaded: boolean;
}

function entry(
  model: WsdlModel,
  { service, port, operation, overloaded }: Located,
  name: string,
  readOperations: ReadonlySet<string>,
  schemas: { params: ParamsSchemas; results: ResultSchemas },
): CatalogOperation {
  const layout = () => operationLayout(model.schema, operation);
  const input = layout().input.name;
  let inputSchema: Record<string, unknown> | undefined;
  let outputSchema: Record<string, unknown> | undefined;
  return {
    name,
    kind: readOperations.has(name) ? 'read' : 'write',
    description: cleanDescription(operation.documentation) || generatedDescription(service, port, operation, input),
    // Compiled when first read: a call (`request`) needs neither, and a WSDL of a thousand operations lists in pages.
    get input_schema() {
      inputSchema ??= schemas.params.params(layout().input.model);
      return inputSchema;
    },
    get output_schema() {
      outputSchema ??= schemas.results.data(layout().output);
      return outputSchema;
    },
    request: (params) => ({
      method: operation.name,
      service: service.name,
      port: port.name,
      ...(overloaded && { input }),
      params,
    }),
  };
}

/** One line saying what the operation is, for a WSDL that does not say. */
function generatedDescription(service: ServiceInfo, port: PortInfo, operation: BoundOperation, input: string): string {
  const message = operation.input === undefined ? 'no input' : `input ${input}`;
  return cleanDescription(`SOAP operation ${operation.name} of service ${service.name}, port ${port.name} (${message}).`);
}

/**
 * The port execute calls when a request names none (wsdl-model.ts `selectPort`), or undefined for a WSDL without a
 * SOAP port; a choice naming what the WSDL does not have is refused as execute refuses it.
 */
function defaultPort(model: WsdlModel, choice: { service?: string; port?: string }): PortInfo | undefined {
  if (choice.service === undefined && choice.port === undefined && !model.services[0]?.ports.length) return undefined;
  return selectPort(model, choice.service, choice.port).port;
}

/** `name`, or with `~2`, `~3`… when another entry has it already (an operation named `S.P.Op`, say). */
function uniqueName(name: string, taken: Set<string>): string {
  let unique = name;
  for (let n = 2; taken.has(unique); n++) unique = `${name}~${n}`;
  taken.add(unique);
  return unique;
}
