import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { ConfigError, loadConfig } from '../../src/config/config.ts';
import { displayUrl } from '../../src/core/display-url.ts';
import { createTestDatabase, redisTestUrl, testMasterKey } from '../support/postgres.ts';
import {
  type Env,
  freePort,
  type Json,
  killAll,
  runCliProcess,
  type ServerProcess,
  startServer,
  tempDatabase,
} from '../support/processes.ts';
import { until } from '../support/until.ts';

after(killAll);

const version = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')).version as string;

/** One bad value per setting; `says` is part of the fix the message must name. */
const badSettings: Array<{ name: string; value: string; says: string; env?: Env }> = [
  { name: 'HOST', value: 'not a host!', says: 'IP address or a host name' },
  { name: 'PORT', value: 'eighty', says: 'from 0 to 65535' },
  { name: 'PORT', value: '70000', says: 'from 0 to 65535' },
  { name: 'DATABASE_URL', value: 'mysql://ix:s3cretpw@db/ix', says: 'sqlite:<file>' },
  { name: 'DATABASE_URL', value: 'postgres://ix:s3cretpw@db:port/ix', says: 'percent-encode' },
  { name: 'DATABASE_URL', value: 'sqlite:', says: 'needs a file' },
  { name: 'IX_MASTER_KEY', value: 'not base64!', says: 'openssl rand -base64 32' },
  { name: 'IX_MASTER_KEY', value: Buffer.alloc(16).toString('base64'), says: 'got 16 bytes' },
  // Well-formed settings, but PostgreSQL needs a key every instance shares: refused before connecting.
  { name: 'IX_MASTER_KEY', value: '', says: 'required with PostgreSQL', env: { DATABASE_URL: 'postgres://ix@127.0.0.1:1/x' } },
  { name: 'LOG_LEVEL', value: 'loud', says: 'fatal, error, warn, info, debug, trace, silent' },
  { name: 'LOG_FORMAT', value: 'xml', says: 'json, pretty' },
  { name: 'IX_BODY_LIMIT', value: '1mb', says: 'whole number' },
  { name: 'IX_TRUST_PROXY', value: '10.0.0.0/33', says: 'not an address or CIDR' },
  { name: 'IX_DEFAULT_RATE_LIMIT', value: '0', says: 'from 1 to' },
  { name: 'IX_AUTH_FAILURE_LIMIT', value: '-1', says: 'whole number' },
  { name: 'IX_SIGN_IN_HASH_CONCURRENCY', value: '0', says: 'from 1 to 64' },
  { name: 'IX_SIGN_IN_PER_ADDRESS', value: 'two', says: 'whole number' },
  { name: 'IX_SIGN_IN_QUEUE_LIMIT', value: '0', says: 'from 1 to' },
  { name: 'IX_USAGE_FLUSH_MS', value: '5', says: 'from 10 to' },
  { name: 'IX_KEY_CACHE_MS', value: '5000', says: 'from 0 to 1000' },
  { name: 'IX_ACCESS_TOKEN_TTL_SECONDS', value: '0', says: 'from 1 to 3600' },
  { name: 'METRICS_PORT', value: '9x', says: 'whole number' },
  { name: 'IX_EGRESS_ALLOW_PRIVATE', value: 'yes', says: 'true or false' },
  { name: 'IX_EGRESS_ALLOW', value: '10.0.0.0/8, example.com', says: 'not an address or CIDR' },
  { name: 'IX_EGRESS_DENY', value: '300.1.2.3', says: 'not an address or CIDR' },
  // An address with a zone: Node's isIP takes it, the egress policy cannot (it stopped the start with a TypeError).
  { name: 'IX_EGRESS_DENY', value: 'fe80::1%eth0', says: 'not an address or CIDR' },
  { name: 'HTTPS_PROXY', value: 'socks5://127.0.0.1:1080', says: 'http://proxy.internal:3128' },
  { name: 'HTTP_PROXY', value: 'ftp://proxy', says: 'http://proxy.internal:3128' },
  { name: 'IX_UPSTREAM_MAX_BYTES', value: '10', says: 'from 1024 to' },
  { name: 'REDIS_URL', value: 'http://:s3cretpw@cache:6379', says: 'redis:// or rediss://' },
  { name: 'REDIS_URL', value: 'redis://:s3cretpw@cache:port', says: 'percent-encode' },
  { name: 'IX_PG_POOL_MAX', value: '0', says: 'from 1 to' },
  { name: 'IX_WSDL_CACHE_SIZE', value: 'many', says: 'whole number' },
  { name: 'IX_GRAPHQL_SCHEMA_CACHE_MB', value: '0', says: 'from 1 to 4096' },
  { name: 'IX_WSDL_CACHE_TTL_SECONDS', value: '1.5', says: 'whole number' },
  { name: 'IX_EXECUTE_MAX_BYTES', value: '1e9', says: 'whole number' },
  { name: 'IX_EXECUTE_DEADLINE_SECONDS', value: '0', says: 'from 1 to 3600' },
  { name: 'IX_MCP_PROGRESS_SECONDS', value: '0', says: 'from 1 to 300' },
  { name: 'IX_TENANT_CONCURRENCY', value: '100000', says: 'from 1 to' },
  { name: 'IX_TENANT_QUEUED_MAX', value: '0', says: 'from 1 to' },
  { name: 'IX_SPOOL_DIR', value: '/dev/null', says: 'must name a folder' },
  { name: 'IX_REQUEST_TIMEOUT_SECONDS', value: 'soon', says: 'whole number' },
  { name: 'IX_MAX_JSON_DEPTH', value: '1', says: 'from 2 to' },
  { name: 'IX_ASYNC_DEADLINE_SECONDS', value: '3601', says: 'from 1 to 3600' },
  { name: 'IX_RESULT_RETENTION_HOURS', value: '0', says: 'from 1 to' },
  { name: 'IX_AUDIT_RETENTION_DAYS', value: '0', says: 'from 1 to' },
  { name: 'IX_WORKER', value: 'sometimes', says: 'true or false' },
  { name: 'IX_WORKER_CONCURRENCY', value: '0', says: 'from 1 to 1000' },
  { name: 'IX_WORKER_HEARTBEAT_SECONDS', value: '5', says: 'from 10 to 3600' },
  { name: 'IX_WEBHOOK_ALLOW_PRIVATE', value: 'maybe', says: 'true or false' },
];

