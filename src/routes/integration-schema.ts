import type { FastifyInstance } from 'fastify';
import { caller } from '../auth/authenticate.ts';
import type { ExecutionService } from '../execution/service.ts';
import { ok } from '../http/envelope.ts';
import { failures, idParams, reply, security, tenantFailures } from './schemas.ts';

/**
 * GET /integrations/{id}/schema (docs/api.md): the upstream's schema as the integration's connector knows it, read by
 * introspection on first use and cached (docs/execute.md#schema-aware-checking). The console's try-it-out checks and
 * completes documents with it.
 */
export function registerIntegrationSchemaRoute(app: FastifyInstance, service: ExecutionService): void {
  app.get<{ Params: { id: string } }>(
    '/api/v1/integrations/:id/schema',
    {
      config: { scope: 'integrations.read' },
      schema: {
        tags: ['Integrations'],
        security,
        operationId: 'getIntegrationSchema',
        summary: "The upstream's schema (GraphQL SDL).",
        params: idParams('id'),
        response: {
          200: reply(
            'IntegrationSchemaReply',
            'The schema, or `available: false` with the reason (the upstream refused introspection, its answer was over 5 MiB).',
          ),
          ...failures([...tenantFailures, 404, 422, 502, 504], {
            400: '`unsupported_operation`: the connector has no schema (SOAP); or `missing_tenant`.',
            404: 'No such integration in this tenant.',
            422: '`integration_misconfigured` or `egress_denied`: the integration cannot reach its upstream.',
            502: 'The upstream could not be reached (`upstream_unreachable`) to read its schema.',
          }),
        },
      },
    },
    async (request) => ok(await service.schema(caller(request).tenantId, request.params.id)),
  );
}
