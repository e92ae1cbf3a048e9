import { createServer, type Server } from 'node:http';
import type { FastifyInstance } from 'fastify';
import { build } from './app.ts';
import type { Config } from './config.ts';

export interface RunningServer {
  app: FastifyInstance;
  url: string;
  close(): Promise<void>;
}

/** Builds the app and listens; SIGTERM/SIGINT close it gracefully (in-flight requests finish, usage is flushed). */
export async function startServer(config: Config): Promise<RunningServer> {
  const app = await build(config);
  const url = await app.listen({ host: config.host, port: config.port });
  let metricsServer: Server | undefined;
  if (config.metricsPort !== undefined) metricsServer = await listenMetrics(app, config);

  let closing: Promise<void> | undefined;
  const close = () => {
    closing ??= (async () => {
      metricsServer?.close();
      await app.close();
    })();
    return closing;
  };
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.once(signal, () => {
      app.log.info({ signal }, 'shutting down');
      close().then(
        () => process.exit(0),
        (error) => {
          app.log.error({ err: error }, 'shutdown failed');
          process.exit(1);
        },
      );
    });
  }
  return { app, url, close };
}

/** METRICS_PORT: /metrics (any path) on its own port, so it need not be exposed with the API. */
async function listenMetrics(app: FastifyInstance, config: Config): Promise<Server> {
  const server = createServer(async (_req, res) => {
    res.writeHead(200, { 'content-type': app.metrics.contentType });
    res.end(await app.metrics.metrics());
  });
  await new Promise<void>((resolve) => server.listen(config.metricsPort, config.host, resolve));
  return server;
}
