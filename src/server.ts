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
  let url: string;
  let metricsServer: Server | undefined;
  try {
    url = await app.listen({ host: config.host, port: config.port });
    if (config.metricsPort !== undefined) metricsServer = await listenMetrics(app, config);
  } catch (error) {
    // The app holds the pg pool, the Redis client and the usage timer: left open, they would keep
    // the process alive (with Redis, for ever) after the start failed, e.g. on EADDRINUSE.
    await app.close();
    throw error;
  }

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
  // A port in use rejects (and the caller closes the app) rather than crashing on an unhandled 'error'.
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.metricsPort, config.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return server;
}
