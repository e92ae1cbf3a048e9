import { loadConfig } from '../config/config.ts';
import { type CliIo, onlyJsonOption, wantsHelp } from './io.ts';

/** `interchange serve --help`. */
export const serveUsage = `usage: interchange serve

  Runs the HTTP server, configured by environment variables: HOST (127.0.0.1), PORT (8080),
  DATABASE_URL (sqlite:./data/interchange.db, or postgres://…), REDIS_URL, IX_MASTER_KEY, LOG_LEVEL, …
  (README: Configuration). Migrations run at start. SIGTERM or SIGINT shuts it down gracefully.
  --json: a failure to start is reported as one JSON object on stderr.`;

/** Never resolves: the server's SIGTERM/SIGINT handler ends the process once it has shut down. */
export async function serveCommand(args: string[], io: CliIo): Promise<number> {
  if (wantsHelp(args)) {
    io.out(serveUsage);
    return 0;
  }
  onlyJsonOption(args, 'usage: interchange serve (configured by environment variables)');
  const config = loadConfig(io.env);
  // Imported here, not at the top, so that the other commands do not pay for loading Fastify.
  const { startServer } = await import('../server.ts');
  await startServer(config);
  return new Promise<number>(() => {});
}
