import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './processes.ts';

/** A running Debian tinyproxy, a real forwarding proxy: its URL and what it has logged. */
export interface Tinyproxy {
  /** `http://127.0.0.1:<port>` */
  readonly url: string;
  /** Everything tinyproxy logged so far (it logs to stdout in the foreground, one line per event). */
  log(): string;
  /** The `CONNECT host:port` requests it received, in order. */
  connects(): string[];
  /** Every connection a client opened to it (counted before it reads a request). */
  connections(): number;
  stop(): Promise<void>;
}

/** Killed when the test process exits, whatever happened. */
const running = new Set<ChildProcess>();
process.on('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

/**
 * Starts `tinyproxy -d` with a config in a temp folder: listening on 127.0.0.1 only, admitting only 127.0.0.1 as a
 * client, and opening CONNECT tunnels only to `connectPorts`; with `basicAuth`, only for a client that sends those
 * credentials (Proxy-Authorization). Resolves once it accepts connections.
 */
export async function startTinyproxy(
  connectPorts: number[],
  options: { basicAuth?: { user: string; password: string } } = {},
): Promise<Tinyproxy> {
  const dir = mkdtempSync(join(tmpdir(), 'ix-tinyproxy-'));
  const port = await freePort();
  const config = [
    `Port ${port}`,
    'Listen 127.0.0.1',
    'Timeout 30',
    'LogLevel Info',
    'MaxClients 20',
    'Allow 127.0.0.1',
    ...connectPorts.map((connectPort) => `ConnectPort ${connectPort}`),
    ...(options.basicAuth ? [`BasicAuth ${options.basicAuth.user} ${options.basicAuth.password}`] : []),
    '',
  ];
  writeFileSync(join(dir, 'tinyproxy.conf'), config.join('\n'));
  const child = spawn('tinyproxy', ['-d', '-c', join(dir, 'tinyproxy.conf')], { stdio: ['ignore', 'pipe', 'pipe'] });
  running.add(child);
  let output = '';
  const collect = (chunk: string) => {
    output += chunk;
  };
  child.stdout.setEncoding('utf8').on('data', collect);
  child.stderr.setEncoding('utf8').on('data', collect);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  await new Promise<void>((resolve, reject) => {
    const check = () => {
      if (output.includes('Accepting connections')) resolve();
      else if (child.exitCode !== null) reject(new Error(`tinyproxy did not start:\n${output}`));
      else setTimeout(check, 20);
    };
    check();
  });
  return {
    url: `http://127.0.0.1:${port}`,
    log: () => output,
    connects: () => [...output.matchAll(/Request \(file descriptor \d+\): CONNECT (\S+) HTTP/g)].map((match) => match[1]),
    connections: () => (output.match(/Connect \(file descriptor \d+\)/g) ?? []).length,
    stop: async () => {
      child.kill('SIGTERM');
      await exited;
      running.delete(child);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
