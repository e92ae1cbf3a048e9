import { isIP } from 'node:net';
import { resolve } from 'node:path';

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
  /** LOG_LEVEL: pino level. */
  readonly logLevel: string;
  /** IX_BODY_LIMIT: largest accepted request body in bytes. */
  readonly bodyLimit: number;
  /** IX_TRUST_PROXY: take the client IP from X-Forwarded-For: `true`, or the proxies' addresses/CIDRs, comma-separated. */
  readonly trustProxy: boolean | string;
  /** IX_DEFAULT_RATE_LIMIT: requests per minute for keys without their own limit. */
  readonly defaultRateLimit: number;
  /** IX_AUTH_FAILURE_LIMIT: failed authentications per IP per minute before 429. */
  readonly authFailureLimit: number;
  /** IX_USAGE_FLUSH_MS: how often batched usage counts are written. */
  readonly usageFlushMs: number;
  /** IX_KEY_CACHE_MS: how long a verified key is trusted without a storage read. */
  readonly keyCacheMs: number;
  /** METRICS_PORT: serve /metrics on its own port instead of the API port. */
  readonly metricsPort: number | undefined;
  /** IX_EGRESS_ALLOW_PRIVATE: connectors may reach private and loopback addresses (default true, for self-hosting). */
  readonly egressAllowPrivate: boolean;
  /** IX_EGRESS_ALLOW: CIDRs admitted even when private addresses are refused. */
  readonly egressAllow: readonly string[];
  /** IX_EGRESS_DENY: CIDRs always refused. */
  readonly egressDeny: readonly string[];
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
  /** IX_EXECUTE_MAX_BYTES: upstream bytes (decompressed) one execute may read, all its requests together. */
  readonly executeMaxBytes: number;
  /** IX_EXECUTE_DEADLINE_SECONDS: how long one execute may take, all its requests, retries and WSDL loading together. */
  readonly executeDeadlineSeconds: number;
  /** IX_TENANT_CONCURRENCY: executes one tenant may have running at once on this instance. */
  readonly tenantConcurrency: number;
  /** IX_REQUEST_TIMEOUT_SECONDS: how long a request may take to arrive whole (headers and body). */
  readonly requestTimeoutSeconds: number;
  /** IX_MAX_JSON_DEPTH: deepest nesting of a JSON request body. */
  readonly maxJsonDepth: number;
}

export type Env = Readonly<Record<string, string | undefined>>;

export class ConfigError extends Error {
  override name = 'ConfigError';
}

function integer(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw)) throw new ConfigError(`${name} must be a whole number, got "${raw}"`);
  const value = Number(raw);
  if (value < min || value > max) throw new ConfigError(`${name} must be between ${min} and ${max}`);
  return value;
}

function boolean(env: Env, name: string, fallback: boolean): boolean {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (raw === 'true' || raw === '1') return true;
  if (raw === 'false' || raw === '0') return false;
  throw new ConfigError(`${name} must be true or false, got "${raw}"`);
}

/** A comma-separated CIDR list (spaces after commas allowed); a bare address means /32 or /128. */
function cidrList(env: Env, name: string): string[] {
  const raw = env[name];
  if (!raw) return [];
  const items = raw
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  for (const item of items) {
    const [address, prefix, extra] = item.split('/');
    const family = isIP(address);
    const max = family === 6 ? 128 : 32;
    const validPrefix = prefix === undefined || (/^\d{1,3}$/.test(prefix) && Number(prefix) <= max);
    if (family === 0 || !validPrefix || extra !== undefined)
      throw new ConfigError(`${name}: "${item}" is not an address or CIDR`);
  }
  return items;
}

function trustProxy(raw: string | undefined): boolean | string {
  if (raw === undefined || raw === '' || raw === 'false') return false;
  return raw === 'true' ? true : raw;
}

/** Reads the environment once; defaults are the embedded single-node setup. */
export function loadConfig(env: Env = process.env): Config {
  const databaseUrl = env.DATABASE_URL || 'sqlite:./data/interchange.db';
  if (env.REDIS_URL && !/^rediss?:\/\//.test(env.REDIS_URL))
    throw new ConfigError('REDIS_URL must start with redis:// or rediss://');
  if (!databaseUrl.startsWith('sqlite:') && !/^postgres(ql)?:\/\//.test(databaseUrl)) {
    throw new ConfigError('DATABASE_URL must start with sqlite: or postgres://');
  }
  const metricsPort = env.METRICS_PORT ? integer(env, 'METRICS_PORT', 0, 0, 65535) : undefined;
  return Object.freeze({
    host: env.HOST || '127.0.0.1',
    port: integer(env, 'PORT', 8080, 0, 65535),
    databaseUrl,
    masterKey: env.IX_MASTER_KEY || undefined,
    logLevel: env.LOG_LEVEL || 'info',
    bodyLimit: integer(env, 'IX_BODY_LIMIT', 1024 * 1024, 1024, 100 * 1024 * 1024),
    trustProxy: trustProxy(env.IX_TRUST_PROXY),
    defaultRateLimit: integer(env, 'IX_DEFAULT_RATE_LIMIT', 600, 1, 1_000_000),
    authFailureLimit: integer(env, 'IX_AUTH_FAILURE_LIMIT', 30, 1, 1_000_000),
    usageFlushMs: integer(env, 'IX_USAGE_FLUSH_MS', 1000, 10, 60_000),
    keyCacheMs: integer(env, 'IX_KEY_CACHE_MS', 500, 0, 1000),
    metricsPort,
    egressAllowPrivate: boolean(env, 'IX_EGRESS_ALLOW_PRIVATE', true),
    egressAllow: cidrList(env, 'IX_EGRESS_ALLOW'),
    egressDeny: cidrList(env, 'IX_EGRESS_DENY'),
    upstreamMaxBytes: integer(env, 'IX_UPSTREAM_MAX_BYTES', 10 * 1024 * 1024, 1024, 1024 * 1024 * 1024),
    redisUrl: env.REDIS_URL || undefined,
    redisPrefix: env.IX_REDIS_PREFIX || 'ix',
    pgPoolMax: integer(env, 'IX_PG_POOL_MAX', 10, 1, 1000),
    wsdlCacheSize: integer(env, 'IX_WSDL_CACHE_SIZE', 100, 1, 100_000),
    wsdlCacheTtlSeconds: integer(env, 'IX_WSDL_CACHE_TTL_SECONDS', 3600, 1, 7 * 86_400),
    executeMaxBytes: integer(env, 'IX_EXECUTE_MAX_BYTES', 32 * 1024 * 1024, 1024, 1024 * 1024 * 1024),
    executeDeadlineSeconds: integer(env, 'IX_EXECUTE_DEADLINE_SECONDS', 300, 1, 3600),
    tenantConcurrency: integer(env, 'IX_TENANT_CONCURRENCY', 32, 1, 10_000),
    requestTimeoutSeconds: integer(env, 'IX_REQUEST_TIMEOUT_SECONDS', 30, 1, 3600),
    maxJsonDepth: integer(env, 'IX_MAX_JSON_DEPTH', 64, 2, 1000),
  });
}

/** The file path of a `sqlite:` URL, resolved against the working directory. */
export function sqlitePath(databaseUrl: string): string {
  const path = databaseUrl.slice('sqlite:'.length);
  return path === ':memory:' ? path : resolve(path);
}
