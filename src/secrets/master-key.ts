import { randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type Config, ConfigError, masterKeyBytes } from '../config/config.ts';
import type { Storage } from '../storage/database.ts';

/** Where the master key came from, for the start-up summary. */
export type MasterKeySource = { kind: 'environment' } | { kind: 'file'; path: string; created: boolean } | { kind: 'generated' };

export interface MasterKey {
  key: Buffer;
  source: MasterKeySource;
}

/** Whether `text` (a master.key's content) is base64 of a key of the right size. */
export function isMasterKeyText(text: string): boolean {
  return Buffer.from(text.trim(), 'base64').length === masterKeyBytes;
}

/** Where the key is kept beside a SQLite database whose folder is `dataDir`. */
export function masterKeyPath(dataDir: string): string {
  return join(dataDir, 'master.key');
}

/**
 * The key that encrypts integration secrets: IX_MASTER_KEY when set; on SQLite without it, one
 * generated once into the database's folder (master.key, mode 0600); on PostgreSQL it is required,
 * since instances on other machines could not share a generated file.
 */
export function loadMasterKey(config: Config, storage: Storage): MasterKey {
  // Its form was checked by loadConfig.
  if (config.masterKey) return { key: Buffer.from(config.masterKey.trim(), 'base64'), source: { kind: 'environment' } };
  if (storage.kind !== 'sqlite')
    throw new ConfigError(
      'IX_MASTER_KEY is required with PostgreSQL: set the same key on every instance (generate one with: openssl rand -base64 32)',
    );
  // In-memory database: secrets die with it.
  if (storage.dataDir === undefined) return { key: randomBytes(masterKeyBytes), source: { kind: 'generated' } };
  const path = masterKeyPath(storage.dataDir);
  let created = true;
  try {
    writeFileSync(path, `${randomBytes(masterKeyBytes).toString('base64')}\n`, { flag: 'wx', mode: 0o600 });
  } catch (error) {
    // Created already, by an earlier start or a process starting beside this one.
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    created = false;
  }
  // A new key could not decrypt the secrets sealed with the old one: the fix is the old key, not a fresh file.
  const text = readFileSync(path, 'utf8');
  if (!isMasterKeyText(text)) {
    throw new ConfigError(
      `${path} must be base64 of exactly ${masterKeyBytes} bytes: restore the file from a backup, or set IX_MASTER_KEY to the key it held`,
    );
  }
  return { key: Buffer.from(text.trim(), 'base64'), source: { kind: 'file', path, created } };
}

/** How the start-up summary names a master key's source. */
export function describeMasterKeySource(source: MasterKeySource): string {
  switch (source.kind) {
    case 'environment':
      return 'IX_MASTER_KEY';
    case 'file':
      return `${source.created ? 'created' : 'read from'} ${source.path}`;
    case 'generated':
      return 'generated in memory (for an in-memory database; gone at exit)';
  }
}
