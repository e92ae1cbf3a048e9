import type { ConnectorDefinition, Operation, PrimitiveOperation } from '../connectors/connector.ts';
import type { ConnectorRegistry } from '../connectors/registry.ts';
import { credentialSchemes } from '../credentials/schemes.ts';
import { batchSchema, syncSchema, testSchema } from '../execution/request-checks.ts';
import { exact, ref } from './schemas.ts';

/**
 * The shapes that depend on the registered connectors, for the OpenAPI document: an integration (its `config`) and an
 * execute request, per connector. The routes' validators stay loose (`connector`/`operation` and an object); the
 * connector's own schemas check the fields at run time, and these describe the same schemas to a client.
 */

type Schema = Record<string, unknown>;

const componentsPath = '#/components/schemas/';

/** A component name for a connector's shape: `Integration.graphql-1.0.0` (the characters a component name may hold). */
export function connectorComponent(kind: string, connectorId: string): string {
  return `${kind}.${connectorId.replace(/[^A-Za-z0-9._-]/g, '_')}`;
}

/** Named examples of a request body (@fastify/swagger puts `x-examples` on the media type as its `examples`). */
function namedExamples(examples: Record<string, object>): Record<string, { value: object }> {
  return Object.fromEntries(Object.entries(examples).map(([name, value]) => [name, { value }]));
}

const when = (definition: ConnectorDefinition) => `When the integration's connector is \`${definition.id}\`.`;

const operationComponent = {
  send: 'ExecuteSend',
  receive: 'ExecuteReceive',
  sync: 'ExecuteSync',
  batch: 'ExecuteBatch',
  test: 'ExecuteTest',
} as const;
const fieldsComponent = { send: 'SendFields', receive: 'ReceiveFields' } as const;

/** A connector's send or receive fields, as its request schema has them (a copy: the document must not share its objects). */
function fields(definition: ConnectorDefinition, operation: PrimitiveOperation): Schema {
  return {
    $id: connectorComponent(fieldsComponent[operation], definition.id),
    description: `The fields of a ${operation}. ${when(definition)}`,
    ...structuredClone(definition.requestSchemas[operation]),
  };
}

