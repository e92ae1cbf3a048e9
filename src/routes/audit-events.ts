import type { FastifyInstance } from 'fastify';
import { auditActions } from '../audit/audit-log.ts';
import { caller } from '../auth/authenticate.ts';
import type { AppContext } from '../context.ts';
import { validationFailed } from '../core/errors.ts';
import { okList } from '../http/envelope.ts';
import { listAuditEvents } from '../storage/audit-events.ts';
import { failures, objectId, pageQuery, reply, security, tenantFailures } from './schemas.ts';

const tags = ['Audit log'];

interface AuditQuerystring {
  action?: string;
  actor_id?: string;
  target_id?: string;
  since?: string;
  until?: string;
  limit: number;
  cursor?: string;
}

export function registerAuditRoutes(app: FastifyInstance, ctx: AppContext): void {
  app.get<{ Querystring: AuditQuerystring }>(
    '/api/v1/audit-events',
    {
      config: { scope: 'audit.read' },
      schema: {
        tags,
        security,
        operationId: 'listAuditEvents',
        summary: "This tenant's audit log, newest first: who changed what, from where. Append-only.",
        querystring: {
          type: 'object',
          additionalProperties: false,
          properties: {
            action: { type: 'string', enum: [...auditActions], description: 'Only events of this action.' },
            actor_id: { ...objectId, description: 'Only changes by this key, user, CLI account or service part.' },
            target_id: { ...objectId, description: 'Only changes to this object (an integration id, a key id, …).' },
            since: { type: 'string', format: 'date-time', description: 'Only events at or after this time.' },
            until: { type: 'string', format: 'date-time', description: 'Only events before this time.' },
            ...pageQuery,
          },
        },
        response: { 200: reply('AuditEventListReply', 'A page of audit events.'), ...failures(tenantFailures) },
      },
    },
    async (request) => {
      const { since, until } = request.query;
      if (since !== undefined && until !== undefined && Date.parse(since) > Date.parse(until)) {
        throw validationFailed([{ path: 'until', message: 'must not be before since' }]);
      }
      const page = await listAuditEvents(ctx.storage.db, caller(request).tenantId, request.query);
      return okList(page.items, page.nextCursor);
    },
  );
}
