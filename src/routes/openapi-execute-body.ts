import type { ConnectorDefinition, Operation, PrimitiveOperation } from '../connectors/connector.ts';
import type { ConnectorRegistry } from '../connectors/registry.ts';
import { batchSchema, syncSchema, testSchema } from '../execution/request-checks.ts';
import { componentsPath, connectorComponent, namedExamples, type Schema, when } from './openapi-components.ts';
import { ref } from './schemas.ts';

/**
 * The execute request body in the OpenAPI document: per connector, its send and receive fields; per operation, a
 * branch over the connectors that offer it.
 */

export const operationComponent = {
  send: 'ExecuteSend',
  receive: 'ExecuteReceive',
  sync: 'ExecuteSync',
  batch: 'ExecuteBatch',
  test: 'ExecuteTest',
} as const;
export const fieldsComponent = { send: 'SendFields', receive: 'ReceiveFields' } as const;

/** A connector's send or receive fields, as its request schema has them (a copy: the document must not share its objects). */
export function fields(definition: ConnectorDefinition, operation: PrimitiveOperation): Schema {
  return {
    $id: connectorComponent(fieldsComponent[operation], definition.id),
    description: `The fields of a ${operation}. ${when(definition)}`,
    ...structuredClone(definition.requestSchemas[operation]),
  };
}

/** A send or receive body: the connector's fields beside `operation`. */
export function primitiveBody(definition: ConnectorDefinition, operation: PrimitiveOperation): Schema {
  const schema = structuredClone(definition.requestSchemas[operation]) as Schema;
  return {
    ...schema,
    $id: connectorComponent(operationComponent[operation], definition.id),
    description: when(definition),
    required: ['operation', ...((schema.required as string[] | undefined) ?? [])],
    properties: { operation: { type: 'string', enum: [operation] }, ...(schema.properties as Schema | undefined) },
  };
}

/** The parts of a sync or the data of a batch entry: the fields of a send or receive of any connector offering it. */
function anyConnectorFields(offering: ConnectorDefinition[], operation: PrimitiveOperation): Schema[] {
  return offering.map((definition) => ref(connectorComponent(fieldsComponent[operation], definition.id)));
}

/** One branch of the execute body's `oneOf`, for `operation`, over the connectors that offer it. */
export function operationBody(operation: Operation, offering: ConnectorDefinition[]): Schema {
  const tag = { type: 'string', enum: [operation] };
  const $id = operationComponent[operation];
  switch (operation) {
    case 'send':
    case 'receive':
      return {
        $id,
        description: `\`${operation}\`: the fields depend on the integration's connector.`,
        type: 'object',
        required: ['operation'],
        properties: { operation: tag },
        anyOf: offering.map((definition) => ref(connectorComponent($id, definition.id))),
      };
    case 'sync':
      return {
        $id,
        description:
          'A send (`outbound`) then a receive (`inbound`) with the fields of the integration’s connector; an empty, null ' +
          'or absent part is skipped, one is needed.',
        ...syncSchema,
        required: ['operation'],
        properties: {
          operation: tag,
          outbound: { anyOf: [{ type: 'null' }, ...anyConnectorFields(offering, 'send')] },
          inbound: { anyOf: [{ type: 'null' }, ...anyConnectorFields(offering, 'receive')] },
        },
      };
    case 'batch': {
      const { operations, stop_on_error } = batchSchema.properties;
      return {
        $id,
        description: 'Up to 100 sends and receives, run in order; each entry’s failure is its own.',
        ...batchSchema,
        required: ['operation', ...batchSchema.required],
        properties: {
          operation: tag,
          operations: {
            ...operations,
            items: {
              ...operations.items,
              description:
                '`{operation | type: "send"|"receive" (default "receive"), data: {…fields}}`, or the fields at the entry’s ' +
                'top level; `data` wins when present.',
              properties: {
                ...operations.items.properties,
                data: { anyOf: [...anyConnectorFields(offering, 'send'), ...anyConnectorFields(offering, 'receive')] },
              },
              additionalProperties: true,
            },
          },
          stop_on_error: { ...stop_on_error, description: 'Skip the entries after the first failure.' },
        },
      };
    }
    case 'test':
      return {
        $id,
        description: 'Checks the connection (GraphQL: the schema’s query type; SOAP: the WSDL’s services).',
        ...testSchema,
        required: ['operation'],
        properties: { operation: tag, ...testSchema.properties },
      };
  }
}

/** The execute body for the document: a `oneOf` discriminated by `operation`, over what the connectors offer. */
export function executeBody(registry: ConnectorRegistry): Schema {
  const definitions = registry.ids.map((id) => registry.get(id)!);
  const offered = (Object.keys(operationComponent) as Operation[]).filter((op) => definitions.some((d) => d.offers.includes(op)));
  return {
    oneOf: offered.map((op) => ref(operationComponent[op])),
    discriminator: {
      propertyName: 'operation',
      mapping: Object.fromEntries(offered.map((op) => [op, componentsPath + operationComponent[op]])),
    },
    'x-examples': namedExamples({
      'GraphQL receive, paginated': {
        operation: 'receive',
        query:
          'query($after: String) { users(first: 50, after: $after) { edges { node { id name } } pageInfo { hasNextPage endCursor } } }',
        paginate: { max_pages: 5 },
      },
      'GraphQL send': { operation: 'send', mutation: 'mutation($id: ID!) { touch(id: $id) { id } }', variables: { id: '1' } },
      'SOAP send': { operation: 'send', method: 'Add', params: { a: 2, b: 3 } },
      'GraphQL sync': {
        operation: 'sync',
        outbound: { mutation: 'mutation { touch(id: "1") { id } }' },
        inbound: { query: '{ users { id name } }' },
      },
      'SOAP batch': {
        operation: 'batch',
        operations: [
          { operation: 'send', data: { method: 'Add', params: { a: 1, b: 2 } } },
          { operation: 'send', method: 'Divide', params: { a: 1, b: 0 } },
        ],
        stop_on_error: false,
      },
      test: { operation: 'test' },
    }),
  };
}
