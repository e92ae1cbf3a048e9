import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { exited, killGroup, stopGroup } from './fixture-process.ts';
import { freePort } from './processes.ts';

/**
 * A real, non-Node SOAP upstream for the SOAP connector's tests: PHP's built-in SoapServer behind
 * `php -S` and test/support/fixtures/soap/router.php (which lists every path it serves).
 */
export interface PhpSoapServer {
  /** `http://127.0.0.1:PORT` */
  origin: string;
  /** `origin` + `path`, e.g. `url('/calculator?wsdl')`. */
  url(path: string): string;
  /** Every request received so far (except the helper's readiness probes), in order. */
  log(): SoapLogEntry[];
  /** Forgets the requests logged so far. */
  clearLog(): void;
  close(): Promise<void>;
}

export interface PhpSoapServerOptions {
  /** When set, every request without `X-Auth-Token: <requireToken>` gets a plain-text 401. */
  requireToken?: string;
}

/** One request as router.php saw it (a `type`, so that it is a `Record<string, unknown>`). */
export type SoapLogEntry = {
  /** Unix time in seconds, with microseconds. */
  time: number;
  method: string;
  /** The path without the query string, e.g. `/calculator`. */
  path: string;
  /** The query string without `?` (`''` when none), e.g. `wsdl` or `wsdl&ops=300`. */
  query: string;
  /** Header values as received, `null` when absent. */
  authToken: string | null;
  authorization: string | null;
  /** PHP's own decoding of a Basic Authorization header (PHP_AUTH_USER, PHP_AUTH_PW), `null` when there is none. */
  basicUser: string | null;
  basicPassword: string | null;
  soapAction: string | null;
  contentType: string | null;
  /** The request body (`''` for a GET). */
  body: string;
};

const fixtures = resolve(import.meta.dirname, './fixtures/soap');
/** Forked workers: a `Slow` call holds one, so the others keep answering. */
const workers = 8;

/** Process groups still running and their log folders; killed and removed when the test process exits. */
const running = new Set<number>();
const logDirs = new Set<string>();
process.on('exit', () => {
  for (const pid of running) killGroup(pid, 'SIGKILL');
  for (const dir of logDirs) rmSync(dir, { recursive: true, force: true });
});

let phpChecked = false;

function assertPhpWithSoap(): void {
  if (phpChecked) return;
  let modules: string;
  try {
    modules = execFileSync('php', ['-m'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
  } catch {
    throw new Error('The SOAP tests need PHP with the soap extension: `php` was not found. Install php-cli php-soap.');
  }
  if (!/^soap$/im.test(modules)) {
    throw new Error('The SOAP tests need PHP with the soap extension: `php -m` does not list soap. Install php-cli php-soap.');
  }
  phpChecked = true;
}

/**
 * Starts `php -S 127.0.0.1:<free port> router.php` and resolves once it answers. The port is picked
 * here, so another process may take it first: then it tries again on another.
 *
 * @example const soap = await startPhpSoapServer(); await fetch(soap.url('/calculator?wsdl')); … await soap.close();
 */
export async function startPhpSoapServer(options: PhpSoapServerOptions = {}): Promise<PhpSoapServer> {
  assertPhpWithSoap();
  const logDir = mkdtempSync(join(tmpdir(), 'ix-soap-'));
  logDirs.add(logDir);
  const logFile = join(logDir, 'requests.jsonl');
  // The WSDL copies SoapServer loads go in the same folder, removed on close: nothing is left in the system temp folder.
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PHP_CLI_SERVER_WORKERS: String(workers),
    SOAP_LOG_FILE: logFile,
    SOAP_WSDL_DIR: logDir,
  };
  delete env.SOAP_REQUIRE_TOKEN;
  if (options.requireToken !== undefined) env.SOAP_REQUIRE_TOKEN = options.requireToken;

  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    const origin = `http://127.0.0.1:${port}`;
    const child = spawn(
      'php',
      ['-d', 'soap.wsdl_cache_enabled=0', '-d', 'display_errors=stderr', '-S', `127.0.0.1:${port}`, 'router.php'],
      // Its own process group: the workers are forked children that outlive a killed parent.
      { cwd: fixtures, env, detached: true, stdio: ['ignore', 'ignore', 'pipe'] },
    );
    let stderr = '';
    child.once('error', (error) => {
      stderr += `${error}\n`;
    });
    const pid = child.pid;
    if (pid === undefined) throw new Error(`could not spawn php: ${stderr}`);
    running.add(pid);
    child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
      stderr = (stderr + chunk).slice(-20_000);
    });
    // Neither keeps the test process alive; the exit handler above kills the group.
    child.unref();
    (child.stderr as unknown as { unref?: () => void } | null)?.unref?.();

    const stop = async () => {
      await stopGroup(child, pid);
      running.delete(pid);
    };
    try {
      await waitUntilReady(origin, child, () => stderr);
    } catch (error) {
      await stop();
      if (attempt < 5 && stderr.includes('Address already in use')) continue;
      removeDir(logDir);
      throw error;
    }
    return {
      origin,
      url: (path: string) => `${origin}${path.startsWith('/') ? '' : '/'}${path}`,
      log: () => readLog(logFile),
      clearLog: () => writeFileSync(logFile, ''),
      async close() {
        await stop();
        removeDir(logDir);
      },
    };
  }
}

function removeDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
  logDirs.delete(dir);
}

function readLog(file: string): SoapLogEntry[] {
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as SoapLogEntry);
}

// A ceiling, not a bound: the wait includes a process start-up, which a loaded machine can make slow.
async function waitUntilReady(origin: string, child: ChildProcess, stderr: () => string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (exited(child)) throw new Error(`php -S exited (${child.exitCode ?? child.signalCode}) before answering:\n${stderr()}`);
    try {
      const response = await fetch(`${origin}/__ready`);
      await response.arrayBuffer();
      if (response.ok) return;
    } catch {
      // Not listening yet.
    }
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`php -S did not answer within ${timeoutMs} ms:\n${stderr()}`);
}
