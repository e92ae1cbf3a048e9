import { readFileSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { parseArgs } from 'node:util';
import { type Config, ConfigError, loadConfig, masterKeyBytes, sqlitePath } from '../config/config.ts';
import { isMasterKeyText, masterKeyPath } from '../secrets/master-key.ts';
import { migrate, openStorage } from '../storage/database.ts';
import { certificateCheck, type StoredConfig } from './doctor-certificates.ts';
import type { Check } from './doctor-check.ts';
import { type CliIo, jsonOption as json, wantsHelp } from './io.ts';

/** `interchange doctor --help`. */
export const doctorUsage = `usage: interchange doctor

  Checks, without changing anything: the configuration (every variable), the database (reachable, migrations
  pending), Redis (when REDIS_URL is set: connect and PING), the master key (IX_MASTER_KEY, or master.key
  beside a SQLite database; before the first serve it may be missing, unless something is already stored
  encrypted with a key) and the integrations' certificates (config.tls, WS-Security: none expired or expiring
  within 30 days). One line per check; exit 0 when all are ok, 1 when something is wrong.
  --json: {"checks": [{"name", "ok", "message"}]} on stdout.`;

const timeoutMs = 3000;
const requireModule = createRequire(import.meta.url);
const ok = (name: string, message: string): Check => ({ name, ok: true, message });
const problem = (name: string, message: string): Check => ({ name, ok: false, message });

/** Any credential of a URL removed from a message (a driver may quote what it was given). */
function withoutCredentials(message: string, url: string): string {
  const parsed = URL.parse(url);
  let text = message.replaceAll(url, '<DATABASE_URL>');
  for (const secret of [parsed?.password, parsed?.username]) {
    if (!secret) continue;
    text = text.replaceAll(secret, '***').replaceAll(decodeURIComponent(secret), '***');
  }
  return text;
}

/** Where a URL points, for messages: host, port and path, never the user or password. */
function place(url: string): string {
  const parsed = URL.parse(url);
  return parsed ? `${parsed.host}${parsed.pathname === '/' ? '' : parsed.pathname}` : '(an unreadable URL)';
}

function describeDatabase(databaseUrl: string): string {
  if (databaseUrl.startsWith('sqlite:')) return `SQLite ${sqlitePath(databaseUrl)}`;
  return `PostgreSQL at ${place(databaseUrl)}`;
}

function errorText(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const code = (error as NodeJS.ErrnoException).code;
  return error.message || (code ?? error.name);
}

/** The migrations this version applies: those that a fresh in-memory database gets (nothing is written to disk). */
async function knownMigrations(): Promise<string[]> {
  const storage = openStorage('sqlite::memory:');
  try {
    return await migrate(storage);
  } finally {
    await storage.close();
  }
}

function migrationState(applied: readonly string[], known: readonly string[]): Check {
  const unknown = applied.filter((name) => !known.includes(name));
  if (unknown.length > 0) {
    return problem(
      'database',
      `it holds migrations this version does not know (${unknown.join(', ')}): a newer Interchange migrated it; run that version`,
    );
  }
  const pending = known.filter((name) => !applied.includes(name));
  if (pending.length === 0) return ok('database', `answers; migrations up to date (${applied.length} applied)`);
  return ok(
    'database',
    `answers; ${pending.length} migration(s) pending (${pending.join(', ')}): \`interchange migrate\` or the next server start applies them`,
  );
}

/** What a SQLite database holds sealed with the master key (src/secrets/cipher.ts): what a lost key makes unreadable. */
interface SealedSecrets {
  /** Integrations with at least one secret field set. */
  integrations: number;
  /** Signing keys of access tokens (their private keys are sealed). */
  signingKeys: number;
}

const nothingSealed: SealedSecrets = { integrations: 0, signingKeys: 0 };

/** Counts what is sealed; a table that a pending migration has yet to create holds nothing. */
function countSealed(db: DatabaseSync): SealedSecrets {
  const tables = new Set(
    db
      .prepare("select name from sqlite_master where type = 'table' and name in ('integrations', 'signing_keys')")
      .all()
      .map((row) => String(row.name)),
  );
  const count = (sql: string) => Number(db.prepare(sql).get()?.n ?? 0);
  return {
    // `secrets` is JSON.stringify of the sealed fields: '{}' when none is set.
    integrations: tables.has('integrations') ? count("select count(*) as n from integrations where secrets <> '{}'") : 0,
    signingKeys: tables.has('signing_keys') ? count('select count(*) as n from signing_keys') : 0,
  };
}

/**
 * The SQLite file is opened only when it exists (opening creates a missing one) and only read; read-write, not
 * read-only, because a read-only connection leaves WAL index files behind, and the last connection to close removes them.
 * `sealed` is undefined when the database could not be read (the database check says why).
 */
/** Every integration's stored config (certificates included, secrets not); none before the table exists. */
function integrationConfigs(db: DatabaseSync): StoredConfig[] {
  const table = db.prepare("select name from sqlite_master where type = 'table' and name = 'integrations'").get();
  if (!table) return [];
  return db
    .prepare('select tenant_id, id, config from integrations')
    .all()
    .map((row) => ({ tenant_id: String(row.tenant_id), id: String(row.id), config: String(row.config) }));
}

function checkSqlite(
  databaseUrl: string,
  known: readonly string[],
): { check: Check; sealed: SealedSecrets | undefined; configs?: StoredConfig[] } {
  const path = sqlitePath(databaseUrl);
  if (path === ':memory:') {
    const message = 'in-memory SQLite: nothing is kept after the process ends; set DATABASE_URL=sqlite:<file> to keep data';
    return { check: ok('database', message), sealed: nothingSealed };
  }
  if (statSync(path, { throwIfNoEntry: false }) === undefined) {
    const message = `no database at ${path}: check DATABASE_URL, or create it with \`interchange migrate\``;
    return { check: problem('database', message), sealed: nothingSealed };
  }
  let db: DatabaseSync | undefined;
  try {
    db = new DatabaseSync(path, { timeout: timeoutMs });
    db.prepare('select 1').get();
    const table = db.prepare("select name from sqlite_master where type = 'table' and name = 'kysely_migration'").get();
    const rows = table ? db.prepare('select name from kysely_migration order by name').all() : [];
    const check = migrationState(
      rows.map((row) => String(row.name)),
      known,
    );
    return { check, sealed: countSealed(db), configs: integrationConfigs(db) };
  } catch (error) {
    const message = `cannot read ${path} (${errorText(error)}): check DATABASE_URL and the file's permissions`;
    return { check: problem('database', message), sealed: undefined };
  } finally {
    db?.close();
  }
}

async function checkPostgres(databaseUrl: string, known: readonly string[]): Promise<{ check: Check; configs?: StoredConfig[] }> {
  // pg is loaded only for PostgreSQL, as storage does.
  const pg: typeof import('pg') = requireModule('pg');
  let client: InstanceType<typeof pg.Client> | undefined;
  try {
    client = new pg.Client({ connectionString: databaseUrl, connectionTimeoutMillis: timeoutMs, query_timeout: timeoutMs });
    client.on('error', () => {});
    await client.connect();
    const table = await client.query<{ name: string | null }>("select to_regclass('kysely_migration')::text as name");
    const rows = table.rows[0]?.name ? (await client.query<{ name: string }>('select name from kysely_migration')).rows : [];
    const integrations = await client.query<{ name: string | null }>("select to_regclass('integrations')::text as name");
    const configs = integrations.rows[0]?.name
      ? (await client.query<StoredConfig>('select tenant_id, id, config::text as config from integrations')).rows
      : [];
    return { check: migrationState(rows.map((row) => row.name).sort(), known), configs };
  } catch (error) {
    const reason = withoutCredentials(errorText(error), databaseUrl);
    return {
      check: problem(
        'database',
        `cannot use ${describeDatabase(databaseUrl)} (${reason}): check DATABASE_URL (host, port, user, password, database) and that the server runs`,
      ),
    };
  } finally {
    await client?.end().catch(() => {});
  }
}

async function checkRedis(redisUrl: string | undefined): Promise<Check> {
  if (!redisUrl) return ok('redis', 'REDIS_URL is not set: each instance applies rate limits on its own');
  // Loaded only when there is a Redis to check.
  const { Redis } = await import('ioredis');
  const redis = new Redis(redisUrl, {
    lazyConnect: true,
    connectTimeout: timeoutMs,
    maxRetriesPerRequest: 0,
    enableOfflineQueue: false,
    retryStrategy: () => null,
  });
  let lastError: unknown;
  redis.on('error', (error) => {
    lastError = error;
  });
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
  });
  try {
    await Promise.race([redis.connect().then(() => redis.ping()), timeout]);
    return ok('redis', `Redis at ${place(redisUrl)} answered PING`);
  } catch (error) {
    const reason = withoutCredentials(errorText(lastError ?? error), redisUrl);
    return problem(
      'redis',
      `cannot reach Redis at ${place(redisUrl)} (${reason}): check REDIS_URL and that Redis runs, or unset REDIS_URL`,
    );
  } finally {
    clearTimeout(timer);
    redis.disconnect();
  }
}

