import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { TestContext } from 'node:test';
import { migrate, openStorage } from '../../src/storage/database.ts';
import { insertTenant, type TenantType } from '../../src/storage/tenants.ts';
import type { CliResult } from './cli.ts';

/** The CLI entry point, run by the same Node that runs the tests. */
export const bin = resolve(import.meta.dirname, '../../bin/interchange.js');

export type Env = Record<string, string>;

/** Parsed JSON output, checked by the assertions that read it. */
// biome-ignore lint/suspicious/noExplicitAny: a test reads parsed JSON by its documented shape.
export type Json = any;

export interface ProcessResult extends CliResult {
  /** `performance.now()` when the process exited (its output may arrive a little later). */
  exitedAt: number;
}

export interface ServerProcess {
  /** `http://127.0.0.1:<port>` */
  url: string;
  child: ChildProcess;
  /** What the server wrote to stderr so far (what fails before or outside the logger: a refused start, a crash). */
  stderr(): string;
  /** What the server wrote to stdout so far: its log, one JSON line per entry (pino writes to stdout). */
  stdout(): string;
  /** SIGTERM, then the exit code once the process has exited; SIGKILL and a rejection after `timeoutMs` (default 30 s). */
  stop(timeoutMs?: number): Promise<number | null>;
}

/** Children still running; killed when the test process exits, whatever happened. */
const running = new Set<ChildProcess>();
process.on('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

// Variables the service reads: a test sets its own, never the ones of the shell that runs it.
const serviceVariable =
  /^(HOST|PORT|DATABASE_URL|REDIS_URL|LOG_LEVEL|LOG_FORMAT|METRICS_PORT|IX_.*|OTEL_.*|NODE_TEST_CONTEXT|NODE_OPTIONS)$/;

function childEnv(env: Env): NodeJS.ProcessEnv {
  const base = Object.fromEntries(Object.entries(process.env).filter(([name]) => !serviceVariable.test(name)));
  return { ...base, LOG_LEVEL: 'warn', ...env };
}

function track(child: ChildProcess): ChildProcess {
  running.add(child);
  child.once('exit', () => running.delete(child));
  return child;
}

/** A fresh temp folder and the env that points DATABASE_URL at a SQLite file in it. */
export function tempDatabase(): { dir: string; env: Env; cleanup(): void } {
  const dir = mkdtempSync(join(tmpdir(), 'ix-proc-'));
  return {
    dir,
    env: { DATABASE_URL: `sqlite:${join(dir, 'ix.db')}` },
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/**
 * The env of a temp SQLite database for test `t` alone, removed when it ends. With `tenants` (id → type, named after
 * their id) it is migrated and they are written straight to storage, cheaper than a command each; without, the file
 * does not exist yet.
 */
export async function testDatabase(t: TestContext, tenants: Record<string, TenantType> = {}): Promise<Env> {
  const db = tempDatabase();
  t.after(db.cleanup);
  if (Object.keys(tenants).length > 0) {
    const storage = openStorage(db.env.DATABASE_URL);
    try {
      await migrate(storage);
      for (const [id, type] of Object.entries(tenants)) await insertTenant(storage.db, { id, name: id, type });
    } finally {
      await storage.close();
    }
  }
  return db.env;
}

/** A TCP port that was free a moment ago (listen on 0, read it, close). */
export function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolvePort(port));
    });
  });
}

/** Collects what a child writes to stdout and stderr, readable at any time. */
function captureOutput(child: ChildProcess): { stdout(): string; stderr(): string } {
  let stdout = '';
  let stderr = '';
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
    stdout += chunk;
  });
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
  });
  return { stdout: () => stdout, stderr: () => stderr };
}

/**
 * Generous ceilings for what includes a process's start-up or shutdown: on a loaded machine a Node
 * process can take seconds to start. They catch a process that hangs; they measure nothing.
 */
const startCeilingMs = 60_000;
const stopCeilingMs = 30_000;

