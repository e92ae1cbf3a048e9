import { type ChildProcess, spawn } from 'node:child_process';
import { freePort } from './processes.ts';

/**
 * A non-Node upstream for the tests, run as a process of its own on 127.0.0.1 (a spyne service, `php -S`
 * with a router): started on a free port, ready once a path answers 200, killed with its whole process group.
 */
export interface FixtureProcess {
  /** `http://127.0.0.1:PORT` */
  origin: string;
  /** `origin` + `path`, e.g. `url('/?wsdl')`. */
  url(path: string): string;
  /** What the process wrote to stderr so far (the last 20 kB). */
  stderr(): string;
  close(): Promise<void>;
}

export interface FixtureProcessOptions {
  /** What it is, for error messages, e.g. `spyne`. */
  name: string;
  command: string;
  args(port: number): string[];
  cwd: string;
  env?: NodeJS.ProcessEnv;
  /** Polled until it answers 200, e.g. `/?wsdl`. */
  readyPath: string;
}

/** A ceiling, not a bound: the wait includes a process start-up (Python importing spyne and lxml), which a loaded machine makes slow. */
const readyCeilingMs = 60_000;
const stopCeilingMs = 2_000;

/** Process groups still running; killed when the test process exits, whatever happened. */
const running = new Set<number>();
process.on('exit', () => {
  for (const pid of running) killGroup(pid, 'SIGKILL');
});

/**
 * Spawns `command args(port)` in its own process group and resolves once `readyPath` answers 200. The port is
 * picked here, so another process may take it first: then it tries again on another.
 *
 * @example const spyne = await startFixtureProcess({ name: 'spyne', command: '/usr/bin/python3', args: (p) => ['service.py', String(p)], cwd, readyPath: '/?wsdl' });
 */
export async function startFixtureProcess(options: FixtureProcessOptions): Promise<FixtureProcess> {
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    const origin = `http://127.0.0.1:${port}`;
    const child = spawn(options.command, options.args(port), {
      cwd: options.cwd,
      env: options.env ?? process.env,
      // Its own process group: whatever it forks goes with it.
      detached: true,
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.once('error', (error) => {
      stderr += `${error}\n`;
    });
    child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
      stderr = (stderr + chunk).slice(-20_000);
    });
    const pid = child.pid;
    if (pid === undefined) {
      await new Promise((r) => setImmediate(r));
      throw new Error(`could not spawn ${options.name} (${options.command}): ${stderr}`);
    }
    running.add(pid);
    // Neither keeps the test process alive; close() or the exit handler above kills the group.
    child.unref();
    (child.stderr as unknown as { unref?: () => void } | null)?.unref?.();
    const close = async () => {
      await stopGroup(child, pid);
      running.delete(pid);
    };
    try {
      await waitUntilReady(`${origin}${options.readyPath}`, child, options.name, () => stderr);
    } catch (error) {
      await close();
      if (attempt < 5 && stderr.includes('Address already in use')) continue;
      throw error;
    }
    return {
      origin,
      url: (path: string) => `${origin}${path.startsWith('/') ? '' : '/'}${path}`,
      stderr: () => stderr,
      close,
    };
  }
}

export function exited(child: ChildProcess): boolean {
  return child.exitCode !== null || child.signalCode !== null;
}

async function waitUntilReady(url: string, child: ChildProcess, name: string, stderr: () => string): Promise<void> {
  const deadline = Date.now() + readyCeilingMs;
  while (Date.now() < deadline) {
    if (exited(child)) throw new Error(`${name} exited (${child.exitCode ?? child.signalCode}) before answering:\n${stderr()}`);
    try {
      const response = await fetch(url);
      await response.arrayBuffer();
      if (response.ok) return;
    } catch {
      // Not listening yet.
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`${name} did not answer ${url} within ${readyCeilingMs} ms:\n${stderr()}`);
}

export function killGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // Already gone.
  }
}

/** SIGTERM to the group; SIGKILL if the process is still there after 2 s. */
export async function stopGroup(child: ChildProcess, pid: number): Promise<void> {
  killGroup(pid, 'SIGTERM');
  if (!exited(child)) {
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      new Promise((r) => child.once('exit', r)),
      new Promise((r) => {
        timer = setTimeout(r, stopCeilingMs);
      }),
    ]);
    clearTimeout(timer);
  }
  killGroup(pid, 'SIGKILL');
}
