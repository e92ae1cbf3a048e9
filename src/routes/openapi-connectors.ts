import type { Operation } from '../connectors/connector.ts';
import type { ConnectorRegistry } from '../connectors/registry.ts';
import { connectorComponent, type Schema } from './openapi-components.ts';
import { fields, operationBody, operationComponent, primitiveBody } from './openapi-execute-body.ts';
import { configInput, putBranch } from './openapi-integration-bodies.ts';
import { integrationOf, unlistedIntegration } from './openapi-integration-views.ts';
import { ref } from './schemas.ts';

/**
 * The shapes that depend on the registered connectors, for the OpenAPI document: an integration (its `config`) and an
 * execute request, per connector. The routes' validators stay loose (`connector`/`operation` and an object); the
 * connector's own schemas check the fields at run time, and these describe the same schemas to a client. Their names
 * are in openapi-components.ts; an integration in openapi-integration-bodies.ts (PUT, PATCH) and
 * openapi-integration-views.ts (replies); the execute body in openapi-execute-body.ts.
 */

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
