import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { delimiter, join, resolve } from 'node:path';
import { after, before, test } from 'node:test';
import { type GraphqlServer, startGraphqlServer } from './helpers/graphql-server.ts';
import { type Json, type ServerProcess, startServer, tempDatabase } from './helpers/processes.ts';

const root = resolve(import.meta.dirname, '..');
const readme = readFileSync(join(root, 'README.md'), 'utf8');

/** The first ```sh block after `marker` in the README, as written. */
function shBlockAfter(marker: string): string {
  const at = readme.indexOf(marker);
  assert.ok(at >= 0, `the README has no "${marker}"`);
  const block = /```sh\n([\s\S]*?)```/.exec(readme.slice(at));
  assert.ok(block, `no sh block after "${marker}"`);
  return block[1];
}

/** Replaces the one line that sets `name` (the test's own server and upstream instead of the reader's). */
function pointing(block: string, name: string, value: string): string {
  const line = new RegExp(`^${name}=\\S+$`, 'm');
  assert.match(block, line, `the block sets ${name} on a line of its own`);
  return block.replace(line, `${name}=${value}`);
}

/** Runs a bash script in the checkout with the project's Node first on PATH; its output and exit code. */
function bash(script: string, env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolveRun, reject) => {
    const child = spawn('bash', ['-c', script], {
      cwd: root,
      env: { ...process.env, ...env, PATH: `${join(root, 'node_modules/.bin')}${delimiter}${process.env.PATH}` },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => {
      stdout += String(chunk);
    });
    child.stderr.on('data', (chunk) => {
      stderr += String(chunk);
    });
    child.once('error', reject);
    child.once('close', (code) => resolveRun({ code, stdout, stderr }));
  });
}

let upstream: GraphqlServer;
let server: ServerProcess;
const database = tempDatabase();

before(async () => {
  upstream = await startGraphqlServer();
  server = await startServer(database.env);
});
after(async () => {
  await server?.stop();
  await upstream?.close();
  database.cleanup();
});

test('the README’s quick start and GraphQL walkthrough run as written, every answer a success', async () => {
  const quickStart = pointing(shBlockAfter('Create a tenant and a key with the CLI'), 'IX', server.url);
  const graphql = pointing(shBlockAfter('### Run a GraphQL integration end to end'), 'GRAPHQL_URL', upstream.url);
  // One line per answer: curl prints bodies without a newline.
  const script = ['set -euo pipefail', 'curl() { command curl -w \'\\n\' "$@"; }', quickStart, graphql].join('\n');
  const run = await bash(script, database.env);
  assert.equal(run.code, 0, `${run.stderr}\n${run.stdout}`);

  const answers: Json[] = run.stdout
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line));
  // POST and GET entities, /me, PUT integration, execute, executions.
  assert.equal(answers.length, 6, run.stdout);
  for (const answer of answers) assert.equal(answer.success, true, JSON.stringify(answer));
  const [created, read, me, integration, executed, executions] = answers;
  assert.deepEqual(created.data, { entity_id: 'cust-1', name: 'First customer', status: 'active' });
  assert.deepEqual(read.data, created.data);
  assert.equal(me.data.tenant.id, 'acme');
  assert.deepEqual([integration.data.id, integration.data.config.token_set], ['people', true]);
  // 25 users in pages of 10: three pages.
  assert.deepEqual([executed.data.message_count, executed.data.total_size, executed.data.pages], [25, 25, 3]);
  assert.deepEqual(
    executions.data.map((e: Json) => [e.integration_id, e.operation, e.status]),
    [['people', 'receive', 'succeeded']],
  );
  // The upstream got the walkthrough's token.
  assert.equal(upstream.requests.at(-1)?.headers.authorization, 'Bearer upstream-token');
});
