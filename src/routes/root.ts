import type { FastifyInstance } from 'fastify';
import type { Config } from '../config/config.ts';
import { packageVersion } from '../core/version.ts';
import { ok } from '../http/envelope.ts';

/** Where the metrics are on the API's port (without METRICS_PORT). */
export const metricsPath = '/metrics';

/** The paths a person or a client starts from (README: Quick start); /metrics only when it is served here. */
export function entryPaths(config: Pick<Config, 'metricsPort'>) {
  return {
    api: '/api/v1',
    console: '/console',
    docs: '/docs',
    openapi: '/api/v1/openapi.json',
    health: '/healthz',
    ready: '/readyz',
    ...(config.metricsPort === undefined && { metrics: metricsPath }),
  };
}

/**
 * `GET /`: a browser is sent to the console; anything else gets the entry points as JSON, so that whoever lands on the
 * service's address learns where to go instead of a 404.
 */
export function registerRootRoute(app: FastifyInstance, config: Config): void {
  const links = entryPaths(config);
  app.get('/', { schema: { hide: true } }, async (request, reply) => {
    const accept = String(request.headers.accept ?? '');
    if (/\btext\/html\b/.test(accept)) return reply.redirect('/console', 302);
    return ok({ name: 'Interchange', version: packageVersion(), links });
  });
}
