import type { FastifyInstance } from 'fastify';
import type { Registry } from 'prom-client';
import type { AppContext } from '../context.ts';
import { ok } from '../http/envelope.ts';
import { isReachable } from '../storage/database.ts';
import { failures, ref, reply } from './schemas.ts';

const tags = ['Health'];

/**
 * The document's `servers`: `/`, which a client resolves against the URL it fetched the document from. An instance
 * does not know the origin it is reached at (behind a load balancer, a proxy, several instances under one name), so
 * an absolute URL would be a guess; every path in the document starts at the origin's root (`/api/v1/…`). OpenAPI
 * reads a document without `servers` the same way (the /docs viewer's copy has none); said outright, it is there for
 * the tools that look for it.
 */
const servers = [{ url: '/', description: 'This instance: the origin that served this document.' }];

export function registerHealthRoutes(app: FastifyInstance, ctx: AppContext, metrics: Registry): void {
  app.get(
    '/healthz',
    {
      schema: {
        tags,
        operationId: 'getHealth',
        summary: 'The process is up.',
        response: { 200: reply('HealthReply', 'Up.'), ...failures([500, 503]) },
      },
    },
    async () => ok({ status: 'ok' }),
  );

  // A probe, not an API call: 503 with the same data shape when storage does not answer.
  app.get(
    '/readyz',
    {
      schema: {
        tags,
        operationId: 'getReadiness',
        summary: 'Storage answers and holds nothing back (503 when it does not).',
        response: {
          200: reply('ReadinessReply', 'Storage answers.'),
          503: {
            description: 'Storage does not answer (`data.status: "unavailable"`), or this instance is shutting down (`Error`).',
            oneOf: [ref('ReadinessReply'), ref('Error')],
          },
          ...failures([500]),
        },
      },
    },
    async (_request, reply) => {
      // Not ready while storage does not answer, nor while writes it refused are still held (they drain within a
      // probe's 250 ms of its return; executes are refused until then: docs/execute.md#when-storage-fails).
      const ready = (await isReachable(ctx.storage)) && ctx.storageHealth.held === 0;
      reply.code(ready ? 200 : 503);
      return { success: ready, data: { status: ready ? 'ready' : 'unavailable', storage: ctx.storage.kind } };
    },
  );

  if (ctx.config.metricsPort === undefined) {
    app.get(
      '/metrics',
      {
        schema: {
          tags,
          operationId: 'getMetrics',
          summary: 'Prometheus metrics (served on METRICS_PORT instead when that is set).',
          response: {
            200: {
              description: 'The Prometheus text exposition format.',
              content: { [metrics.contentType]: { schema: { type: 'string' } } },
            },
            ...failures([500, 503]),
          },
        },
      },
      async (_request, reply) => {
        reply.type(metrics.contentType);
        return metrics.metrics();
      },
    );
  }

  app.get('/api/v1/openapi.json', { schema: { hide: true } }, async () => ({ ...app.swagger(), servers }));
}
