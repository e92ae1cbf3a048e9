/**
 * The processes of bench/execute-path.ts: each server and the load generator run in one of their own, so that
 * none takes CPU time from another in the same event loop. Every child started here is killed when the bench
 * process exits, however it exits.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

export interface Child {
  process: ChildProcess;
  pid: number;
  stdout(): string;
  /** The last 4 kB the child wrote to stderr. */
  stderr(): string;
  /** Its exit code once it has exited (null when a signal ended it). */
  exited: Promise<number | null>;
  /** SIGTERM, SIGKILL after 5 s; resolves once it has exited. */
  stop(): Promise<void>;
}

const running = new Set<ChildProcess>();
// Variables the service reads: a child gets the ones the bench gives it, never the shell's.
const serviceVariable = /^(HOST|PORT|DATABASE_URL|REDIS_URL|LOG_LEVEL|LOG_FORMAT|METRICS_PORT|IX_.*|OTEL_.*|NODE_OPTIONS)$/;
process.on('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

/**
 * The Node flags the service runs with (package.json's `start` script, the same as bin/interchange.js's shebang):
 * Interchange's processes in the bench run with them, so that it measures the service as it is shipped.
 */
export const serviceNodeFlags: string[] = (() => {
  const manifest = JSON.parse(readFileSync(join(import.meta.dirname, '../package.json'), 'utf8')) as {
    scripts: { start: string };
  };
  const flags = /^node (.*?) ?bin\/interchange\.js serve$/.exec(manifest.scripts.start)?.[1];
  if (flags === undefined) throw new Error(`package.json's start script is not "node [flags] bin/interchange.js serve"`);
  return flags === '' ? [] : flags.split(' ');
})();

/** The scripts that run Interchange itself (not a baseline): they get serviceNodeFlags. */
const serviceScript = /(servers\/interchange\.ts|bin\/interchange\.js)$/;

/**
 * The compile cache bin/interchange.js uses, given to every child: the TypeScript servers of the bench then run, as
 * the service does, without the type stripper in memory (once the cache holds them).
 */
export const compileCache = join(import.meta.dirname, '../node_modules/.cache/interchange');

/** Runs `node script …args` with the Node that runs the bench and `env` (and serviceNodeFlags for Interchange's own scripts), its output captured. */
export function spawnNode(script: string, args: string[] = [], env: NodeJS.ProcessEnv = {}): Child {
  const base = Object.fromEntries(Object.entries(process.env).filter(([name]) => !serviceVariable.test(name)));
  const flags = serviceScript.test(script) ? serviceNodeFlags : [];
  const child = spawn(process.execPath, [...flags, script, ...args], {
    env: { NODE_COMPILE_CACHE: compileCache, ...base, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  running.add(child);
  let stdout = '';
  let stderr = '';
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
    stdout += chunk;
  });
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    stderr = (stderr + chunk).slice(-4000);
  });
  const exited = new Promise<number | null>((resolve) =>
    // 'close', not 'exit': by then stdout has been read to its end.
    child.once('close', (code) => {
      running.delete(child);
      resolve(code);
    }),
  );
  const stop = async () => {
    if (!running.has(child)) return;
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
    await exited;
    clearTimeout(timer);
  };
  return { process: child, pid: child.pid ?? 0, stdout: () => stdout, stderr: () => stderr, exited, stop };
}

/** Starts a server script; resolves once it has printed its first stdout line, parsed as JSON. */
export async function startServer<T>(script: string, args: string[] = [], env: NodeJS.ProcessEnv = {}) {
  const child = spawnNode(script, args, env);
  const line = await new Promise<string>((resolve, reject) => {
    child.process.stdout?.on('data', () => {
      const newline = child.stdout().indexOf('\n');
      if (newline >= 0) resolve(child.stdout().slice(0, newline));
    });
    child.exited.then((code) => reject(new Error(`${script} exited (${code}) before it was ready: ${child.stderr()}`)));
  });
  return { child, info: JSON.parse(line) as T };
}

/** Runs a script to its end; its stdout, or a rejection when it exits other than 0. */
export async function runToEnd(script: string, args: string[], env: NodeJS.ProcessEnv = {}): Promise<string> {
  const child = spawnNode(script, args, env);
  const code = await child.exited;
  if (code !== 0) throw new Error(`${script} ${args.join(' ')} exited ${code}: ${child.stderr()}`);
  return child.stdout();
}

/** A process's resident memory in MiB, from /proc (Linux): VmRSS now, or VmHWM, its peak so far. */
export function rssMiB(pid: number, field: 'VmRSS' | 'VmHWM' = 'VmRSS'): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8')
    .split('\n')
    .find((l) => l.startsWith(`${field}:`));
  return Number(line?.replace(/\D+/g, '') ?? 0) / 1024;
}
