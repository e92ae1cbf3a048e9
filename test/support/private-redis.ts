import { type ChildProcess, spawn } from 'node:child_process';
import { createConnection } from 'node:net';
import { freePort } from './processes.ts';

/**
 * A redis-server of one test file's own on a free loopback port, so that the file can stop and start it without
 * touching the Redis every other test shares. `start()` brings it back on the same port.
 */
export interface PrivateRedis {
  url: string;
  stop(): void;
  start(): Promise<void>;
}

function answersPing(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ host: '127.0.0.1', port });
    socket.setTimeout(1000);
    socket.once('connect', () => socket.write('PING\r\n'));
    socket.once('data', (data) => {
      socket.destroy();
      resolve(data.toString().startsWith('+PONG'));
    });
    socket.once('error', () => resolve(false));
    socket.once('timeout', () => {
      socket.destroy();
      resolve(false);
    });
  });
}

export async function startPrivateRedis(): Promise<PrivateRedis> {
  const port = await freePort();
  let child: ChildProcess | undefined;
  const start = async () => {
    child = spawn('redis-server', ['--bind', '127.0.0.1', '--port', String(port), '--save', '', '--appendonly', 'no'], {
      stdio: 'ignore',
    });
    for (let tries = 0; tries < 600; tries++) {
      if (await answersPing(port)) return;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    throw new Error(`redis-server did not answer on port ${port}`);
  };
  await start();
  process.once('exit', () => child?.kill('SIGKILL'));
  return {
    url: `redis://127.0.0.1:${port}`,
    stop: () => {
      child?.kill('SIGKILL');
      child = undefined;
    },
    start,
  };
}
