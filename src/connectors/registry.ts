import type { Config } from '../config/config.ts';
import type { ConnectorDefinition, ConnectorStats } from './connector.ts';
import { graphqlConnector } from './graphql/connector.ts';
import { soapConnector } from './soap/connector.ts';

/** The connectors one app offers, by id: `build()` takes them (the built-in ones unless told otherwise). */
export class ConnectorRegistry {
  readonly #byId = new Map<string, ConnectorDefinition>();

  constructor(definitions: readonly ConnectorDefinition[]) {
    for (const definition of definitions) {
      if (this.#byId.has(definition.id)) throw new Error(`Two connectors have the id ${definition.id}.`);
      this.#byId.set(definition.id, definition);
    }
  }

  get(id: string): ConnectorDefinition | undefined {
    return this.#byId.get(id);
  }

  /** Every connector's id, in the order given. */
  get ids(): string[] {
    return [...this.#byId.keys()];
  }

  /** The stats of every connector that keeps state (for /metrics). */
  stats(): Map<string, ConnectorStats> {
    const all = new Map<string, ConnectorStats>();
    for (const [id, definition] of this.#byId) {
      const stats = definition.stats?.();
      if (stats) all.set(id, stats);
    }
    return all;
  }

  /** Every connector's secret config fields (log redaction is derived from them). */
  get secretFields(): string[] {
    return [...new Set([...this.#byId.values()].flatMap((definition) => definition.secretFields))];
  }
}

/** The connectors Interchange ships, with their settings: a new connector is its own folder and one line here. */
export function builtInConnectors(config: Config): ConnectorDefinition[] {
  return [
    graphqlConnector({ schemaCacheBytes: config.graphqlSchemaCacheMb * 1024 * 1024 }),
    soapConnector({ wsdlCacheSize: config.wsdlCacheSize, wsdlCacheTtlMs: config.wsdlCacheTtlSeconds * 1000 }),
  ];
}