/**
 * Runs `interchange <args>` as a process, to completion; one that runs past `timeoutMs` (default 60 s) is killed (code
 * null). `input` is written to its standard input (otherwise it has none). For what only a process shows (its exit,
 * stdio, signals, working folder, several at once on one file); test a command's logic with runCli (test/support/cli.ts).
 */
export function runCliProcess(
  args: string[],
  env: Env,
  options: { cwd?: string; timeoutMs?: number; input?: string } = {},
): Promise<ProcessResult> {
  return new Promise((resolveResult, reject) => {
    const stdin = options.input === undefined ? 'ignore' : 'pipe';
    const child = track(
      spawn(process.execPath, [bin, ...args], { env: childEnv(env), cwd: options.cwd, stdio: [stdin, 'pipe', 'pipe'] }),
    );
    if (options.input !== undefined) child.stdin?.end(options.input);
    const output = captureOutput(child);
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? startCeilingMs);
    let exitedAt = 0;
    child.once('exit', () => {
      exitedAt = performance.now();
      clearTimeout(timer);
    });
    child.once('error', reject);
    // Resolved on 'close', not 'exit': stdout and stderr are complete only then.
    child.once('close', (code) => resolveResult({ code, stdout: output.stdout(), stderr: output.stderr(), exitedAt }));
  });
}

function exited(child: ChildProcess): Promise<number | null> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(child.exitCode);
  return new Promise((resolveCode) => child.once('exit', (code) => resolveCode(code)));
}

async function waitUntilHealthy(url: string, child: ChildProcess, stderr: () => string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let gone = false;
  const exit = exited(child).then((code) => {
    gone = true;
    return code;
  });
  while (Date.now() < deadline) {
    if (gone) throw new Error(`server exited with ${await exit} before /healthz answered:\n${stderr()}`);
    try {
      const response = await fetch(`${url}/healthz`);
      if (response.ok) return;
    } catch {
      // Not listening yet.
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  child.kill('SIGKILL');
  throw new Error(`server did not answer /healthz within ${timeoutMs} ms:\n${stderr()}`);
}

/**
 * Starts `interchange serve` on a free port and resolves once /healthz answers (polled, for up to
 * `timeoutMs`, default 60 s). The port is picked by the caller's process, so another process may take
 * it first: then it tries again on another.
 */
export async function startServer(
  env: Env,
  options: { cwd?: string; timeoutMs?: number /** Another Node to start bin/interchange.js with. */; node?: string } = {},
): Promise<ServerProcess> {
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    const child = track(
      spawn(options.node ?? process.execPath, [bin, 'serve'], {
        env: childEnv({ HOST: '127.0.0.1', ...env, PORT: String(port) }),
        cwd: options.cwd,
        stdio: ['ignore', 'pipe', 'pipe'],
      }),
    );
    const output = captureOutput(child);
    try {
      await waitUntilHealthy(url, child, output.stderr, options.timeoutMs ?? startCeilingMs);
    } catch (error) {
      if (attempt < 3 && output.stderr().includes('EADDRINUSE')) continue;
      throw error;
    }
    return {
      url,
      child,
      stderr: output.stderr,
      stdout: output.stdout,
      async stop(timeoutMs = stopCeilingMs) {
        if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
        child.kill('SIGTERM');
        let timer: NodeJS.Timeout | undefined;
        const timeout = new Promise<never>((_, reject) => {
          timer = setTimeout(() => {
            child.kill('SIGKILL');
            reject(new Error(`server did not exit within ${timeoutMs} ms of SIGTERM:\n${output.stderr()}`));
          }, timeoutMs);
        });
        try {
          return await Promise.race([exited(child), timeout]);
        } finally {
          clearTimeout(timer);
        }
      },
    };
  }
}

/** Kills whatever a test left running (for `after` hooks); a no-op when everything has stopped. */
export function killAll(): void {
  for (const child of running) child.kill('SIGKILL');
}
