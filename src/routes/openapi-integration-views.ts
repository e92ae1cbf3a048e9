import type { ConnectorDefinition } from '../connectors/connector.ts';
import type { ConnectorRegistry } from '../connectors/registry.ts';
import { credentialSchemes } from '../credentials/schemes.ts';
import { connectorComponent, type Schema, when } from './openapi-components.ts';
import { exact } from './schemas.ts';

/** An integration as a reply shows it, in the OpenAPI document: its connector's config, secrets only as `<field>_set`. */

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

/** An integration's `catalog` (docs/catalog.md, docs/catalog.md), every field shown at its value or default. */
export const catalogView: Schema = {
  type: 'object',
  description: 'The operation catalogue and AI agents (docs/catalog.md): every field at its value or its default.',
  additionalProperties: false,
  required: ['mcp', 'allow_writes', 'read_operations', 'documents', 'root_fields', 'descriptions'],
  properties: {
    mcp: { type: 'boolean', description: 'Offered as MCP tools at /api/v1/mcp.' },
    allow_writes: { type: 'boolean', description: 'Entries of kind `write` are offered as tools too.' },
    read_operations: { type: 'array', items: { type: 'string' }, description: 'Entry names that change nothing upstream.' },
    documents: {
      type: 'array',
      description: 'GraphQL: saved operations, each a catalogue entry.',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['name', 'document'],
        properties: { name: { type: 'string' }, document: { type: 'string' }, description: { type: 'string' } },
      },
    },
    root_fields: { type: 'boolean', description: 'GraphQL: every root Query and Mutation field is an entry too.' },
    descriptions: {
      type: 'object',
      additionalProperties: { type: 'string' },
      description: "An entry's description in place of the upstream's text, by entry name.",
    },
  },
};

/** An integration's fields in the order the reply has them (the serializer writes them in this order). */
function integrationProperties(connector: Schema, config: Schema): Schema {
  return {
    id: { type: 'string' },
    name: { type: 'string' },
    connector,
    config,
    catalog: catalogView,
    created_at: timestamp,
    updated_at: timestamp,
  };
}

/** The state of an integration's circuit breaker, which `GET /integrations/{id}` adds (docs/resilience.md). */
const circuit = {
  type: 'string',
  enum: ['closed', 'open', 'half_open'],
  description: "The integration's circuit breaker (docs/resilience.md#circuit-breaker): shown by GET /integrations/{id} only.",
};

/** An integration of one connector, as a reply shows it. */
export function integrationOf(definition: ConnectorDefinition): Schema {
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
export function unlistedIntegration(registry: ConnectorRegistry): Schema {
  return {
    $id: 'UnlistedIntegration',
    description: 'An integration whose connector this instance does not offer: its stored config, secrets left out.',
    ...exact(
      integrationProperties({ type: 'string', not: { enum: registry.ids } }, { type: 'object', additionalProperties: true }),
    ),
  };
}
