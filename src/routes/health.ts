import type { FastifyInstance } from 'fastify';
import type { Registry } from 'prom-client';
import type { AppContext } from '../context.ts';
import { ok } from '../http/envelope.ts';
import { isReachable } from '../storage/database.ts';

const tags = ['Health'];

export function registerHealthRoutes(app: FastifyInstance, ctx: AppContext, metrics: Registry): void {
  app.get('/healthz', { schema: { tags, summary: 'The process is up.' } }, async () => ok({ status: 'ok' }));

  // A probe, not an API call: 503 with the same data shape when storage does not answer.
  app.get('/readyz', { schema: { tags, summary: 'Storage answers (503 when it does not).' } }, async (_request, reply) => {
    const ready = await isReachable(ctx.storage);
    reply.code(ready ? 200 : 503);
    return { success: ready, data: { status: ready ? 'ready' : 'unavailable', storage: ctx.storage.kind } };
  });

  if (ctx.config.metricsPort === undefined) {
    app.get('/metrics', { schema: { hide: true } }, async (_request, reply) => {
      reply.type(metrics.contentType);
      return metrics.metrics();
    });
  }

  app.get('/api/v1/openapi.json', { schema: { hide: true } }, async () => app.swagger());
}
