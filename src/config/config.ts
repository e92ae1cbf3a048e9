import { statSync } from 'node:fs';
import { isIP } from 'node:net';
import { dirname, join, resolve } from 'node:path';
import { isCidr } from '../egress/policy.ts';
import { type ProxySettings, proxySettingsFromEnv } from '../egress/proxy-env.ts';

/** Everything the service reads from its environment, parsed once and frozen. */
export interface Config {
  /** HOST: interface to listen on. */
  readonly host: string;
  /** PORT: TCP port (0 picks a free one). */
  readonly port: number;
  /** DATABASE_URL: `sqlite:<path>` (embedded default) or `postgres://…`. */
  readonly databaseUrl: string;
  /** IX_MASTER_KEY: base64 of 32 bytes, encrypts secrets at rest. */
  readonly masterKey: string | undefined;
  /** LOG_LEVEL: pino level: fatal, error, warn, info (default), debug, trace or silent. */
  readonly logLevel: LogLevel;
  /** LOG_FORMAT: `json` (default, one object per line) or `pretty` (human-readable, for a terminal). */
  readonly logFormat: 'json' | 'pretty';
  /** IX_BODY_LIMIT: largest accepted request body in bytes. */
  readonly bodyLimit: number;
  /** IX_TRUST_PROXY: take the client IP from X-Forwarded-For: `true`, or the proxies' addresses/CIDRs, comma-separated. */
  readonly trustProxy: boolean | string;
  /** IX_DEFAULT_RATE_LIMIT: requests per minute for keys without their own limit. */
  readonly defaultRateLimit: number;
  /** IX_AUTH_FAILURE_LIMIT: failed authentications per IP per minute before 429. */
  readonly authFailureLimit: number;
  /** IX_SIGN_IN_HASH_CONCURRENCY: sign-in password checks (scrypt, on libuv's thread pool) running at once on this instance. */
  readonly signInHashConcurrency: number;
  /** IX_SIGN_IN_PER_ADDRESS: sign-ins one client address may have waiting or being checked at once on this instance. */
  readonly signInPerAddress: number;
  /** IX_SIGN_IN_QUEUE_LIMIT: sign-ins waiting for their password check, all addresses together, on this instance. */
  readonly signInQueueLimit: number;
  /** IX_USAGE_FLUSH_MS: how often batched usage counts are written. */
  readonly usageFlushMs: number;
  /** IX_KEY_CACHE_MS: how long a verified key, or a person's membership, is trusted without a storage read. */
  readonly keyCacheMs: number;
  /** IX_ACCESS_TOKEN_TTL_SECONDS: how long a person's access token (a JWT) lives; 900 (15 minutes) by default. */
  readonly accessTokenTtlSeconds: number;
  /** METRICS_PORT: serve /metrics on its own port instead of the API port. */
  readonly metricsPort: number | undefined;
  /** IX_EGRESS_ALLOW_PRIVATE: connectors may reach private and loopback addresses (default true, for self-hosting). */
  readonly egressAllowPrivate: boolean;
  /** IX_EGRESS_ALLOW: CIDRs admitted even when private addresses are refused. */
  readonly egressAllow: readonly string[];
  /** IX_EGRESS_DENY: CIDRs always refused. */
  readonly egressDeny: readonly string[];
  /**
   * HTTPS_PROXY: the proxy of upstream requests to https URLs; HTTP_PROXY that of http URLs; NO_PROXY the hosts that go
   * direct (each also in lower case, which wins, as curl reads them).
   */
  readonly proxies: ProxySettings;
  /** IX_UPSTREAM_MAX_BYTES: largest upstream response body after decompression. */
  readonly upstreamMaxBytes: number;
  /** REDIS_URL: share rate limits across instances through Redis; unset, each instance limits on its own. */
  readonly redisUrl: string | undefined;
  /** IX_REDIS_PREFIX: prefix of every Redis key, so several deployments can share one Redis. */
  readonly redisPrefix: string;
  /** IX_PG_POOL_MAX: connections per instance in the PostgreSQL pool. */
  readonly pgPoolMax: number;
  /** IX_WSDL_CACHE_SIZE: parsed WSDLs kept (least recently used dropped first). */
  readonly wsdlCacheSize: number;
  /** IX_WSDL_CACHE_TTL_SECONDS: a parsed WSDL is fetched again after this long. */
  readonly wsdlCacheTtlSeconds: number;
  /** IX_GRAPHQL_SCHEMA_CACHE_MB: the upstream GraphQL schemas kept, all together, in MiB (docs/execute.md#schema-aware-checking). */
  readonly graphqlSchemaCacheMb: number;
  /** IX_EXECUTE_MAX_BYTES: upstream bytes (decompressed) one execute may read, all its requests together. */
  readonly executeMaxBytes: number;
  /** IX_EXECUTE_DEADLINE_SECONDS: how long one execute may take, all its requests, retries and WSDL loading together. */
  readonly executeDeadlineSeconds: number;
  /** IX_MCP_PROGRESS_SECONDS: how often a running MCP tool call reports progress to a client that asked (docs/mcp.md). */
  readonly mcpProgressSeconds: number;
  /** IX_TENANT_CONCURRENCY: executes one tenant may have running at once on this instance. */
  readonly tenantConcurrency: number;
  /** IX_TENANT_QUEUED_MAX: async executions one tenant may have queued (not yet running), all instances together. */
  readonly tenantQueuedMax: number;
  /** IX_REQUEST_TIMEOUT_SECONDS: how long a request may take to arrive whole (headers and body). */
  readonly requestTimeoutSeconds: number;
  /** IX_MAX_JSON_DEPTH: deepest nesting of a JSON request body. */
  readonly maxJsonDepth: number;
  /** IX_ASYNC_DEADLINE_SECONDS: how long one async execution may take (the synchronous one: executeDeadlineSeconds). */
  readonly asyncDeadlineSeconds: number;
  /** IX_RESULT_RETENTION_HOURS: how long an async execution's answer is kept after it finished. */
  readonly resultRetentionHours: number;
  /** IX_AUDIT_RETENTION_DAYS: how long an audit event is kept (docs/audit.md#retention). */
  readonly auditRetentionDays: number;
  /** IX_WORKER: whether this instance works the queue (async executions, webhook deliveries); false serves HTTP only. */
  readonly worker: boolean;
  /** IX_WORKER_CONCURRENCY: async executions this instance runs at once. */
  readonly workerConcurrency: number;
  /** IX_WORKER_HEARTBEAT_SECONDS: a queued job whose worker has not beaten for this long (its process died) runs again. */
  readonly workerHeartbeatSeconds: number;
  /** IX_WEBHOOK_ALLOW_PRIVATE: whether webhook URLs may be private addresses (default: IX_EGRESS_ALLOW_PRIVATE). */
  readonly webhookAllowPrivate: boolean;
  /**
   * IX_SPOOL_DIR: where idempotency answers that storage could not take are kept until it does, so that a process
   * that dies meanwhile leaves them to the next start (docs/execute.md#when-storage-fails). Default: `spool` beside
   * the SQLite file, `./data/spool` on PostgreSQL; none for an in-memory database.
   */
  readonly spoolDir: string | undefined;
}

