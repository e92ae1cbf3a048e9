import { randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type Config, ConfigError } from '../config.ts';
import type { Storage } from '../storage/database.ts';

const keyBytes = 32;

function decode(text: string, source: string): Buffer {
  const key = Buffer.from(text.trim(), 'base64');
  if (key.length !== keyBytes) throw new ConfigError(`${source} must be base64 of exactly 32 bytes`);
  return key;
}

/**
 * The key that encrypts integration secrets: IX_MASTER_KEY when set; on SQLite without it, one
 * generated once into the database's folder (master.key, mode 0600); on PostgreSQL it is required,
 * since instances on other machines could not share a generated file.
 */
export function loadMasterKey(config: Config, storage: Storage): Buffer {
  if (config.masterKey) return decode(config.masterKey, 'IX_MASTER_KEY');
  if (storage.kind !== 'sqlite') throw new ConfigError('IX_MASTER_KEY is required with PostgreSQL');
  if (storage.dataDir === undefined) return randomBytes(keyBytes); // in-memory database: secrets die with it
  const path = join(storage.dataDir, 'master.key');
  try {
    writeFileSync(path, `${randomBytes(keyBytes).toString('base64')}\n`, { flag: 'wx', mode: 0o600 });
  } catch (error) {
    // Created already, by an earlier start or a process starting beside this one.
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  return decode(readFileSync(path, 'utf8'), path);
}