// Settings where any value works: nothing to refuse.
const acceptsAnything = new Set(['IX_REDIS_PREFIX']);

describe('a setting that cannot work stops the start: exit 2, naming the variable and the fix', () => {
  test('the table covers every variable loadConfig reads', () => {
    // Each Config field's doc comment starts with its variable's name (src/config/config.ts).
    const source = readFileSync(new URL('../../src/config/config.ts', import.meta.url), 'utf8');
    const variables = [...source.matchAll(/\/\*\* ([A-Z][A-Z0-9_]+):/g)].map((m) => m[1]);
    assert.ok(variables.length > 25, 'the Config doc comments were found');
    const covered = new Set(badSettings.map((row) => row.name));
    assert.deepEqual(
      variables.filter((name) => !covered.has(name) && !acceptsAnything.has(name)),
      [],
    );
  });

  for (const row of badSettings) {
    test(`${row.name}=${JSON.stringify(row.value)}`, async (t) => {
      const db = tempDatabase();
      t.after(db.cleanup);
      const result = await runCliProcess(['serve'], { ...db.env, ...row.env, [row.name]: row.value });
      assert.equal(result.code, 2, result.stderr);
      assert.match(result.stderr, new RegExp(`\\b${row.name}\\b`));
      assert.ok(result.stderr.includes(row.says), result.stderr);
      assert.equal(result.stderr.trim().split('\n').length, 1, `one line, no stack trace: ${result.stderr}`);
      assert.ok(!result.stderr.includes('s3cretpw'), result.stderr);
      assert.equal(existsSync(join(db.dir, 'ix.db')), false, 'stopped before storage was opened');
    });
  }

  test('LOG_LEVEL=loud: the message lists the levels, not pino internals', async (t) => {
    const db = tempDatabase();
    t.after(db.cleanup);
    const result = await runCliProcess(['serve'], { ...db.env, LOG_LEVEL: 'loud' });
    assert.equal(result.code, 2);
    assert.equal(result.stderr.trim(), 'LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent, got "loud"');
  });

  test('loadConfig accepts the documented values', () => {
    const config = loadConfig({
      LOG_LEVEL: 'debug',
      LOG_FORMAT: 'pretty',
      HOST: '::',
      IX_TRUST_PROXY: '10.0.0.0/8, loopback',
      IX_MASTER_KEY: testMasterKey(),
      REDIS_URL: 'rediss://:pw@cache.internal:6380/2',
      DATABASE_URL: 'postgresql://ix:p%40ss@db.internal:5432/ix',
    });
    assert.equal(config.logLevel, 'debug');
    assert.equal(config.logFormat, 'pretty');
    assert.equal(config.trustProxy, '10.0.0.0/8, loopback');
    assert.equal(loadConfig({}).logFormat, 'json');
    assert.throws(() => loadConfig({ LOG_FORMAT: 'JSON' }), ConfigError);
  });
});

