import { packageVersion as version } from '../core/version.ts';
import { type CliIo, helpFooter, processIo, splitName, UsageError } from './io.ts';
import { reportFailure } from './report.ts';

const usage = `usage: interchange <command> [options]

  serve                                   run the HTTP server (HOST, PORT, DATABASE_URL, …)
  migrate                                 apply pending migrations
  doctor                                  check the configuration, database, Redis and master key
  tenants create <tenant_id> [--name N] [--type production|sandbox|staging|development]
  tenants list
  keys create --tenant T --scopes a,b [--name N] [--expires-at ISO] [--rate-limit N]
  keys import --tenant T --key ix_prod_… --scopes a,b [--name N]
  keys list --tenant T
  keys revoke <key_id>
  keys rotate <key_id> [--overlap-seconds N]
  integrations list --tenant T
  executions list --tenant T [--integration I] [--status succeeded|failed] [--limit N]
  executions cancel <execution_id> --tenant T
  webhooks list --tenant T
  webhooks create --tenant T --url U [--events a,b] [--description D]
  webhooks delete <webhook_id> --tenant T
  users create <email> [--name N] --password-stdin
  users list
  users grant <email> --tenant T --role owner|admin|developer|viewer
  users revoke <email> --tenant T
  signing-keys rotate                     sign access tokens with a new key (nobody is signed out)
  audit list --tenant T [--action A] [--actor ID] [--target ID] [--since TIME] [--until TIME] [--limit N]

${helpFooter}
interchange <command> --help describes a command; interchange --version prints the version.`;

type Command = (args: string[], io: CliIo) => Promise<number>;

// Each group is loaded only when it runs: `tenants list` does not load what `integrations list` or `doctor` need.
const commands: Record<string, () => Promise<Command>> = {
  serve: async () => (await import('./serve.ts')).serveCommand,
  migrate: async () => (await import('./migrate.ts')).migrateCommand,
  doctor: async () => (await import('./doctor.ts')).doctorCommand,
  tenants: async () => (await import('./tenants.ts')).tenantsCommand,
  keys: async () => (await import('./keys.ts')).keysCommand,
  integrations: async () => (await import('./integrations.ts')).integrationsCommand,
  executions: async () => (await import('./executions.ts')).executionsCommand,
  webhooks: async () => (await import('./webhooks.ts')).webhooksCommand,
  users: async () => (await import('./users.ts')).usersCommand,
  'signing-keys': async () => (await import('./signing-keys.ts')).signingKeysCommand,
  audit: async () => (await import('./audit.ts')).auditCommand,
};

/** `--json` before any `--`: failures are then reported as one JSON object. */
function jsonRequested(argv: readonly string[]): boolean {
  const end = argv.indexOf('--');
  return (end === -1 ? argv : argv.slice(0, end)).includes('--json');
}

/** Runs one CLI command; returns its exit code. `serve` never returns: its process ends on SIGTERM/SIGINT. */
export async function runCli(argv: string[], io: CliIo = processIo): Promise<number> {
  // After `--` every word is an argument: `interchange -- --help` names a command, and there is none of that name.
  const { name: command, rest: args, optionsEnded } = splitName(argv);
  try {
    if (command === undefined) throw new UsageError('a command is required', usage);
    if (command === 'help' || (!optionsEnded && (command === '--help' || command === '-h'))) {
      io.out(usage);
      return 0;
    }
    if (command === '--version' && !optionsEnded) {
      io.out(jsonRequested(args) ? JSON.stringify({ version: version() }) : version());
      return 0;
    }
    const load = Object.hasOwn(commands, command) ? commands[command] : undefined;
    if (load === undefined) throw new UsageError(`unknown command ${command}`, usage);
    return await (await load())(args, io);
  } catch (error) {
    return reportFailure(error, io, jsonRequested(argv));
  }
}
