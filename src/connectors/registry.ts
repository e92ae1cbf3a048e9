import type { ConnectorDefinition } from './connector.ts';
import { graphqlConnector } from './graphql/connector.ts';

/** Every connector the service offers, by id. */
export const connectors: ReadonlyMap<string, ConnectorDefinition> = new Map(
  [graphqlConnector].map((definition) => [definition.id, definition]),
);

export const connectorIds = [...connectors.keys()];