describe('displayUrl', () => {
  test('removes the password and the query, keeps the user', () => {
    assert.equal(displayUrl('postgres://ix:s3cretpw@127.0.0.1:5499/db'), 'postgres://ix@127.0.0.1:5499/db');
    assert.equal(displayUrl('postgres://ix@db/ix?sslmode=require&password=s3cretpw'), 'postgres://ix@db/ix');
    assert.equal(displayUrl('redis://:s3cretpw@cache:6379/1'), 'redis://cache:6379/1');
    assert.equal(displayUrl('rediss://default:s3cretpw@cache'), 'rediss://default@cache');
  });

  test('shows only the scheme of what it cannot parse', () => {
    assert.equal(displayUrl('postgres://ix:s3cretpw@db:port/ix'), 'postgres://…');
  });
});

describe('a database that cannot be reached is named, without its password', () => {
  for (const command of ['serve', 'migrate']) {
    test(`interchange ${command}: exit 1, DATABASE_URL named, password removed`, async () => {
      const port = await freePort(); // closed a moment ago: nothing listens there
      const result = await runCliProcess([command], {
        DATABASE_URL: `postgres://ix:s3cretpw@127.0.0.1:${port}/x`,
        IX_MASTER_KEY: testMasterKey(),
      });
      assert.equal(result.code, 1, result.stderr);
      assert.equal(
        result.stderr.trim(),
        `error: cannot reach the database at postgres://ix@127.0.0.1:${port}/x (DATABASE_URL): connection refused`,
      );
    });
  }

  test('a SQLite folder that can never be created (under /proc) is a clear exit 1, not a process spinning for ever', async () => {
    // Node's recursive mkdir loops where the kernel answers ENOENT for good; the ceiling only catches that loop.
    const result = await runCliProcess(['migrate'], { DATABASE_URL: 'sqlite:/proc/ix-nope/x.db' }, { timeoutMs: 60_000 });
    assert.equal(result.code, 1, result.stderr);
    assert.match(result.stderr, /^error: cannot open the SQLite database \/proc\/ix-nope\/x\.db \(DATABASE_URL\): ENOENT/);
  });
});

/** The log lines a server wrote so far, parsed (every line must be JSON). */
function logLines(server: ServerProcess): Json[] {
  return server
    .stdout()
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line));
}

/** Polls the server's log until a line matches. */
function logLine(server: ServerProcess, match: (line: Json) => boolean): Promise<Json> {
  return until(
    () => logLines(server).find(match),
    () => `no such log line; stdout:\n${server.stdout()}\nstderr:\n${server.stderr()}`,
  );
}

const isSummary = (line: Json) => typeof line.msg === 'string' && line.msg === `Interchange ${version} started`;

