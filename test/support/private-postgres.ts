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
  /**
   * A failover to a promoted replica at the same address: a streaming standby (made at start with pg_basebackup)
   * takes over. The primary dies (`-m immediate`), the standby is brought up on the primary's port, still in recovery
   * (read-only: writes fail with 25006) for a moment, then promoted. Needs `withStandby`.
   */
  failover(): void;
  /** Stops the server and removes its folder. */
  remove(): void;
}

function binDir(): string {
  const versions = readdirSync('/usr/lib/postgresql').sort((a, b) => Number(a) - Number(b));
  const version = versions.at(-1);
  if (!version) throw new Error('PostgreSQL is not installed (apt-get install postgresql)');
  return `/usr/lib/postgresql/${version}/bin`;
}

export async function startPrivatePostgres(options: { withStandby?: boolean } = {}): Promise<PrivatePostgres> {
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
  const serverOptions = (on: number) =>
    `-p ${on} -c listen_addresses=127.0.0.1 -k ${dir} -c fsync=off -c max_connections=200 -c wal_level=replica`;
  const primaryOptions = serverOptions(port);
  let current = data;
  const start = () => run('pg_ctl', ['-D', current, '-o', primaryOptions, '-l', join(dir, 'log'), '-w', '-t', '60', 'start']);
  start();
  let running = true;
  const standby = join(dir, 'standby');
  if (options.withStandby) {
    const standbyPort = await freePort();
    run('pg_basebackup', ['-D', standby, '-R', '-h', '127.0.0.1', '-p', String(port), '-U', 'ix', '-X', 'stream']);
    run('pg_ctl', ['-D', standby, '-o', serverOptions(standbyPort), '-l', join(dir, 'standby.log'), '-w', '-t', '60', 'start']);
    // Synchronous replication, as a managed high-availability PostgreSQL runs it: a commit is on the standby before it
    // is acknowledged, so a failover loses no committed transaction. Set on the primary only (the standby was copied
    // before), so the promoted one does not wait for a standby it no longer has.
    const psql = (statement: string) =>
      run('psql', ['-h', '127.0.0.1', '-p', String(port), '-U', 'ix', '-d', 'postgres', '-qc', statement]);
    psql("alter system set synchronous_standby_names = '*'");
    psql('select pg_reload_conf()');
  }
  return {
    url: (database = 'postgres') => `postgres://ix@127.0.0.1:${port}/${database}`,
    restart: () =>
      run('pg_ctl', ['-D', current, '-o', primaryOptions, '-l', join(dir, 'log'), '-w', '-t', '60', '-m', 'fast', 'restart']),
    stop: () => {
      run('pg_ctl', ['-D', current, '-w', '-t', '60', '-m', 'fast', 'stop']);
      running = false;
    },
    start: () => {
      start();
      running = true;
    },
    failover: () => {
      if (!options.withStandby || current === standby) throw new Error('failover needs a standby (withStandby), once');
      run('pg_ctl', ['-D', data, '-w', '-t', '60', '-m', 'immediate', 'stop']);
      run('pg_ctl', ['-D', standby, '-w', '-t', '60', '-m', 'fast', 'stop']);
      current = standby;
      start();
      run('pg_ctl', ['-D', standby, '-w', '-t', '60', 'promote']);
    },
    remove: () => {
      try {
        if (running) run('pg_ctl', ['-D', current, '-w', '-t', '60', '-m', 'immediate', 'stop']);
        if (options.withStandby && current === data) {
          run('pg_ctl', ['-D', standby, '-w', '-t', '60', '-m', 'immediate', 'stop']);
        }
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}