const newKeyHint = 'e.g. `openssl rand -base64 32` (a different key cannot read secrets stored with the old one)';

/** What `sealed` holds, in words: "2 integration(s) with secrets and 1 access-token signing key(s)". */
function describeSealed(sealed: SealedSecrets): string {
  const parts: string[] = [];
  if (sealed.integrations > 0) parts.push(`${sealed.integrations} integration(s) with secrets`);
  if (sealed.signingKeys > 0) parts.push(`${sealed.signingKeys} access-token signing key(s)`);
  return parts.join(' and ');
}

/**
 * The rules of loadMasterKey, read-only: it would create master.key, this only looks. A missing master.key is what a
 * new install has until the first `serve` creates it; it is a problem only when something is already sealed with a key
 * (`sealed`; undefined when the database could not be read, so nothing is known).
 */
function checkMasterKey(config: Config, sealed: SealedSecrets | undefined): Check {
  const name = 'master key';
  // A malformed IX_MASTER_KEY never gets here: loadConfig refuses it (the configuration check).
  if (config.masterKey) return ok(name, `IX_MASTER_KEY holds ${masterKeyBytes} bytes`);
  if (!config.databaseUrl.startsWith('sqlite:')) {
    return problem(name, `IX_MASTER_KEY is required with PostgreSQL: set it to base64 of 32 bytes, ${newKeyHint}`);
  }
  const database = sqlitePath(config.databaseUrl);
  if (database === ':memory:') return ok(name, 'in-memory SQLite: each process makes its own key');
  const path = masterKeyPath(dirname(database));
  const stat = statSync(path, { throwIfNoEntry: false });
  if (stat === undefined) {
    const missing = `IX_MASTER_KEY is unset and ${path} does not exist`;
    if (sealed === undefined) {
      return problem(
        name,
        `${missing}, and whether secrets are stored is unknown (the database could not be read): fix the database, then run doctor again`,
      );
    }
    if (sealed.integrations === 0 && sealed.signingKeys === 0) {
      return ok(name, `${missing} yet: \`interchange serve\` creates it on first start (nothing is stored encrypted yet)`);
    }
    const redo = [
      sealed.signingKeys > 0 ? 'run `interchange signing-keys rotate`' : '',
      sealed.integrations > 0 ? "set the integrations' secrets again" : '',
    ].filter(Boolean);
    return problem(
      name,
      `${missing}, but the database holds ${describeSealed(sealed)} encrypted with a master key: restore ${path} from a backup, or set IX_MASTER_KEY to the key they were stored with (a new key cannot read them; if the old one is lost, ${redo.join(' and ')})`,
    );
  }
  const mode = (stat.mode & 0o777).toString(8).padStart(4, '0');
  if (!stat.isFile())
    return problem(name, `${path} is not a file: remove it (\`interchange serve\` then creates the key) or set IX_MASTER_KEY`);
  if ((stat.mode & 0o077) !== 0) {
    return problem(name, `${path} has mode ${mode}: other users may read the key; run \`chmod 600 ${path}\``);
  }
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    return problem(name, `cannot read ${path} (${errorText(error)}): run doctor and serve as the user that owns it`);
  }
  if (!isMasterKeyText(text))
    return problem(
      name,
      `${path} does not hold base64 of exactly ${masterKeyBytes} bytes: restore it from a backup, or set IX_MASTER_KEY`,
    );
  return ok(name, `${path} (mode ${mode}, IX_MASTER_KEY unset)`);
}

