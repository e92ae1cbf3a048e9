import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import { runCli as main } from '../../src/cli/main.ts';
import type { Env, Json } from './processes.ts';

/** What a CLI command did: its exit code and everything it wrote. */
export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

// One command at a time: SQLite's driver is synchronous, so a second command's `BEGIN IMMEDIATE` on a file whose
// write lock an awaiting first one holds would block this whole process until busy_timeout, with the holder
// unable to go on. Separate processes (runCliProcess) wait for each other instead; here they take turns.
let queue: Promise<unknown> = Promise.resolve();

/**
 * Runs `interchange <args>` in this process, through the CLI's own entry (src/cli/main.ts), with `env` as its whole
 * environment and `input` as its standard input (empty otherwise): what a real process would print and exit with,
 * for a fraction of the cost. `serve` never returns, so it runs only as a process (runCliProcess, startServer).
 */
export function runCli(args: string[], env: Env = {}, options: { input?: string } = {}): Promise<CliResult> {
  if (args[0] === 'serve' && !args.includes('--help') && !args.includes('-h')) {
    throw new Error('serve does not return: run it with runCliProcess or startServer');
  }
  const run = async (): Promise<CliResult> => {
    let stdout = '';
    let stderr = '';
    const code = await main(args, {
      out: (text) => {
        stdout += `${text}\n`;
      },
      err: (text) => {
        stderr += `${text}\n`;
      },
      // As a process gets it from runCliProcess: the test's variables over LOG_LEVEL=warn, nothing from the shell.
      env: { LOG_LEVEL: 'warn', ...env },
      stdin: Readable.from(options.input === undefined ? [] : [Buffer.from(options.input)]),
    });
    return { code, stdout, stderr };
  };
  const result = queue.then(run);
  queue = result.catch(() => {});
  return result;
}

/** Runs a CLI command that must succeed with `--json` (in this process) and returns what it printed, parsed. */
export async function cliJson(args: string[], env: Env): Promise<Json> {
  const result = await runCli([...args, '--json'], env);
  if (result.code !== 0) throw new Error(`interchange ${args.join(' ')} exited ${result.code}: ${result.stderr}`);
  return JSON.parse(result.stdout);
}

/** A failure with `--json`: nothing on stdout, one line on stderr holding exactly `{"error": {"code", "message"}}`. */
export function assertJsonFailure(result: CliResult, exitCode: 1 | 2, code: string, message: RegExp): void {
  assert.equal(result.code, exitCode, result.stderr);
  assert.equal(result.stdout, '');
  assert.match(result.stderr, /^[^\n]+\n$/, 'one line on stderr');
  const body = JSON.parse(result.stderr);
  assert.deepEqual(Object.keys(body), ['error']);
  assert.deepEqual(Object.keys(body.error).sort(), ['code', 'message']);
  assert.equal(body.error.code, code);
  assert.match(body.error.message, message);
}
