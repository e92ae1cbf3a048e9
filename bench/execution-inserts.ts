/**
 * CPU per executions-log row: ExecutionInserts writing batches of a size, on SQLite (a temporary file) and, when
 * scripts/test-services.sh's PostgreSQL answers, on PostgreSQL. Measures this process's CPU (process.cpuUsage),
 * the part a server pays per execute; PostgreSQL's own is not in it. Interleaved rounds, paired median.
 * BENCH_BASELINE=<module> compares another ExecutionInserts (a copy of an earlier version) against the current one.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { migrate, openStorage, type Storage } from '../src/storage/database.ts';
import { type Execution, ExecutionInserts } from '../src/storage/executions.ts';
import { createTestDatabase } from '../test/support/postgres.ts';

type Inserts = { insert(rows: ReadonlyArray<{ tenantId: string; execution: Execution }>): Promise<void> };
type InsertsClass = new (db: Storage['db'], maxTexts?: number) => Inserts;

const rowsPerRound = Number(process.env.BENCH_ROWS ?? 20_000);
const rounds = Number(process.env.BENCH_ROUNDS ?? 7);
const batch = Number(process.env.BENCH_BATCH ?? 100);
let serial = 0;

function execution(): Execution {
  const n = serial++;
  return {
    id: `exe_${String(n).padStart(20, '0')}`,
    integration_id: 'int_0123456789abcdefghij',
    connector: 'graphql-1.0.0',
    operation: 'receive',
    operation_name: null,
    status: 'succeeded',
    http_status: 200,
    error_code: null,
    error_message: null,
    error_details: null,
    message_count: 3,
    duration_ms: 2,
    api_key_id: 'key_0123456789abcdefghij',
    user_id: null,
    request_id: `req-${n}`,
    started_at: '2026-01-01T00:00:00.000Z',
    mode: 'sync',
    via: 'api',
    attempts: 1,
    finished_at: '2026-01-01T00:00:00.002Z',
  };
}

/** µs of this process's CPU per row for `rowsPerRound` rows in batches of `batch`. */
async function measure(inserts: Inserts): Promise<number> {
  const start = process.cpuUsage();
  for (let done = 0; done < rowsPerRound; done += batch) {
    const rows = [];
    for (let i = 0; i < batch; i++) rows.push({ tenantId: 'acme', execution: execution() });
    await inserts.insert(rows);
  }
  const used = process.cpuUsage(start);
  return (used.user + used.system) / rowsPerRound;
}

const median = (values: number[]) => values.toSorted((a, b) => a - b)[Math.floor(values.length / 2)];

async function compare(name: string, storage: Storage, Baseline: InsertsClass | undefined): Promise<void> {
  await migrate(storage);
  const current = new ExecutionInserts(storage.db);
  const baseline = Baseline && new Baseline(storage.db);
  await measure(current);
  if (baseline) await measure(baseline);
  const a: number[] = [];
  const b: number[] = [];
  const ratio: number[] = [];
  for (let round = 0; round < rounds; round++) {
    const x = baseline ? await measure(baseline) : Number.NaN;
    const y = await measure(current);
    a.push(x);
    b.push(y);
    ratio.push(y - x);
  }
  const f = (v: number) => v.toFixed(2);
  console.log(
    `${name}, batches of ${batch}: current ${f(median(b))} µs/row` +
      (baseline ? `, baseline ${f(median(a))} µs/row, paired median difference ${f(median(ratio))} µs/row` : ''),
  );
}

const Baseline = process.env.BENCH_BASELINE
  ? ((await import(process.env.BENCH_BASELINE)) as { ExecutionInserts: InsertsClass }).ExecutionInserts
  : undefined;
const dir = mkdtempSync(join(tmpdir(), 'ix-inserts-'));
const sqlite = openStorage(`sqlite:${join(dir, 'ix.db')}`);
try {
  await compare('SQLite', sqlite, Baseline);
} finally {
  await sqlite.close();
  rmSync(dir, { recursive: true, force: true });
}
if (process.env.BENCH_PG !== '0') {
  const database = await createTestDatabase();
  const pg = openStorage(database.url);
  try {
    await compare('PostgreSQL', pg, Baseline);
  } finally {
    await pg.close();
    await database.drop();
  }
}
