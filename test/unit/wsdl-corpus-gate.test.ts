import assert from 'node:assert/strict';
import { resolve } from 'node:path';
import { describe, test } from 'node:test';
import { corpusGate } from '../support/wsdl-corpus.ts';

/** Where the WSDL corpus tests find the corpus, and what its absence means: a skip in a fresh clone, a failure in CI. */

const checkout = resolve(import.meta.dirname, '../..');
const beside = resolve(checkout, '../shared/wsdl-corpus');
const present =
  (...folders: string[]) =>
  (path: string) =>
    folders.includes(path);

describe('the WSDL corpus gate', () => {
  test('by default the corpus is ../shared/wsdl-corpus beside the checkout; present, its tests run', () => {
    assert.deepEqual(corpusGate({}, present(beside)), { dir: beside });
  });

  test('IX_WSDL_CORPUS names another folder, relative to the checkout or absolute', () => {
    assert.deepEqual(corpusGate({ IX_WSDL_CORPUS: '/data/wsdl' }, present('/data/wsdl')), { dir: '/data/wsdl' });
    const relative = resolve(checkout, 'corpus');
    assert.deepEqual(corpusGate({ IX_WSDL_CORPUS: 'corpus' }, present(relative)), { dir: relative });
    assert.deepEqual(corpusGate({ IX_WSDL_CORPUS: '' }, present(beside)), { dir: beside }, 'empty is unset');
  });

  test('absent in a fresh clone: skipped, with one reason that says where it looked and how to point at it', () => {
    const gate = corpusGate({}, present());
    assert.equal(gate.fail, undefined);
    assert.match(gate.skip ?? '', new RegExp(`^no WSDL corpus at ${beside}: set IX_WSDL_CORPUS`));
    assert.doesNotMatch(gate.skip ?? '', /\n/, 'one line');
    assert.deepEqual(corpusGate({ CI: 'false' }, present()).fail, undefined);
  });

  test('absent under CI, or where IX_WSDL_CORPUS points: a failure, never a skip', () => {
    // The folder beside the checkout does not stand in for the one IX_WSDL_CORPUS names.
    for (const env of [{ CI: 'true' }, { CI: '1' }, { IX_WSDL_CORPUS: '/nowhere' }, { CI: 'true', IX_WSDL_CORPUS: '/nowhere' }]) {
      const gate = corpusGate(env, env.IX_WSDL_CORPUS === undefined ? present() : present(beside));
      assert.equal(gate.skip, undefined, JSON.stringify(env));
      assert.match(gate.fail ?? '', /^no WSDL corpus at /, JSON.stringify(env));
    }
  });
});
