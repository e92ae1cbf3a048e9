import { type ChildProcess, spawn } from 'node:child_process';
import { freePort } from './processes.ts';

/** Killed when the test process exits, whatever happened. */
const running = new Set<ChildProcess>();
process.on('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

/**
 * `openssl s_server -www` on 127.0.0.1: OpenSSL's own TLS server, which answers a refused client certificate with the
 * alert (Node's https server closes without one). `args` are added to the command line; files are read from `cwd`.
 * Resolves with its https URL once it accepts connections.
 */
export async function startOpensslServer(cwd: string, args: string[]): Promise<{ url: string; stop(): Promise<void> }> {
  const port = await freePort();
  const child = spawn('openssl', ['s_server', '-accept', `127.0.0.1:${port}`, '-www', ...args], {
    cwd,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  running.add(child);
  let output = '';
  const collect = (chunk: Buffer) => {
    output += chunk.toString();
  };
  child.stdout.on('data', collect);
  child.stderr.on('data', collect);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  await new Promise<void>((resolve, reject) => {
    const check = () => {
      if (output.includes('ACCEPT')) resolve();
      else if (child.exitCode !== null) reject(new Error(`openssl s_server did not start:\n${output}`));
      else setTimeout(check, 20);
    };
    check();
  });
  return {
    url: `https://127.0.0.1:${port}/`,
    stop: async () => {
      child.kill('SIGTERM');
      await exited;
      running.delete(child);
    },
  };
}
