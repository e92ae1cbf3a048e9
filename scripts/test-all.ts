/**
 * `npm test`'s tiers, in two lanes at once: the in-process tiers (unit, api, api:pg: the app through inject, CPU-bound)
 * beside the tiers that mostly wait on other processes (system, interop, browser: restarts, heartbeats, PHP, Java,
 * chromium). Each tier runs through its own npm script, as `npm run test:<tier>` would, with its whole report written
 * to test-artifacts/test-logs/<tier>.log; a line says when each ends, and the report of a tier that failed is printed
 * whole at the end. Exits non-zero when any tier failed.
 *
 * `IX_TEST_LANES=1` runs the tiers one after another, in the order below, as `npm test` did before (README: Running the tests).
 */
import { spawn } from 'node:child_process';
import { createWriteStream, mkdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

const lanes = [
  ['unit', 'api', 'api:pg'],
  ['system', 'interop', 'browser'],
];

const root = resolve(import.meta.dirname, '..');
const logs = join(root, 'test-artifacts/test-logs');
mkdirSync(logs, { recursive: true });
const started = performance.now();
const seconds = (from: number) => `${((performance.now() - from) / 1000).toFixed(0)} s`;

/** Runs `npm run test:<tier>`, its output to its log; resolves to whether it passed. */
function runTier(tier: string): Promise<{ tier: string; passed: boolean; log: string }> {
  const log = join(logs, `${tier.replace(':', '-')}.log`);
  const out = createWriteStream(log);
  const tierStarted = performance.now();
  console.log(`test:${tier} started (${seconds(started)} in)`);
  return new Promise((done) => {
    const child = spawn('npm', ['run', `test:${tier}`], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout.pipe(out, { end: false });
    child.stderr.pipe(out, { end: false });
    child.on('close', (code) => {
      out.end(() => {
        const passed = code === 0;
        const counts = readFileSync(log, 'utf8').match(/^ℹ (pass|fail) \d+$/gm) ?? [];
        console.log(
          `test:${tier} ${passed ? 'passed' : 'FAILED'} in ${seconds(tierStarted)} (${counts.join(', ').replaceAll('ℹ ', '')}); its report: ${log}`,
        );
        done({ tier, passed, log });
      });
    });
  });
}

async function runLane(tiers: string[]) {
  const results = [];
  for (const tier of tiers) results.push(await runTier(tier));
  return results;
}

const results =
  process.env.IX_TEST_LANES === '1'
    ? await runLane(lanes.flat())
    : (await Promise.all(lanes.map((lane) => runLane(lane)))).flat();
const failed = results.filter((result) => !result.passed);
for (const { tier, log } of failed) {
  console.log(`\n==== test:${tier} failed; its whole report (${log}):\n`);
  console.log(readFileSync(log, 'utf8'));
}
console.log(`\nnpm test: ${results.length - failed.length} of ${results.length} tiers passed in ${seconds(started)}`);
process.exit(failed.length > 0 ? 1 : 0);
