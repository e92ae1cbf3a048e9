import { ConfigError, loadConfig } from '../config.ts';
import { ApiError } from '../errors.ts';
import { migrate, openStorage } from '../storage/database.ts';
import { type CliIo, processIo, UsageError } from './io.ts';
import { keysCommand } from './keys.ts';
import { tenantsCommand } from './tenants.ts';

const usage = `usage: interchange <command> [options]

  serve                                   run the HTTP server (HOST, PORT, DATABASE_URL, …)
  migrate                                 apply pending migrations
  tenants create <tenant_id> [--name N] [--type production|sandbox|staging|development]
  tenants list
  keys create --tenant T --scopes a,b [--name N] [--expires-at ISO] [--rate-limit N]
  keys import --tenant T --key ix_prod_… --scopes a,b [--name N]
  keys list --tenant T
  keys revoke <key_id>
  keys rotate <key_id> [--overlap-seconds N]

Every command takes --json (one JSON object on stdout). Exit 0 ok, 1 runtime error, 2 usage error.`;

async function migrateCommand(args: string[], io: CliIo): Promise<number> {
  const json = args.includes('--json');
  if (args.some((a) => a !== '--json')) throw new UsageError('usage: interchange migrate [--json]');
  const storage = openStorage(loadConfig(io.env).databaseUrl);
  try {
    const applied = await migrate(storage);
    io.out(json ? JSON.stringify({ applied }) : applied.length ? `applied ${applied.join(', ')}` : 'up to date');
  } finally {
    await storage.close();
  }
  return 0;
}

/** Never resolves: the server's SIGTERM/SIGINT handler ends the process once it has shut down. */
async function serveCommand(args: string[], io: CliIo): Promise<number> {
  if (args.length > 0) throw new UsageError('usage: interchange serve (configured by environment variables)');
  const config = loadConfig(io.env);
  // Imported here, not at the top, so that the other commands do not pay for loading Fastify.
  const { startServer } = await import('../server.ts');
  await startServer(config);
  return new Promise<number>(() => {});
}

/** Runs one CLI command; returns its exit code. `serve` never returns: its process ends on SIGTERM/SIGINT. */
export async function runCli(argv: string[], io: CliIo = processIo): Promise<number> {
  const [command, ...args] = argv;
  try {
    switch (command) {
      case 'serve':
        return await serveCommand(args, io);
      case 'migrate':
        return await migrateCommand(args, io);
      case 'tenants':
        return await tenantsCommand(args, io);
      case 'keys':
        return await keysCommand(args, io);
      case undefined:
        throw new UsageError(usage);
      case 'help':
      case '--help':
        io.out(usage);
        return 0;
      default:
        throw new UsageError(`unknown command ${command}\n${usage}`);
    }
  } catch (error) {
    return report(error, io);
  }
}

function report(error: unknown, io: CliIo): number {
  if (error instanceof UsageError || (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
    io.err((error as Error).message);
    return 2;
  }
  if (error instanceof ApiError) {
    const issues = (error.details?.issues as Array<{ path: string; message: string }> | undefined) ?? [];
    // A single issue is the message already (see validationFailed): say it once.
    const lines = issues.map((i) => `${i.path}: ${i.message}`).filter((line) => line !== error.message);
    io.err([error.message, ...lines.map((line) => `  ${line}`)].join('\n'));
    return error.code === 'validation_failed' ? 2 : 1;
  }
  if (error instanceof ConfigError) {
    io.err(error.message);
    return 2;
  }
  io.err(`error: ${(error as Error).message ?? String(error)}`);
  return 1;
}
