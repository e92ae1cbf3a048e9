import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { displayParts, generateKey, hashKey, keyShape, prefixFor } from '../../src/auth/key-format.ts';
import { isValidScope, scopeCovers, uncoveredScopes } from '../../src/auth/scopes.ts';

describe('key format', () => {
  test('new keys: 8-character prefix, 40 random base62 characters, 6-character checksum', () => {
    const key = generateKey(prefixFor('production'));
    assert.match(key, /^ix_live_[0-9A-Za-z]{46}$/);
    assert.equal(keyShape(key), 'current');
    assert.match(generateKey(prefixFor('sandbox')), /^ix_test_/);
    assert.match(generateKey(prefixFor('staging')), /^ix_live_/);
    assert.match(generateKey(prefixFor('development')), /^ix_live_/);
  });

  test('keys are random', () => {
    const keys = new Set(Array.from({ length: 1000 }, () => generateKey('ix_live_')));
    assert.equal(keys.size, 1000);
  });

  test('any changed character fails the checksum', () => {
    const key = generateKey('ix_live_');
    for (const i of [8, 20, 47, key.length - 1]) {
      const swapped = key[i] === 'a' ? 'b' : 'a';
      assert.equal(keyShape(key.slice(0, i) + swapped + key.slice(i + 1)), 'malformed', `position ${i}`);
    }
    assert.equal(keyShape(`ix_test_${key.slice(8)}`), 'malformed', 'the prefix is under the checksum too');
    assert.equal(keyShape(key.slice(0, -1)), 'malformed');
  });

  test('legacy keys are recognised by shape; junk is malformed', () => {
    assert.equal(keyShape('ix_prod_abcdefghijklmnop1234'), 'legacy');
    assert.equal(keyShape('ix_dev_abcdefghijklmnop1234'), 'legacy');
    assert.equal(keyShape('ix_prod_short'), 'malformed');
    assert.equal(keyShape('sk_live_abcdefghijklmnopqrstuvwxyz0123456789ABCDEF'), 'malformed');
    assert.equal(keyShape(''), 'malformed');
  });

  test('display parts and hash', () => {
    const key = generateKey('ix_live_');
    assert.deepEqual(displayParts(key), { prefix: 'ix_live_', start: key.slice(0, 12), last4: key.slice(-4) });
    assert.equal(displayParts('ix_dev_abcdefghijklmnop1234').prefix, 'ix_dev_');
    assert.match(hashKey(key), /^[0-9a-f]{64}$/);
    assert.notEqual(hashKey(key), hashKey(`${key}x`));
  });
});

describe('scopes', () => {
  test('grammar: *, <resource>.*, <resource>.<action>', () => {
    for (const ok of ['*', 'entities.*', 'integrations.execute', 'api_keys.read', 'executions.read', 'processflow.run_now']) {
      assert.ok(isValidScope(ok), ok);
    }
    for (const bad of ['', 'entities', 'foo.read', 'entities.READ', 'entities.read.x', '*.read', 'entities.', ' entities.read']) {
      assert.ok(!isValidScope(bad), bad);
    }
  });

  test('coverage: exact, resource wildcard, global wildcard', () => {
    assert.ok(scopeCovers('*', 'entities.read'));
    assert.ok(scopeCovers('*', '*'));
    assert.ok(scopeCovers('entities.*', 'entities.write'));
    assert.ok(scopeCovers('entities.*', 'entities.*'));
    assert.ok(!scopeCovers('entities.*', '*'));
    assert.ok(!scopeCovers('entities.*', 'integrations.read'));
    assert.ok(!scopeCovers('entities.read', 'entities.write'));
    assert.ok(!scopeCovers('entities.read', 'entities.*'));
    assert.ok(!scopeCovers('api_keys.*', 'api_keys_extra.read'));
    assert.deepEqual(uncoveredScopes(['entities.*'], ['entities.read', 'api_keys.read']), ['api_keys.read']);
  });
});