export type Env = Readonly<Record<string, string | undefined>>;

/** pino's levels, most severe first; `silent` logs nothing. */
export const logLevels = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof logLevels)[number];

/** A setting that cannot work as given: the message names the variable and what to set it to (the CLI exits 2). */
export class ConfigError extends Error {
  override name = 'ConfigError';
}

function integer(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!/^\d+$/.test(raw) || value < min || value > max)
    throw new ConfigError(`${name} must be a whole number from ${min} to ${max}, got "${raw}"`);
  return value;
}

function oneOf<T extends string>(env: Env, name: string, allowed: readonly T[], fallback: T): T {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!(allowed as readonly string[]).includes(raw))
    throw new ConfigError(`${name} must be one of ${allowed.join(', ')}, got "${raw}"`);
  return raw as T;
}

function boolean(env: Env, name: string, fallback: boolean): boolean {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (raw === 'true' || raw === '1') return true;
  if (raw === 'false' || raw === '0') return false;
  throw new ConfigError(`${name} must be true or false (or 1 or 0), got "${raw}"`);
}

function splitList(raw: string): string[] {
  return raw
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
}

/** A comma-separated CIDR list (spaces after commas allowed); a bare address means /32 or /128. */
function cidrList(env: Env, name: string): string[] {
  const raw = env[name];
  if (!raw) return [];
  const items = splitList(raw);
  for (const item of items) {
    if (!isCidr(item))
      throw new ConfigError(`${name}: "${item}" is not an address or CIDR; give e.g. 10.0.0.0/8, fd00::/8 or 192.0.2.7`);
  }
  return items;
}

// The named ranges Fastify's trust-proxy list understands beside addresses and CIDRs.
const proxyRanges = ['loopback', 'linklocal', 'uniquelocal'];

function trustProxy(env: Env): boolean | string {
  const raw = env.IX_TRUST_PROXY;
  if (raw === undefined || raw === '' || raw === 'false') return false;
  if (raw === 'true') return true;
  for (const item of splitList(raw)) {
    if (!isCidr(item) && !proxyRanges.includes(item))
      throw new ConfigError(
        `IX_TRUST_PROXY: "${item}" is not an address or CIDR; give true, false, or the proxies' addresses, e.g. 10.0.0.0/8,loopback`,
      );
  }
  return raw;
}

