// `npm run test:unit` loads this (--import) into each test file's process. test/unit/ holds only the files whose
// tests need no other process (a server, openssl, PHP, Python, a browser) and no PostgreSQL or Redis; here that is a
// rule, not a hope: a test that starts a process or connects to either server fails, naming what it tried, and its file
// then belongs to a later tier (test/api/, test/system/, test/interop/: README.md#running-the-tests). The test runner's
// own process is left alone.
import childProcess from 'node:child_process';
import { syncBuiltinESMExports } from 'node:module';
import net from 'node:net';
import { pgAdminUrl, redisTestUrl } from './postgres.ts';

if (process.env.NODE_TEST_CONTEXT !== undefined) {
  const refuse = (what: string) => () => {
    throw new Error(`test:unit runs no ${what}: this file belongs to a later tier than test/unit/`);
  };
  for (const name of ['spawn', 'spawnSync', 'exec', 'execSync', 'execFile', 'execFileSync', 'fork'] as const) {
    Object.assign(childProcess, { [name]: refuse(`child process (child_process.${name})`) });
  }
  // Named imports (`import { spawn } from 'node:child_process'`) see the replacements too.
  syncBuiltinESMExports();

  const servers = new Map([pgAdminUrl, redisTestUrl].map((url) => [Number(new URL(url).port), new URL(url).protocol]));
  const connect = net.Socket.prototype.connect;
  net.Socket.prototype.connect = function (this: net.Socket, ...args: unknown[]) {
    // connect(port, host), connect({ port }), or net.connect's normalized [{ port }, callback].
    const first = Array.isArray(args[0]) ? args[0][0] : args[0];
    const port = Number(typeof first === 'object' && first !== null ? (first as { port?: unknown }).port : first);
    const server = servers.get(port);
    if (server !== undefined) refuse(`${server.replace(/:$/, '')} server (port ${port})`)();
    return Reflect.apply(connect, this, args);
  } as typeof connect;
}
