import { relative, sep } from 'node:path';
import type { TestEvent } from 'node:test/reporters';

/** One test file's run, as `npm run test:times` reads it back (scripts/test-times.ts). */
export interface FileTime {
  /** The file, relative to the folder the tests ran in: `test/system/storage-outage.test.ts`. */
  file: string;
  /** Its folder under test/, with `:pg` when it ran on PostgreSQL (IX_TEST_STORAGE=postgres): `api:pg`. */
  tier: string;
  /** Its wall time in milliseconds: the file's process, from its start to its last test's end. */
  ms: number;
  passed: boolean;
}

/**
 * A test reporter (`node --test --test-reporter=./test/support/file-times-reporter.ts`) that writes one JSON line per
 * test file (a FileTime) to its destination once the run is over. Each file runs in its own process, and the runner
 * reports that file as a top-level test spanning the whole process (start-up, imports, hooks, tests): the longest of
 * a file's top-level entries is its wall time.
 */
export default async function* fileTimes(source: AsyncIterable<TestEvent>): AsyncGenerator<string> {
  const files = new Map<string, FileTime>();
  const suffix = process.env.IX_TEST_STORAGE === 'postgres' ? ':pg' : '';
  for await (const event of source) {
    if (event.type !== 'test:complete' || event.data.nesting !== 0 || event.data.file === undefined) continue;
    const file = relative(process.cwd(), event.data.file).split(sep).join('/');
    const { duration_ms: ms, passed } = event.data.details;
    const seen = files.get(file);
    if (seen === undefined) {
      files.set(file, { file, tier: `${file.split('/')[1] ?? 'test'}${suffix}`, ms, passed });
    } else {
      seen.ms = Math.max(seen.ms, ms);
      seen.passed &&= passed;
    }
  }
  for (const time of files.values()) yield `${JSON.stringify(time)}\n`;
}
