import type { ConnectorDefinition } from './connector.ts';
import { graphqlConnector } from './graphql/connector.ts';
import { soapConnector } from './soap/connector.ts';

/** Every connector the service offers, by id. */
export const connectors: ReadonlyMap<string, ConnectorDefinition> = new Map(
  [graphqlConnector, soapConnector].map((definition) => [definition.id, definition]),
);

export const connectorIds = [...connectors.keys()];
