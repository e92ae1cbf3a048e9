import { createServer, type Server } from 'node:http';
import type { FastifyInstance } from 'fastify';
import { build } from './app.ts';
import { type Config, sqlitePath } from './config/config.ts';
import { displayUrl } from './core/display-url.ts';
import { packageVersion as version } from './core/version.ts';
import { entryPaths, metricsPath } from './routes/root.ts';
import { describeMasterKeySource, type MasterKeySource } from './secrets/master-key.ts';

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
    // The metrics port first, so that the first line logged (Fastify's, for each address listened on) can name it.
    if (config.metricsPort !== undefined)
      metricsServer = await listenMetrics(app, config).catch(listenError(config, 'METRICS_PORT', config.metricsPort));
    const metricsUrl = metricsUrlOf(config, metricsServer);
    url = await app
      .listen({ host: config.host, port: config.port, listenTextResolver: (address) => listeningText(address, metricsUrl) })
      .catch(listenError(config, 'PORT', config.port));
  } catch (error) {
    // The app holds the pg pool, the Redis client and the usage timer: left open, they would keep
    // the process alive (with Redis, for ever) after the start failed, e.g. on EADDRINUSE.
    metricsServer?.close();
    await app.close();
    throw error;
  }
  app.log.info(startupSummary(app, config, url, metricsServer), `Interchange ${version()} started`);

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

/**
 * A port that cannot be listened on, in words that name the settings; the code (EADDRINUSE, EACCES) stays in the
 * message, for whoever retries on another port. A runtime error (exit 1): the values are well-formed.
 */
function listenError(config: Config, portVariable: string, port: number | undefined) {
  return (error: NodeJS.ErrnoException): never => {
    const reasons: Record<string, string> = {
      EADDRINUSE: 'the port is in use',
      EACCES: 'permission denied (ports below 1024 need privileges)',
      EADDRNOTAVAIL: 'no such address on this machine',
      ENOTFOUND: 'host name not found',
    };
    const reason = (error.code && reasons[error.code]) ?? error.message;
    throw new Error(`cannot listen on ${config.host}:${port} (HOST, ${portVariable}): ${reason} (${error.code ?? 'error'})`, {
      cause: error,
    });
  };
}

/** The start-up summary's fields: where it listens, what it stores in and talks to, never a password. */
/** Where /metrics is served when it has a port of its own (METRICS_PORT). */
function metricsUrlOf(config: Config, metricsServer: Server | undefined): string | undefined {
  const address = metricsServer?.address();
  return address && typeof address === 'object' ? `http://${config.host}:${address.port}/metrics` : undefined;
}

/**
 * The first line the service logs, once for each address it listens on: where the API, the console, the docs and the
 * metrics are (README: Quick start).
 *
 * @example
 * listeningText('http://127.0.0.1:8080', undefined);
 * // 'Interchange 0.1.0 listening on http://127.0.0.1:8080: API …/api/v1, console …/console, docs …/docs, metrics …/metrics'
 */
export function listeningText(address: string, metricsUrl: string | undefined): string {
  const links = entryPaths({ metricsPort: undefined });
  return (
    `Interchange ${version()} listening on ${address}: API ${address}${links.api}, console ${address}${links.console}, ` +
    `docs ${address}${links.docs}, metrics ${metricsUrl ?? `${address}${metricsPath}`}`
  );
}

function startupSummary(app: FastifyInstance, config: Config, url: string, metricsServer: Server | undefined) {
  const postgres = !config.databaseUrl.startsWith('sqlite:');
  const metricsUrl = metricsUrlOf(config, metricsServer);
  const masterKey = app.getDecorator<MasterKeySource>('masterKeySource');
  return {
    version: version(),
    url,
    ...(metricsUrl && { metricsUrl }),
    storage: postgres ? 'postgres' : 'sqlite',
    database: postgres ? displayUrl(config.databaseUrl) : sqlitePath(config.databaseUrl),
    redis: config.redisUrl ? displayUrl(config.redisUrl) : 'none (rate limits are kept per instance)',
    masterKey: describeMasterKeySource(masterKey),
  };
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
