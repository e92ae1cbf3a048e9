import { execFileSync } from 'node:child_process';
import { chownSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './processes.ts';

/**
 * A PostgreSQL server of one test file's own, in a temp folder on a free port, so that the file can restart, stop and
 * start it under load without touching the server every other test shares (scripts/test-services.sh). Run as the
 * `postgres` user when the tests run as root (the server refuses root), with `fsync` off: its data is thrown away.
 */
export interface PrivatePostgres {
  /** `postgres://ix@127.0.0.1:<port>/<database>` (trust authentication on loopback). */
  url(database?: string): string;
  /** `pg_ctl restart -m fast`: every session is ended (57P01), then the server is back on the same address. */
  restart(): void;
  /** `pg_ctl stop -m fast`: sessions ended, new connections refused until start(). */
  stop(): void;
  start(): void;
  /** Stops the server and removes its folder. */
  remove(): void;
}

function binDir(): string {
  const versions = readdirSync('/usr/lib/postgresql').sort((a, b) => Number(a) - Number(b));
  const version = versions.at(-1);
  if (!version) throw new Error('PostgreSQL is not installed (apt-get install postgresql)');
  return `/usr/lib/postgresql/${version}/bin`;
}

export async function startPrivatePostgres(): Promise<PrivatePostgres> {
  const bin = binDir();
  const root = process.getuid?.() === 0;
  const dir = mkdtempSync(join(tmpdir(), 'ix-pg-'));
  const data = join(dir, 'data');
  if (root) {
    const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim());
    const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim());
    chownSync(dir, uid, gid);
  }
  // As the postgres user when root: each argument quoted for su's shell.
  const run = (program: string, args: string[]) => {
    const command = [join(bin, program), ...args];
    if (root) {
      const quoted = command.map((part) => `'${part.replaceAll("'", `'\\''`)}'`).join(' ');
      execFileSync('su', ['postgres', '-s', '/bin/sh', '-c', quoted], { stdio: 'pipe' });
    } else {
      execFileSync(command[0], command.slice(1), { stdio: 'pipe' });
    }
  };
  run('initdb', ['-D', data, '-U', 'ix', '--auth=trust', '--no-sync', '-E', 'UTF8']);
  const port = await freePort();
  const options = `-p ${port} -c listen_addresses=127.0.0.1 -k ${dir} -c fsync=off -c max_connections=200`;
  const start = () => run('pg_ctl', ['-D', data, '-o', options, '-l', join(dir, 'log'), '-w', '-t', '60', 'start']);
  start();
  let running = true;
  return {
    url: (database = 'postgres') => `postgres://ix@127.0.0.1:${port}/${database}`,
    restart: () => run('pg_ctl', ['-D', data, '-o', options, '-l', join(dir, 'log'), '-w', '-t', '60', '-m', 'fast', 'restart']),
    stop: () => {
      run('pg_ctl', ['-D', data, '-w', '-t', '60', '-m', 'fast', 'stop']);
      running = false;
    },
    start: () => {
      start();
      running = true;
    },
    remove: () => {
      try {
        if (running) run('pg_ctl', ['-D', data, '-w', '-t', '60', '-m', 'immediate', 'stop']);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}
