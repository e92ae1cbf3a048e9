import type { ConnectorDefinition } from '../connectors/connector.ts';
import type { ConnectorRegistry } from '../connectors/registry.ts';
import { componentsPath, connectorComponent, namedExamples, type Schema, when } from './openapi-components.ts';
import { ref } from './schemas.ts';

/** An integration's PUT and PATCH bodies in the OpenAPI document: the config of its connector, per connector. */

/** A connector's config as a PUT or PATCH sends it: its config properties, secrets write-only, defaults told. */
export function configInput(definition: ConnectorDefinition): Schema {
  const properties = Object.fromEntries(
    Object.entries(definition.configProperties).map(([field, schema]) => {
      const secret = definition.secretFields.includes(field);
      const documented: Schema = { ...structuredClone(schema) };
      if (secret) {
        documented.writeOnly = true;
        documented.description = `A secret: stored encrypted, never shown (\`${field}_set\` tells whether it is set); null or "" clears it.`;
      }
      if (field === 'auth') {
        documented.description =
          'The upstream credential, one scheme by `type`: `basic` (username, password), `bearer` (token), `header` (name, ' +
          'value), `oauth2_client_credentials` (token_url, client_id, client_secret, scope, audience, client_authentication). ' +
          'Secrets (password, token, value, client_secret) are write-only. A PATCH with the same `type` merges its fields (a secret ' +
          'left out is kept); another `type` replaces it. Refused beside the connector’s shorthand fields.';
      }
      if (definition.defaults[field] !== undefined) documented.default = definition.defaults[field];
      return [field, documented];
    }),
  );
  return {
    $id: connectorComponent('IntegrationConfig', definition.id),
    description: `${when(definition)} null unsets a field.`,
    type: 'object',
    additionalProperties: false,
    properties,
  };
}

/** A PUT body for one connector: the `oneOf` branch its `connector` value selects. */
export function putBranch(definition: ConnectorDefinition): Schema {
  return {
    $id: connectorComponent('IntegrationPut', definition.id),
    type: 'object',
    required: ['connector'],
    additionalProperties: false,
    properties: {
      name: { type: 'string', minLength: 1, maxLength: 200, description: 'The id when left out.' },
      connector: { type: 'string', enum: [definition.id] },
      config: ref(connectorComponent('IntegrationConfig', definition.id)),
    },
  };
}

/** The PUT body for the document: a `oneOf` discriminated by `connector`, each with that connector's config. */
export function integrationPutBody(registry: ConnectorRegistry): Schema {
  return {
    oneOf: registry.ids.map((id) => ref(connectorComponent('IntegrationPut', id))),
    discriminator: {
      propertyName: 'connector',
      mapping: Object.fromEntries(registry.ids.map((id) => [id, componentsPath + connectorComponent('IntegrationPut', id)])),
    },
    'x-examples': namedExamples({
      GraphQL: {
        name: 'Countries',
        connector: 'graphql-1.0.0',
        config: { base_url: 'https://graphql.example.com/api', token: 'upstream-token' },
      },
      'SOAP, WSDL mode': {
        connector: 'soap-1.0.0',
        config: {
          endpoint_url: 'https://soap.example.com/Calculator.asmx?wsdl',
          auth_header: 'X-Api-Token',
          auth_value: 'secret',
        },
      },
    }),
  };
}

/** The PATCH body for the document: the config fields of the integration's connector, merged. */
export function integrationPatchBody(registry: ConnectorRegistry): Schema {
  return {
    type: 'object',
    minProperties: 1,
    additionalProperties: false,
    properties: {
      name: { type: 'string', minLength: 1, maxLength: 200 },
      config: {
        description: 'Merged into the stored config: the fields of the integration’s connector.',
        anyOf: registry.ids.map((id) => ref(connectorComponent('IntegrationConfig', id))),
      },
    },
    examples: [
      { config: { timeout_seconds: 60 } },
      { name: 'CRM (EU)', config: { base_url: 'https://eu.crm.example.com', token: 'new-token' } },
    ],
  };
}
