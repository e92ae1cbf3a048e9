import assert from 'node:assert/strict';
import { chmodSync, chownSync, existsSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, type TestContext, test } from 'node:test';
import { migrate, openStorage } from '../../src/storage/database.ts';

/**
 * The SQLite database holds key hashes and encrypted secrets: its file, its -wal and -shm files and
 * a folder created for it are for the owner only. (Through `interchange serve`: test/system/cli.test.ts.)
 */

const modeOf = (path: string) => statSync(path).mode & 0o777;
const octal = (mode: number) => `0${mode.toString(8)}`;

function tempDir(t: TestContext): string {
  const dir = mkdtempSync(join(tmpdir(), 'ix-modes-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** Opens and migrates the database (which writes, so -wal and -shm exist), runs `check`, closes. */
async function whileOpen(file: string, check: () => void): Promise<void> {
  const storage = openStorage(`sqlite:${file}`);
  try {
    await migrate(storage);
    check();
  } finally {
    await storage.close();
  }
}

describe('SQLite file modes', { skip: process.platform === 'win32' && 'POSIX modes only' }, () => {
  test('a new database: its folders 0700, the file, -wal and -shm 0600', async (t) => {
    const dir = tempDir(t);
    const file = join(dir, 'a', 'b', 'ix.db');
    await whileOpen(file, () => {
      for (const folder of [join(dir, 'a'), join(dir, 'a', 'b')]) assert.equal(octal(modeOf(folder)), '0700', folder);
      for (const path of [file, `${file}-wal`, `${file}-shm`]) assert.equal(octal(modeOf(path)), '0600', path);
    });
    assert.equal(octal(modeOf(file)), '0600', 'after close');
  });

  test('an existing world-readable database and a leftover -wal are tightened to 0600', async (t) => {
    const file = join(tempDir(t), 'ix.db');
    await whileOpen(file, () => {});
    chmodSync(file, 0o644);
    writeFileSync(`${file}-wal`, '', { mode: 0o644 }); // as a crash of an older version might leave it
    chmodSync(`${file}-wal`, 0o644);
    await whileOpen(file, () => {
      for (const path of [file, `${file}-wal`, `${file}-shm`]) assert.equal(octal(modeOf(path)), '0600', path);
    });
  });

  test('an existing folder keeps its mode', async (t) => {
    const dir = tempDir(t);
    chmodSync(dir, 0o755);
    await whileOpen(join(dir, 'ix.db'), () => {});
    assert.equal(octal(modeOf(dir)), '0755');
  });

  test("another user's database is left as its owner set it", {
    skip: process.getuid?.() !== 0 && 'needs root to chown',
  }, async (t) => {
    const dir = tempDir(t);
    const file = join(dir, 'ix.db');
    await whileOpen(file, () => {});
    assert.equal(existsSync(`${file}-wal`), false, 'the last close removes the -wal file');
    chmodSync(file, 0o644);
    chownSync(file, 4242, 4242);
    await whileOpen(file, () => assert.equal(octal(modeOf(file)), '0644'));
  });
});
