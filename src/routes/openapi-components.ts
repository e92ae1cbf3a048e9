import type { ConnectorDefinition } from '../connectors/connector.ts';

/** How the shapes that depend on the registered connectors are named and described in the OpenAPI document. */

/** A JSON Schema as the document holds it. */
export type Schema = Record<string, unknown>;

/** Where a `$ref` in a discriminator's mapping points. */
export const componentsPath = '#/components/schemas/';

/** A component name for a connector's shape: `Integration.graphql-1.0.0` (the characters a component name may hold). */
export function connectorComponent(kind: string, connectorId: string): string {
  return `${kind}.${connectorId.replace(/[^A-Za-z0-9._-]/g, '_')}`;
}

/** Named examples of a request body (@fastify/swagger puts `x-examples` on the media type as its `examples`). */
export function namedExamples(examples: Record<string, object>): Record<string, { value: object }> {
  return Object.fromEntries(Object.entries(examples).map(([name, value]) => [name, { value }]));
}

/** The description of a connector's branch. */
export const when = (definition: ConnectorDefinition) => `When the integration's connector is \`${definition.id}\`.`;
