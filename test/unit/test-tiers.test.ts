import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { test } from 'node:test';

/**
 * Each tier's npm script runs one folder of test/ (README.md, "Running the tests"): a test file anywhere else would
 * run in no tier, and fail nowhere.
 */
const testDir = resolve(import.meta.dirname, '..');
const tiers = ['unit', 'api', 'system', 'interop', 'browser'];

test('every test file is in a tier folder, which npm test runs', () => {
  const stray = readdirSync(testDir, { recursive: true, encoding: 'utf8' })
    .map((path) => path.split('\\').join('/'))
    .filter((path) => path.endsWith('.test.ts') && !tiers.includes(path.split('/')[0]));
  assert.deepEqual(stray, [], 'move these into test/unit, api, system, interop or browser');
});
