/**
 * `npm run test:times [-- tier ...]`: runs the test tiers named (by default all of them, in `npm test`'s order, without
 * its type check and lint), each through its own npm script with test/support/file-times-reporter.ts beside the usual
 * report, then prints the 20 slowest test files with their tier. The times stay in test-artifacts/test-times/, one
 * file per tier. Exits non-zero when a tier failed; the times are printed all the same.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { FileTime } from '../test/support/file-times-reporter.ts';

const allTiers = ['unit', 'api', 'api:pg', 'system', 'interop', 'browser'];
const shown = 20;

const tiers = process.argv.slice(2);
const unknown = tiers.filter((tier) => !allTiers.includes(tier));
if (unknown.length > 0) {
  console.error(`unknown tier ${unknown.join(', ')}: the tiers are ${allTiers.join(', ')}`);
  process.exit(2);
}

const root = resolve(import.meta.dirname, '..');
const reporter = join(root, 'test/support/file-times-reporter.ts');
const dir = join(root, 'test-artifacts/test-times');
mkdirSync(dir, { recursive: true });

let failed = false;
const times: FileTime[] = [];
for (const tier of tiers.length > 0 ? tiers : allTiers) {
  const record = join(dir, `${tier.replace(':', '-')}.jsonl`);
  rmSync(record, { force: true });
  // Through NODE_OPTIONS, so that the tier's own script stays the one command: the runner reads its reporters there.
  // The spec reporter is named again, since naming one replaces the default.
  const reporters = `--test-reporter=spec --test-reporter-destination=stdout --test-reporter="${reporter}" --test-reporter-destination="${record}"`;
  const run = spawnSync('npm', ['run', `test:${tier}`], {
    cwd: root,
    stdio: 'inherit',
    env: { ...process.env, NODE_OPTIONS: [process.env.NODE_OPTIONS, reporters].filter(Boolean).join(' ') },
  });
  if (run.status !== 0) failed = true;
  try {
    for (const line of readFileSync(record, 'utf8').split('\n')) if (line !== '') times.push(JSON.parse(line));
  } catch {
    console.error(`test:times: no times from test:${tier}`);
  }
}

times.sort((a, b) => b.ms - a.ms);
const total = times.reduce((sum, time) => sum + time.ms, 0);
console.log(`\nThe ${Math.min(shown, times.length)} slowest of ${times.length} test files (wall time of each file's process;`);
console.log(`${(total / 1000).toFixed(0)} s in all, run two at a time), from ${dir}:`);
for (const time of times.slice(0, shown)) {
  const seconds = `${(time.ms / 1000).toFixed(1)} s`.padStart(8);
  console.log(`${seconds}  ${time.tier.padEnd(11)} ${time.file}${time.passed ? '' : '  (failed)'}`);
}
process.exit(failed ? 1 : 0);
