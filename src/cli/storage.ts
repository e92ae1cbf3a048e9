import { type Config, loadConfig } from '../config/config.ts';
import { ApiError } from '../core/errors.ts';
import { type Db, migrate, openStorage, type Storage } from '../storage/database.ts';
import type { Page } from '../storage/pagination.ts';
import { findTenant, type Tenant } from '../storage/tenants.ts';
import { type CliIo, UsageError } from './io.ts';

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

/** The tenant named by `--tenant`: a usage error when the option is missing, `not_found` when no such tenant. */
export async function tenantOrFail(db: Db, id: string | undefined): Promise<Tenant> {
  if (!id) throw new UsageError('--tenant is required');
  const tenant = await findTenant(db, id);
  if (!tenant) throw new ApiError('not_found', `No tenant ${id}.`);
  return tenant;
}

/** Every item of a paginated listing, page after page, up to `max`. */
export async function collectPages<T>(
  max: number,
  read: (limit: number, cursor: string | undefined) => Promise<Page<T>>,
): Promise<T[]> {
  const all: T[] = [];
  let cursor: string | undefined;
  do {
    const page = await read(Math.min(100, max - all.length), cursor);
    all.push(...page.items);
    cursor = page.nextCursor ?? undefined;
  } while (cursor && all.length < max);
  return all;
}
