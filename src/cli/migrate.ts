import { loadConfig } from '../config/config.ts';
import { migrate, openStorage } from '../storage/database.ts';
import { type CliIo, onlyJsonOption, wantsHelp } from './io.ts';

/** `interchange migrate --help`. */
export const migrateUsage = `usage: interchange migrate

  Applies the pending migrations to DATABASE_URL, each once (several at once are safe); prints what it applied.`;

/** `migrate`: prints the migrations it applied, `{"applied": [...]}` with --json. */
export async function migrateCommand(args: string[], io: CliIo): Promise<number> {
  if (wantsHelp(args)) {
    io.out(migrateUsage);
    return 0;
  }
  const asJson = onlyJsonOption(args, 'usage: interchange migrate [--json]');
  const storage = openStorage(loadConfig(io.env).databaseUrl);
  try {
    const applied = await migrate(storage);
    io.out(asJson ? JSON.stringify({ applied }) : applied.length ? `applied ${applied.join(', ')}` : 'up to date');
  } finally {
    await storage.close();
  }
  return 0;
}