/** A send or receive body: the connector's fields beside `operation`. */
function primitiveBody(definition: ConnectorDefinition, operation: PrimitiveOperation): Schema {
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
function operationBody(operation: Operation, offering: ConnectorDefinition[]): Schema {
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

/** A connector's config as a PUT or PATCH sends it: its config properties, secrets write-only, defaults told. */
function configInput(definition: ConnectorDefinition): Schema {
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
function putBranch(definition: ConnectorDefinition): Schema {
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

/** `config.auth` as a reply shows it: the fields of its scheme, each secret only as `<field>_set`. */
function authView(): Schema {
  const properties: Schema = { type: { type: 'string' } };
  for (const scheme of credentialSchemes.values()) {
    for (const field of Object.keys(scheme.properties)) {
      if (scheme.secretFields.includes(field)) {
        properties[`${field}_set`] = { type: 'boolean', description: `Whether auth.${field} is set (never shown).` };
      } else {
        properties[field] = { type: ['string', 'null'] };
      }
    }
  }
  return {
    type: ['object', 'null'],
    description: 'The upstream credential: its scheme (`type`) and fields, secrets only as `<field>_set`.',
    properties,
  };
}

/** What a reply shows of a certificate instead of its PEM. */
const certificateFacts: Schema = {
  type: 'object',
  properties: {
    subject: { type: 'string' },
    issuer: { type: 'string' },
    not_after: { type: 'string', format: 'date-time' },
    fingerprint_sha256: { type: 'string' },
  },
};

/** `config.tls` as a reply shows it: each certificate's facts instead of its PEM, the key only as `_set`. */
const tlsView: Schema = {
  type: ['object', 'null'],
  description: 'The integration’s TLS settings: certificate facts instead of PEM; the key and its password only as `_set`.',
  properties: {
    ca: { type: ['array', 'null'], items: certificateFacts },
    client_certificate: { ...certificateFacts, type: ['object', 'null'] },
    server_name: { type: ['string', 'null'] },
    min_version: { type: 'string' },
    client_key_set: { type: 'boolean' },
    client_key_password_set: { type: 'boolean' },
  },
};

/** An object of the config (`tls`, `ws_security`) as a reply shows it: its fields, secrets only as `<field>_set`. */
function objectView(definition: ConnectorDefinition, path: string, schema: Schema): Schema {
  const properties: Schema = {};
  for (const [field, inner] of Object.entries(schema.properties as Schema) as [string, Schema][]) {
    if (definition.secretFields.includes(`${path}.${field}`)) {
      properties[`${field}_set`] = { type: 'boolean', description: `Whether ${path}.${field} is set (never shown).` };
    } else if (path === 'ws_security.signature' && field === 'certificate') {
      properties.certificate = { ...certificateFacts, type: ['object', 'null'] };
    } else if (inner.properties !== undefined) {
      properties[field] = objectView(definition, `${path}.${field}`, inner);
    } else {
      properties[field] =
        inner.type === undefined
          ? {}
          : { type: nullable(inner.type as string | string[]), ...(inner.items !== undefined && { items: inner.items }) };
    }
  }
  return { type: ['object', 'null'], properties };
}

function nullable(type: string | string[]): string[] {
  const types = Array.isArray(type) ? type : [type];
  return types.includes('null') ? types : [...types, 'null'];
}

/** The config as a reply shows it: every field (its default filled in), a secret only as `<field>_set`. */
function configView(definition: ConnectorDefinition): Schema {
  const properties: Schema = {};
  for (const [field, schema] of Object.entries(definition.configProperties) as [string, Schema][]) {
    if (definition.secretFields.includes(field)) {
      properties[`${field}_set`] = { type: 'boolean', description: `Whether ${field} is set (its value is never shown).` };
    } else if (field === 'auth') {
      properties.auth = authView();
    } else if (field === 'tls') {
      properties.tls = tlsView;
    } else if (schema.properties !== undefined) {
      properties[field] = objectView(definition, field, schema);
    } else if (schema.type === undefined) {
      properties[field] = {};
    } else {
      // Only the type: a reply is matched against these, and a constraint tightened since a value was stored must not fail it.
      const types = Array.isArray(schema.type) ? schema.type : [schema.type];
      properties[field] = { type: types.includes('null') ? types : [...types, 'null'] };
    }
  }
  return exact(properties);
}

const timestamp = { type: 'string', format: 'date-time' };

/** An integration's fields in the order the reply has them (the serializer writes them in this order). */
function integrationProperties(connector: Schema, config: Schema): Schema {
  return { id: { type: 'string' }, name: { type: 'string' }, connector, config, created_at: timestamp, updated_at: timestamp };
}

/** The state of an integration's circuit breaker, which `GET /integrations/{id}` adds (docs/resilience.md). */
const circuit = {
  type: 'string',
  enum: ['closed', 'open', 'half_open'],
  description: "The integration's circuit breaker (docs/resilience.md#circuit-breaker): shown by GET /integrations/{id} only.",
};

/** An integration of one connector, as a reply shows it. */
function integrationOf(definition: ConnectorDefinition): Schema {
  const shape = exact(integrationProperties({ type: 'string', enum: [definition.id] }, configView(definition)));
  return {
    $id: connectorComponent('Integration', definition.id),
    description: when(definition),
    ...shape,
    properties: { ...shape.properties, circuit },
  };
}

/**
 * An integration stored with a connector this instance no longer offers (the app was built with other connectors): its
 * stored config is shown as it is. Without this branch such a reply would match no shape and fail to serialize.
 */
function unlistedIntegration(registry: ConnectorRegistry): Schema {
  return {
    $id: 'UnlistedIntegration',
    description: 'An integration whose connector this instance does not offer: its stored config, secrets left out.',
    ...exact(
      integrationProperties({ type: 'string', not: { enum: registry.ids } }, { type: 'object', additionalProperties: true }),
    ),
  };
}

/** Every connector-dependent shared schema: the integration replies, and the request bodies' parts. */
export function connectorSchemas(registry: ConnectorRegistry): { integrations: Schema[]; requests: Schema[] } {
  const definitions = registry.ids.map((id) => registry.get(id)!);
  const offering = (op: Operation) => definitions.filter((d) => d.offers.includes(op));
  const integration = {
    $id: 'Integration',
    description:
      'An integration: its `config` is its connector’s, every field shown with its default, secrets only as `<field>_set`.',
    oneOf: [...definitions.map((d) => ref(connectorComponent('Integration', d.id))), ref('UnlistedIntegration')],
    examples: [
      {
        id: 'crm-graphql',
        name: 'CRM',
        connector: 'graphql-1.0.0',
        config: { base_url: 'https://crm.example.com/api', token_set: true, timeout_seconds: 30 },
        created_at: '2026-11-21T09:30:00.000Z',
        updated_at: '2026-11-21T09:30:00.000Z',
      },
    ],
  };
  const offered = (Object.keys(operationComponent) as Operation[]).filter((op) => offering(op).length > 0);
  return {
    integrations: [integration, ...definitions.map(integrationOf), unlistedIntegration(registry)],
    requests: [
      ...definitions.flatMap((d) => [configInput(d), putBranch(d)]),
      ...definitions.flatMap((d) => (['send', 'receive'] as const).map((op) => fields(d, op))),
      ...definitions.flatMap((d) =>
        (['send', 'receive'] as const).filter((op) => d.offers.includes(op)).map((op) => primitiveBody(d, op)),
      ),
      ...offered.map((op) => operationBody(op, offering(op))),
    ],
  };
}
