import type { FastifyInstance } from 'fastify';
import { caller } from '../auth/authenticate.ts';
import { type Operation, operations } from '../connectors/connector.ts';
import type { AppContext } from '../context.ts';
import { type ExecuteAnswer, ExecutionService } from '../execution/service.ts';
import { idParams, security } from './schemas.ts';

interface ExecuteBody {
  operation: Operation;
  [field: string]: unknown;
}

/** `Server-Timing` (W3C): the time spent on upstream requests and in Interchange, so a caller sees what the gateway costs. */
function serverTiming(answer: ExecuteAnswer): string {
  const ms = (value: number) => value.toFixed(1);
  return `upstream;dur=${ms(answer.upstreamMs)}, interchange;dur=${ms(Math.max(0, answer.totalMs - answer.upstreamMs))}, total;dur=${ms(answer.totalMs)}`;
}

/**
 * POST /integrations/{id}/execute: the execution service runs it (ExecutionService); Idempotency-Key is the
 * idempotency hooks' (`config.idempotent`), told by `request.reachedUpstream` whether a write got out.
 */
export function registerExecuteRoute(app: FastifyInstance, ctx: AppContext): void {
  const service = new ExecutionService(ctx);

  app.post<{ Params: { id: string }; Body: ExecuteBody }>(
    '/api/v1/integrations/:id/execute',
    {
      config: { scope: 'integrations.execute', idempotent: true },
      schema: {
        tags: ['Execute'],
        security,
        summary: 'Run send, receive, sync, batch or test through the integration’s connector.',
        params: idParams('id'),
        headers: { type: 'object', properties: { 'idempotency-key': { type: 'string', minLength: 1, maxLength: 255 } } },
        body: {
          type: 'object',
          required: ['operation'],
          properties: { operation: { type: 'string', enum: operations } },
          additionalProperties: true,
        },
      },
    },
    async (request, reply) => {
      const { tenantId, key } = caller(request);
      const { operation, ...fields } = request.body;
      const answer = await service.execute({
        tenantId,
        keyId: key.id,
        integrationId: request.params.id,
        operation,
        fields,
        requestId: request.id,
        log: request.log,
      });
      request.reachedUpstream = answer.reachedUpstream;
      return reply
        .code(answer.status)
        .header('server-timing', serverTiming(answer))
        .type('application/json; charset=utf-8')
        .send(answer.text);
    },
  );
}