/** Every check, in order; after an invalid configuration the others are not run (they need it). */
export async function runChecks(env: CliIo['env']): Promise<Check[]> {
  let config: Config;
  try {
    config = loadConfig(env);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    return [problem('configuration', `${error.message} (the other checks run once the configuration is valid)`)];
  }
  const known = await knownMigrations();
  // Only SQLite's master key may be missing: with PostgreSQL, IX_MASTER_KEY is required whatever is stored.
  const {
    check: database,
    sealed,
    configs,
  } = config.databaseUrl.startsWith('sqlite:')
    ? checkSqlite(config.databaseUrl, known)
    : { ...(await checkPostgres(config.databaseUrl, known)), sealed: undefined };
  return [
    ok('configuration', `valid; database: ${describeDatabase(config.databaseUrl)}`),
    database,
    await checkRedis(config.redisUrl),
    checkMasterKey(config, sealed),
    // Only when the integrations could be read: an unreadable database is the database check's to report.
    ...(configs ? [certificateCheck(configs)] : []),
  ];
}

/** `doctor`: one line per check (`--json`: `{"checks": [...]}`); exit 0 when every check is ok, else 1. */
export async function doctorCommand(args: string[], io: CliIo): Promise<number> {
  if (wantsHelp(args)) {
    io.out(doctorUsage);
    return 0;
  }
  const { values } = parseArgs({ args, options: { json } });
  const checks = await runChecks(io.env);
  if (values.json) io.out(JSON.stringify({ checks }));
  else for (const check of checks) io.out(`${check.ok ? 'ok     ' : 'PROBLEM'}  ${check.name}: ${check.message}`);
  return checks.every((check) => check.ok) ? 0 : 1;
}
