import type { FastifyInstance } from 'fastify';
import { caller } from '../auth/authenticate.ts';
import type { AppContext } from '../context.ts';
import { ApiError } from '../core/errors.ts';
import type { ExecutionService } from '../execution/service.ts';
import { ok, okList } from '../http/envelope.ts';
import { findExecution, findShownExecution, listExecutions } from '../storage/executions.ts';
import { failures, idParams, objectId, pageQuery, reply, security, tenantFailures } from './schemas.ts';

const tags = ['Executions'];

export function registerExecutionRoutes(app: FastifyInstance, ctx: AppContext, service: ExecutionService): void {
  app.get<{ Querystring: { integration_id?: string; status?: string; limit: number; cursor?: string } }>(
    '/api/v1/executions',
    {
      config: { scope: 'executions.read' },
      schema: {
        tags,
        security,
        operationId: 'listExecutions',
        summary: 'The execute calls of this tenant, newest first; request bodies are never stored.',
        querystring: {
          type: 'object',
          additionalProperties: false,
          properties: {
            integration_id: objectId,
            status: { type: 'string', enum: ['queued', 'running', 'succeeded', 'failed', 'canceled'] },
            ...pageQuery,
          },
        },
        response: { 200: reply('ExecutionListReply', 'A page of execute calls.'), ...failures(tenantFailures) },
      },
    },
    async (request) => {
      // This instance's executions not yet written are written first: a caller always sees its own.
      await ctx.executions.flush();
      const page = await listExecutions(ctx.storage.db, caller(request).tenantId, request.query);
      return okList(page.items, page.nextCursor);
    },
  );

  app.get<{ Params: { id: string } }>(
    '/api/v1/executions/:id',
    {
      config: { scope: 'executions.read' },
      schema: {
        tags,
        security,
        operationId: 'getExecution',
        summary: 'One execute call; an async one with its `result`.',
        params: idParams('id'),
        response: {
          200: reply('ExecutionReply', 'The execute call.'),
          ...failures([...tenantFailures, 404], { 404: 'No such execution in this tenant.' }),
        },
      },
    },
    async (request) => {
      await ctx.executions.flush();
      const execution = await findExecution(ctx.storage.db, caller(request).tenantId, request.params.id);
      if (!execution) throw new ApiError('not_found', `No execution ${request.params.id}.`);
      return ok(execution);
    },
  );

  app.post<{ Params: { id: string } }>(
    '/api/v1/executions/:id/cancel',
    {
      config: { scope: 'integrations.execute' },
      schema: {
        tags,
        security,
        operationId: 'cancelExecution',
        summary: 'Cancels a queued async execution; a running or finished one cannot be (409).',
        params: idParams('id'),
        response: {
          200: reply('ExecutionCanceledReply', 'The execution, canceled.'),
          ...failures([...tenantFailures, 404, 409], {
            404: 'No such execution in this tenant.',
            409: '`conflict`: the execution is running or finished (`details.status`).',
          }),
        },
      },
    },
    async (request) => {
      const { tenantId } = caller(request);
      const canceled = await service.cancel(tenantId, request.params.id);
      // As a read shows it, with its caller's name (a canceled execution does not change again).
      const shown = await findShownExecution(ctx.storage.db, tenantId, canceled.id);
      if (!shown) throw new ApiError('not_found', `No execution ${canceled.id}.`);
      return ok(shown);
    },
  );
}