// A host name as DNS spells it, or an IP address.
const hostName = /^(?=.{1,253}$)[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$/;

function host(env: Env): string {
  const raw = env.HOST;
  if (raw === undefined || raw === '') return '127.0.0.1';
  if (isIP(raw) === 0 && !hostName.test(raw))
    throw new ConfigError(`HOST must be an IP address or a host name (e.g. 0.0.0.0 for every interface), got "${raw}"`);
  return raw;
}

/**
 * DATABASE_URL: `sqlite:<path>` or a `postgres://` URL. The value is never repeated in a message, since it may hold
 * a password.
 */
function databaseUrl(env: Env): string {
  const raw = env.DATABASE_URL || 'sqlite:./data/interchange.db';
  if (raw.startsWith('sqlite:')) {
    if (raw === 'sqlite:')
      throw new ConfigError('DATABASE_URL needs a file after sqlite:, e.g. sqlite:./data/interchange.db (or sqlite::memory:)');
    return raw;
  }
  if (!/^postgres(ql)?:\/\//.test(raw))
    throw new ConfigError(
      'DATABASE_URL must be sqlite:<file> (e.g. sqlite:./data/interchange.db) or postgres://user:password@host:5432/database',
    );
  if (!URL.canParse(raw))
    throw new ConfigError(
      'DATABASE_URL is not a valid URL: check the port and percent-encode special characters in the user and password, e.g. postgres://user:password@host:5432/database',
    );
  return raw;
}

function redisUrl(env: Env): string | undefined {
  const raw = env.REDIS_URL;
  if (!raw) return undefined;
  if (!/^rediss?:\/\//.test(raw))
    throw new ConfigError('REDIS_URL must start with redis:// or rediss://, e.g. redis://localhost:6379');
  if (!URL.canParse(raw))
    throw new ConfigError(
      'REDIS_URL is not a valid URL: check the port and percent-encode special characters in the password, e.g. redis://:password@host:6379/0',
    );
  return raw;
}

/** The size of the master key, which IX_MASTER_KEY and master.key hold in base64. */
export const masterKeyBytes = 32;

/** IX_MASTER_KEY, checked here so a bad key stops the start before storage is touched; never repeated in a message. */
function masterKey(env: Env): string | undefined {
  const raw = env.IX_MASTER_KEY;
  if (!raw) return undefined;
  const text = raw.trim();
  const fix = 'generate one with: openssl rand -base64 32';
  if (!/^[A-Za-z0-9+/_-]+={0,2}$/.test(text))
    throw new ConfigError(`IX_MASTER_KEY is not base64: it must be base64 of exactly ${masterKeyBytes} bytes; ${fix}`);
  const bytes = Buffer.from(text, 'base64').length;
  if (bytes !== masterKeyBytes)
    throw new ConfigError(`IX_MASTER_KEY must be base64 of exactly ${masterKeyBytes} bytes, got ${bytes} bytes; ${fix}`);
  return raw;
}

/** Reads the environment once; defaults are the embedded single-node setup. */
/** The outbound proxies from the environment; a proxy URL that is not http(s) is a configuration error. */
function proxies(env: Env): ProxySettings {
  try {
    return proxySettingsFromEnv(env);
  } catch (error) {
    throw new ConfigError(`${(error as Error).message}; give e.g. http://proxy.internal:3128`);
  }
}

export function loadConfig(env: Env = process.env): Config {
  const metricsPort = env.METRICS_PORT ? integer(env, 'METRICS_PORT', 0, 0, 65535) : undefined;
  return Object.freeze({
    host: host(env),
    port: integer(env, 'PORT', 8080, 0, 65535),
    databaseUrl: databaseUrl(env),
    masterKey: masterKey(env),
    logLevel: oneOf(env, 'LOG_LEVEL', logLevels, 'info'),
    logFormat: oneOf(env, 'LOG_FORMAT', ['json', 'pretty'] as const, 'json'),
    bodyLimit: integer(env, 'IX_BODY_LIMIT', 1024 * 1024, 1024, 100 * 1024 * 1024),
    trustProxy: trustProxy(env),
    defaultRateLimit: integer(env, 'IX_DEFAULT_RATE_LIMIT', 600, 1, 1_000_000),
    authFailureLimit: integer(env, 'IX_AUTH_FAILURE_LIMIT', 30, 1, 1_000_000),
    // Two of libuv's four threads by default: zlib (upstream gzip) and DNS lookups keep the other two.
    signInHashConcurrency: integer(env, 'IX_SIGN_IN_HASH_CONCURRENCY', 2, 1, 64),
    signInPerAddress: integer(env, 'IX_SIGN_IN_PER_ADDRESS', 4, 1, 100_000),
    // About a second of checks at scrypt's ~0.1 s each, two at a time: a sign-in admitted is not kept waiting long.
    signInQueueLimit: integer(env, 'IX_SIGN_IN_QUEUE_LIMIT', 16, 1, 100_000),
    usageFlushMs: integer(env, 'IX_USAGE_FLUSH_MS', 1000, 10, 60_000),
    keyCacheMs: integer(env, 'IX_KEY_CACHE_MS', 500, 0, 1000),
    // Values under a minute are for tests.
    accessTokenTtlSeconds: integer(env, 'IX_ACCESS_TOKEN_TTL_SECONDS', 900, 1, 3600),
    metricsPort,
    egressAllowPrivate: boolean(env, 'IX_EGRESS_ALLOW_PRIVATE', true),
    egressAllow: cidrList(env, 'IX_EGRESS_ALLOW'),
    egressDeny: cidrList(env, 'IX_EGRESS_DENY'),
    proxies: proxies(env),
    upstreamMaxBytes: integer(env, 'IX_UPSTREAM_MAX_BYTES', 10 * 1024 * 1024, 1024, 1024 * 1024 * 1024),
    redisUrl: redisUrl(env),
    redisPrefix: env.IX_REDIS_PREFIX || 'ix',
    pgPoolMax: integer(env, 'IX_PG_POOL_MAX', 10, 1, 1000),
    wsdlCacheSize: integer(env, 'IX_WSDL_CACHE_SIZE', 100, 1, 100_000),
    wsdlCacheTtlSeconds: integer(env, 'IX_WSDL_CACHE_TTL_SECONDS', 3600, 1, 7 * 86_400),
    graphqlSchemaCacheMb: integer(env, 'IX_GRAPHQL_SCHEMA_CACHE_MB', 64, 1, 4096),
    executeMaxBytes: integer(env, 'IX_EXECUTE_MAX_BYTES', 32 * 1024 * 1024, 1024, 1024 * 1024 * 1024),
    executeDeadlineSeconds: integer(env, 'IX_EXECUTE_DEADLINE_SECONDS', 300, 1, 3600),
    mcpProgressSeconds: integer(env, 'IX_MCP_PROGRESS_SECONDS', 5, 1, 300),
    tenantConcurrency: integer(env, 'IX_TENANT_CONCURRENCY', 32, 1, 10_000),
    tenantQueuedMax: integer(env, 'IX_TENANT_QUEUED_MAX', 1000, 1, 1_000_000),
    requestTimeoutSeconds: integer(env, 'IX_REQUEST_TIMEOUT_SECONDS', 30, 1, 3600),
    maxJsonDepth: integer(env, 'IX_MAX_JSON_DEPTH', 64, 2, 1000),
    asyncDeadlineSeconds: integer(env, 'IX_ASYNC_DEADLINE_SECONDS', 3600, 1, 3600),
    resultRetentionHours: integer(env, 'IX_RESULT_RETENTION_HOURS', 24, 1, 24 * 365),
    auditRetentionDays: integer(env, 'IX_AUDIT_RETENTION_DAYS', 365, 1, 36_500),
    worker: boolean(env, 'IX_WORKER', true),
    workerConcurrency: integer(env, 'IX_WORKER_CONCURRENCY', 8, 1, 1000),
    // pg-boss's least: 10 s. A job whose process died waits this long (and up to as long again) before it runs again.
    workerHeartbeatSeconds: integer(env, 'IX_WORKER_HEARTBEAT_SECONDS', 30, 10, 3600),
    webhookAllowPrivate: boolean(env, 'IX_WEBHOOK_ALLOW_PRIVATE', boolean(env, 'IX_EGRESS_ALLOW_PRIVATE', true)),
    spoolDir: spoolDir(env),
  });
}

/** IX_SPOOL_DIR resolved, or its default for DATABASE_URL (see Config.spoolDir). */
function spoolDir(env: Env): string | undefined {
  if (env.IX_SPOOL_DIR) {
    const dir = resolve(env.IX_SPOOL_DIR);
    // Made when first needed (in an outage): a path that can never be a folder is refused now, not then.
    if (statSync(dir, { throwIfNoEntry: false })?.isDirectory() === false) {
      throw new ConfigError(`IX_SPOOL_DIR must name a folder (or where one can be made); ${dir} is not one`);
    }
    return dir;
  }
  const url = databaseUrl(env);
  if (!url.startsWith('sqlite:')) return resolve('data/spool');
  const path = sqlitePath(url);
  return path === ':memory:' ? undefined : join(dirname(path), 'spool');
}

/** The file path of a `sqlite:` URL, resolved against the working directory. */
export function sqlitePath(databaseUrl: string): string {
  const path = databaseUrl.slice('sqlite:'.length);
  return path === ':memory:' ? path : resolve(path);
}