describe('the start-up summary', () => {
  const logEnv: Env = { LOG_LEVEL: 'info', LOG_FORMAT: 'json' };

  test('on SQLite: address, storage, Redis, master key created then read, version', async (t) => {
    const db = tempDatabase();
    t.after(db.cleanup);
    const first = await startServer({ ...db.env, ...logEnv });
    t.after(() => first.stop());
    const summary = await logLine(first, isSummary);
    assert.equal(summary.level, 30);
    // The first line of all names where everything is; the summary follows it.
    const [firstLine] = logLines(first);
    const at = first.url;
    assert.equal(
      firstLine.msg,
      `Interchange ${version} listening on ${at}: API ${at}/api/v1, console ${at}/console, docs ${at}/docs, metrics ${at}/metrics`,
    );
    assert.equal(summary.version, version);
    assert.equal(summary.url, first.url);
    assert.equal(summary.storage, 'sqlite');
    assert.equal(summary.database, join(db.dir, 'ix.db'));
    assert.match(summary.redis, /^none/);
    assert.equal(summary.masterKey, `created ${join(db.dir, 'master.key')}`);
    assert.equal(logLines(first).filter(isSummary).length, 1);
    assert.equal(await first.stop(), 0);

    const second = await startServer({ ...db.env, ...logEnv });
    t.after(() => second.stop());
    assert.equal((await logLine(second, isSummary)).masterKey, `read from ${join(db.dir, 'master.key')}`);
  });

  test('IX_MASTER_KEY, and a Redis that is down: named by REDIS_URL without its password, the server still serves', async (t) => {
    const db = tempDatabase();
    t.after(db.cleanup);
    const port = await freePort();
    const server = await startServer({
      ...db.env,
      ...logEnv,
      IX_MASTER_KEY: testMasterKey(),
      REDIS_URL: `redis://:s3cretpw@127.0.0.1:${port}/3`,
    });
    t.after(() => server.stop());
    const summary = await logLine(server, isSummary);
    assert.equal(summary.masterKey, 'IX_MASTER_KEY');
    assert.equal(summary.redis, `redis://127.0.0.1:${port}/3`);
    const warning = await logLine(server, (line) => line.level === 40 && /REDIS_URL/.test(line.msg));
    assert.equal(
      warning.msg,
      `cannot reach Redis at redis://127.0.0.1:${port}/3 (REDIS_URL): rate limits are kept per instance until it is back`,
    );
    assert.equal((await fetch(`${server.url}/healthz`)).status, 200);
    assert.ok(!server.stdout().includes('s3cretpw'));
  });

  test('on PostgreSQL with Redis: both named without their passwords', async (t) => {
    const database = await createTestDatabase();
    t.after(() => database.drop());
    const server = await startServer({
      ...logEnv,
      DATABASE_URL: database.url,
      REDIS_URL: redisTestUrl,
      IX_REDIS_PREFIX: `ix-opcfg-${process.pid}`,
      IX_MASTER_KEY: testMasterKey(),
    });
    t.after(() => server.stop());
    const summary = await logLine(server, isSummary);
    const expected = new URL(database.url);
    expected.password = '';
    assert.equal(summary.storage, 'postgres');
    assert.equal(summary.database, expected.href);
    assert.equal(summary.redis, displayUrl(redisTestUrl));
    // Stopped here, not by t.after, so that its pool has closed before the database is dropped.
    await server.stop();
  });
});

describe('LOG_FORMAT=pretty', () => {
  test('human-readable lines, not JSON, with the summary and its fields', async (t) => {
    const db = tempDatabase();
    t.after(db.cleanup);
    const server = await startServer({ ...db.env, LOG_LEVEL: 'info', LOG_FORMAT: 'pretty' });
    t.after(() => server.stop());
    await until(
      () => server.stdout().includes('masterKey'),
      () => `the summary's masterKey field in:\n${server.stdout()}`,
    );
    const lines = server
      .stdout()
      .split('\n')
      .filter((line) => line.trim() !== '');
    assert.ok(
      lines.some((line) => line.includes(`INFO`) && line.includes(`Interchange ${version} listening on ${server.url}: API`)),
      server.stdout(),
    );
    assert.ok(
      lines.some((line) => /masterKey: "created /.test(line)),
      server.stdout(),
    );
    for (const line of lines) assert.throws(() => JSON.parse(line), SyntaxError, `not JSON: ${line}`);
  });
});
