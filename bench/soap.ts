/**
 * SOAP, ours against node-soap (issue 23): warm calls, a 10 MB answer and a large request, each client in a fresh process of its own
 * (bench/soap-warm.ts), against an upstream in another (bench/soap-upstream.ts) that answers at once; every client
 * once per round for three rounds, medians. Each process runs with the V8 flags the service runs with.
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { serviceNodeFlags, startServer } from './children.ts';

interface Measured {
  calls: number;
  perSecond: number;
  seconds: number;
  cpuMicrosPerCall: number;
}

const modes = ['node-soap', 'engine', 'interchange'] as const;
const labels: Record<(typeof modes)[number], string> = {
  'node-soap': 'node-soap client built once (baseline)',
  engine: 'Interchange SOAP connector, WSDL cached',
  interchange: 'Interchange execute send (app.inject, SQLite log)',
};

async function once(mode: string, args: string[]): Promise<Measured> {
  const script = join(import.meta.dirname, 'soap-warm.ts');
  const { stdout } = await promisify(execFile)(process.execPath, [...serviceNodeFlags, script, mode, ...args], {
    maxBuffer: 64 * 1024 * 1024,
  });
  return JSON.parse(stdout.trim().split('\n').pop() ?? '{}') as Measured;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

const msPerCall = (measured: Measured[]) => median(measured.map((m) => (m.seconds * 1000) / m.calls));

/** A table of calls made one at a time: each client's ms and CPU ms per call, and its time against node-soap's. */
function timedTable(title: string, measured: Record<string, Measured[]>): string[] {
  const baselineMs = msPerCall(measured['node-soap']);
  return [
    `| ${title} | ms per call | vs node-soap | CPU ms per call |`,
    '|---|--:|--:|--:|',
    ...modes.map((mode) => {
      const ms = msPerCall(measured[mode]);
      const cpu = median(measured[mode].map((m) => m.cpuMicrosPerCall / 1000));
      return `| ${labels[mode]} | ${ms.toFixed(0)} | ${(ms / baselineMs).toFixed(2)}x | ${cpu.toFixed(0)} |`;
    }),
  ];
}

/** The three tables, as Markdown. */
export async function runSoapBench(): Promise<string> {
  const upstream = await startServer<{ port: number }>(join(import.meta.dirname, 'soap-upstream.ts'), ['100000']);
  const base = `http://127.0.0.1:${upstream.info.port}/calc`;
  try {
    const warm = Object.fromEntries(modes.map((mode) => [mode, [] as Measured[]]));
    const large = Object.fromEntries(modes.map((mode) => [mode, [] as Measured[]]));
    const request = Object.fromEntries(modes.map((mode) => [mode, [] as Measured[]]));
    for (let round = 0; round < 3; round++) {
      for (const mode of modes) {
        warm[mode].push(await once(mode, [`${base}?wsdl`, base, 'Add', '{"a":2,"b":3}', '3000', '4']));
        large[mode].push(await once(mode, [`${base}?wsdl`, base, 'GetOrder', '{"id":"B-1"}', '3', '1']));
        request[mode].push(await once(mode, [`${base}?wsdl`, base, 'SumList', 'numbers:100000', '3', '1']));
      }
    }
    const baseline = median(warm['node-soap'].map((m) => m.perSecond));
    const lines = [
      '# SOAP, ours against node-soap',
      '',
      `Written by \`BENCH_ONLY=soap npm run bench\` (bench/soap.ts); ${new Date().toISOString()}. Each client in a fresh process, the upstream in another answering at once; 3 rounds, medians.`,
      '',
      '| warm: Add, 3,000 calls, 4 at a time | calls/s | vs node-soap | CPU µs per call |',
      '|---|--:|--:|--:|',
      ...modes.map((mode) => {
        const perSecond = median(warm[mode].map((m) => m.perSecond));
        const cpu = median(warm[mode].map((m) => m.cpuMicrosPerCall));
        return `| ${labels[mode]} | ${perSecond.toFixed(0)} | ${(perSecond / baseline).toFixed(2)}x | ${cpu.toFixed(0)} |`;
      }),
      '',
      ...timedTable('a 10 MB answer: GetOrder, 100,000 lines, one at a time', large),
      '',
      ...timedTable('a large request: SumList of 100,000 numbers (590 KB of JSON), one at a time', request),
    ];
    return lines.join('\n');
  } finally {
    await upstream.child.stop();
  }
}
