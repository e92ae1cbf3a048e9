import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { delimiter, join, resolve } from 'node:path';
import { after, before, test } from 'node:test';
import { type Json, type ServerProcess, startServer, tempDatabase } from '../support/processes.ts';
import { until } from '../support/until.ts';

const root = resolve(import.meta.dirname, '../..');
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

/** `npm run demo:upstreams`, as the README has a reader start it, on free ports: where its two servers listen. */
let demo: ChildProcess;
let graphqlUrl: string;
let soapUrl: string;
let server: ServerProcess;
const database = tempDatabase();

before(async () => {
  demo = spawn(process.execPath, [join(root, 'scripts/demo-upstreams.ts')], {
    cwd: root,
    env: { ...process.env, DEMO_GRAPHQL_PORT: '0', DEMO_SOAP_PORT: '0' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let printed = '';
  demo.stdout?.on('data', (chunk) => {
    printed += String(chunk);
  });
  await until(
    () => printed.includes('Ctrl-C'),
    () => `demo:upstreams printed: ${printed}`,
  );
  graphqlUrl = (/^GraphQL +(\S+)/m.exec(printed) as RegExpExecArray)[1];
  soapUrl = (/^SOAP +(\S+)/m.exec(printed) as RegExpExecArray)[1];
  server = await startServer(database.env);
});
after(async () => {
  await server?.stop();
  demo?.kill('SIGTERM');
  database.cleanup();
});

test('the README’s quick start runs as written, against npm run demo:upstreams: every answer as it says', async () => {
  const key = shBlockAfter('### A tenant and an API key');
  const graphql = shBlockAfter('### A first GraphQL call');
  const soap = shBlockAfter('### A first SOAP call');
  const people = shBlockAfter('### The console');
  const script = [
    'set -euo pipefail',
    // One line per answer: curl prints bodies without a newline.
    'curl() { command curl -w \'\\n\' "$@"; }',
    pointing(key, 'IX', server.url),
    pointing(graphql, 'GRAPHQL_URL', new URL(graphqlUrl).origin),
    pointing(soap, 'SOAP_URL', `'${soapUrl}'`),
    people,
  ].join('\n');
  const run = await bash(script, database.env);
  assert.equal(run.code, 0, `${run.stderr}\n${run.stdout}`);

  const answers: Json[] = run.stdout
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line));
  // /me; PUT integration, execute, executions; PUT integration, Add, Add without b.
  assert.equal(answers.length, 7, run.stdout);
  const [me, integration, executed, executions, calc, added, refused] = answers;
  for (const answer of [me, integration, executed, executions, calc, added])
    assert.equal(answer.success, true, JSON.stringify(answer));
  assert.equal(me.data.tenant.id, 'acme');
  assert.equal(integration.data.id, 'people');
  // 25 users in pages of 10: three pages.
  assert.deepEqual([executed.data.message_count, executed.data.total_size, executed.data.pages], [25, 25, 3]);
  assert.deepEqual(executed.data.data[0], { id: '1', name: 'User 1' });
  assert.deepEqual(
    executions.data.map((e: Json) => [e.integration_id, e.operation, e.status]),
    [['people', 'receive', 'succeeded']],
  );
  assert.equal(calc.data.id, 'calc');
  assert.deepEqual(added.data, { AddResult: 5 });
  assert.equal(refused.success, false);
  assert.equal(refused.error.code, 'invalid_soap_params');
  assert.equal(refused.error.details.issues[0].path, 'params.b');

  // The person the console block made signs in with that password, as the owner of acme.
  const password = /printf '%s\\n' '([^']+)'/.exec(people)?.[1] as string;
  const signIn = await fetch(`${server.url}/api/v1/auth/sign-in`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: 'ada@example.com', password }),
  });
  assert.equal(signIn.status, 200);
  const session = (await signIn.json()) as Json;
  assert.deepEqual(
    session.data.memberships.map((m: Json) => [m.tenant_id ?? m.tenant?.id, m.role]),
    [['acme', 'owner']],
  );
});
