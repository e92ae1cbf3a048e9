import { type Config, loadConfig } from '../config.ts';
import { migrate, openStorage, type Storage } from '../storage/database.ts';
import type { CliIo } from './io.ts';

/** Opens (and migrates) the storage named by DATABASE_URL, runs `work`, and always closes it. */
export async function withStorage<T>(
  io: CliIo,
  work: (storage: Storage, defaultRateLimit: number, config: Config) => Promise<T>,
): Promise<T> {
  const config = loadConfig(io.env);
  const storage = openStorage(config.databaseUrl);
  try {
    await migrate(storage);
    return await work(storage, config.defaultRateLimit, config);
  } finally {
    await storage.close();
  }
}
