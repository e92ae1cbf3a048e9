/**
 * `node bench/sign-in-flood.ts`: what a sign-in flood does to `interchange serve` (issue 17, findings 1 and 2), with
 * the server in a process of its own (SQLite, default settings), over real connections: the flood from a process of
 * its own too (an attacker's client costs its own machine, not the victim's), everything else from this one.
 *   1. 100 parallel guesses at one account from one address, the right password hidden among them: how many are
 *      answered 401, 200 and 429 (API.md §2 and §11 allow 30 checks per address and 10 per account).
 *   2. Another person's sign-in from another address, alone and then during 400 parallel sign-ins from one address:
 *      their latency, and how long the flood took to drain.
 * Loopback addresses other than 127.0.0.1 are the other sources (Linux routes all of 127.0.0.0/8 to lo). Prints
 * figures; asserts nothing: the tests pin the behaviour (test/system/sign-in-limits.test.ts), this shows the time.
 * IX_SIGN_IN_* settings in the bench's environment are given to the server: IX_SIGN_IN_PER_ADDRESS=1000 takes the
 * password queue out of the way of part 1, to see the counts alone.
 */
import { request } from 'node:http';
import { cliJson } from '../test/support/cli.ts';
import { runCliProcess as runCli, startServer, tempDatabase } from '../test/support/processes.ts';
import { startServer as startChild } from './children.ts';

const password = 'correct horse battery staple';

interface Answer {
  status: number;
  reason: string | undefined;
  ms: number;
}

/** One sign-in over a connection of its own from `source`. */
function signIn(url: string, source: string, email: string, secret: string): Promise<Answer> {
  const started = performance.now();
  const body = JSON.stringify({ email, password: secret });
  return new Promise((resolve, reject) => {
    const req = request(
      `${url}/api/v1/auth/sign-in`,
      {
        method: 'POST',
        localAddress: source,
        agent: false,
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8').on('data', (chunk: string) => {
          text += chunk;
        });
        res.on('end', () => {
          const reason = res.statusCode === 429 ? (JSON.parse(text).error.details?.reason ?? 'none') : undefined;
          resolve({ status: res.statusCode ?? 0, reason, ms: performance.now() - started });
        });
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

function tally(answers: Answer[]): string {
  const counts = new Map<string, number>();
  for (const a of answers) {
    const key = a.reason ? `${a.status} (${a.reason})` : String(a.status);
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return [...counts.entries()]
    .sort()
    .map(([key, n]) => `${n} × ${key}`)
    .join(', ');
}

const median = (values: number[]) => values.toSorted((a, b) => a - b)[Math.floor(values.length / 2)];

/** The flood's process: `node bench/sign-in-flood.ts flood <url> <count> <source>`; a line when sent, one when answered. */
async function flood(url: string, count: number, source: string): Promise<void> {
  const started = performance.now();
  const answers = Array.from({ length: count }, (_, i) =>
    signIn(url, source, `flood${i}@example.com`, 'not the password at all'),
  );
  console.log(JSON.stringify({ sent: count }));
  const tallied = tally(await Promise.all(answers));
  console.log(JSON.stringify({ tally: tallied, drainedMs: performance.now() - started }));
}

async function main(): Promise<void> {
  const db = tempDatabase();
  try {
    await cliJson(['tenants', 'create', 'acme'], db.env);
    for (const email of ['ada@example.com', 'bob@example.com']) {
      const created = await runCli(['users', 'create', email, '--password-stdin', '--json'], db.env, {
        input: `${password}\n`,
      });
      if (created.code !== 0) throw new Error(created.stderr);
    }
    const settings = Object.entries(process.env).filter(([name]) => name.startsWith('IX_SIGN_IN_')) as Array<[string, string]>;
    const server = await startServer({ ...db.env, LOG_LEVEL: 'warn', ...Object.fromEntries(settings) });
    try {
      const guesses = Array.from({ length: 100 }, (_, i) => (i === 57 ? password : `wrong guess number ${i}`));
      const race = await Promise.all(guesses.map((guess) => signIn(server.url, '127.0.0.3', 'ada@example.com', guess)));
      console.log(`100 parallel guesses at one account from one address: ${tally(race)}`);

      const alone: number[] = [];
      for (let i = 0; i < 5; i++) alone.push((await signIn(server.url, '127.0.0.2', 'bob@example.com', password)).ms);
      console.log(`another person's sign-in, no flood: median ${median(alone).toFixed(0)} ms of 5`);

      const flooder = await startChild(import.meta.filename, ['flood', server.url, '400', '127.0.0.1']);
      // Once the flood is on its way: the other person signs in while it is being answered.
      await new Promise((resolve) => setTimeout(resolve, 200));
      const other = await signIn(server.url, '127.0.0.2', 'bob@example.com', password);
      await flooder.child.exited;
      const result = JSON.parse(flooder.child.stdout().trim().split('\n').at(-1) as string);
      console.log(
        `400 parallel sign-ins from one address: ${result.tally}; drained in ${(result.drainedMs / 1000).toFixed(1)} s`,
      );
      console.log(`another person's sign-in during the flood: ${other.status} in ${other.ms.toFixed(0)} ms`);
    } finally {
      await server.stop();
    }
  } finally {
    db.cleanup();
  }
}

if (process.argv[2] === 'flood') await flood(process.argv[3], Number(process.argv[4]), process.argv[5]);
else await main();
