import type { FastifyInstance } from 'fastify';
import { caller } from '../auth/authenticate.ts';
import type { CatalogEntry } from '../connectors/catalog.ts';
import { validationFailed } from '../core/errors.ts';
import type { CatalogService } from '../execution/catalog-service.ts';
import { okList } from '../http/envelope.ts';
import { decodeCursor, toPage } from '../storage/pagination.ts';
import { failures, idParams, pageQuery, reply, security, tenantFailures } from './schemas.ts';

/**
 * GET /integrations/{id}/operations (docs/catalog.md, docs/catalog.md): the integration's operation catalogue, typed, in
 * pages. Read as a call reads the upstream's description (the WSDL, the GraphQL schema), then kept a minute.
 */
export function registerIntegrationOperationsRoute(app: FastifyInstance, catalog: CatalogService): void {
  app.get<{ Params: { id: string }; Querystring: { limit: number; cursor?: string } }>(
    '/api/v1/integrations/:id/operations',
    {
      config: { scope: 'integrations.read' },
      schema: {
        tags: ['Integrations'],
        security,
        operationId: 'listIntegrationOperations',
        summary: "The integration's operations with JSON Schemas of what each takes and answers (raw SOAP: none).",
        params: idParams('id'),
        querystring: { type: 'object', additionalProperties: false, properties: pageQuery },
        response: {
          200: reply('CatalogEntryListReply', 'A page of operations, in catalogue order.'),
          ...failures([...tenantFailures, 404, 422, 502, 504], {
            404: 'No such integration in this tenant.',
            422: '`integration_misconfigured` or `egress_denied`: the integration cannot reach its upstream.',
            502: "The upstream's description (the WSDL, the GraphQL schema) could not be read.",
          }),
        },
      },
    },
    async (request) => {
      const entries = await catalog.entries(caller(request).tenantId, request.params.id);
      const page = pageOf(entries, request.query.limit, request.query.cursor);
      return okList(page.items, page.nextCursor);
    },
  );
}

/** A page of entries after the one the cursor names (its name): a cursor naming no entry is refused, not restarted. */
function pageOf(entries: CatalogEntry[], limit: number, cursor: string | undefined) {
  const after = decodeCursor(cursor);
  const start = after === undefined ? 0 : entries.findIndex((entry) => entry.name === after) + 1;
  if (after !== undefined && start === 0) {
    throw validationFailed(
      [{ path: 'cursor', message: 'names no operation of the integration now (its catalogue changed); list from the start' }],
      'cursor: the catalogue changed since this cursor was given.',
    );
  }
  return toPage(entries.slice(start, start + limit + 1), limit, (entry) => entry.name);
}
