/**
 * `npm run test:api:pg`: the test files that store through the app, run again on PostgreSQL (the script sets
 * IX_TEST_STORAGE=postgres; test/support/harness.ts then gives each file a fresh database on the server that
 * scripts/test-services.sh starts). Extra arguments go to `node --test`.
 *
 * That is every file of test/api/, read from the folder, and the few below: they store through the app as well, but
 * need something of a later tier besides, so they live in that tier's folder (and run there on SQLite). This list is
 * the one place that says which files of the other tiers run on both storages; a listed file that is not there stops
 * the run.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

const alsoOnPostgres = [
  // One test starts a server process (that one is skipped on PostgreSQL).
  'test/system/execute-limits.test.ts',
  // Two app instances share the test Redis.
  'test/system/sign-in-limits.test.ts',
  // graphene 2 (Python) is one of the two upstreams.
  'test/interop/graphql-schema-aware.test.ts',
  // PHP's SoapServer is the SOAP upstream.
  'test/interop/upstream-auth.test.ts',
  // xmlsec1 and Python check what is sent.
  'test/interop/upstream-ws-security.test.ts',
];

const missing = alsoOnPostgres.filter((file) => !existsSync(file));
if (missing.length > 0) {
  console.error(`scripts/test-postgres.ts lists files that are not there: ${missing.join(', ')}`);
  process.exit(1);
}
const apiFiles = readdirSync('test/api', { recursive: true, encoding: 'utf8' })
  .filter((name) => name.endsWith('.test.ts'))
  .map((name) => join('test/api', name))
  .sort();

const run = spawnSync(process.execPath, ['--test', ...process.argv.slice(2), ...apiFiles, ...alsoOnPostgres], {
  stdio: 'inherit',
  env: { ...process.env, IX_TEST_STORAGE: 'postgres' },
});
process.exit(run.status ?? 1);
