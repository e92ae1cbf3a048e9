import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { OfferedTool } from '../../src/mcp/backend.ts';
import { InputValidators } from '../../src/mcp/input-validation.ts';

const tool = (name: string, integrationVersion = 1): OfferedTool => ({
  integrationId: 'crm',
  integrationVersion,
  entry: { name, kind: 'read', description: '', input_schema: {}, output_schema: {} },
});

const schema = {
  $id: 'urn:crm:find',
  type: 'object',
  required: ['id'],
  additionalProperties: false,
  properties: { id: { type: 'string' }, at: { type: 'string', format: 'date-time' }, n: { $ref: '#/$defs/small' } },
  $defs: { small: { type: 'integer', maximum: 10 } },
};

test('input validators: JSON Schema 2020-12 with formats and $defs, every issue with its path', () => {
  const validators = new InputValidators();
  assert.deepEqual(validators.issues(tool('find'), schema, { id: 'c-1', at: '2026-01-02T03:04:05Z', n: 3 }), []);
  assert.deepEqual(validators.issues(tool('find'), schema, { at: 'yesterday', n: 11, x: 1 }), [
    { path: 'id', message: 'is required' },
    { path: 'x', message: 'is not a known field' },
    { path: 'at', message: 'must match format "date-time"' },
    { path: 'n', message: 'must be <= 10' },
  ]);
});

test('input validators: compiled once per integration version and entry, at most as many as the bound', () => {
  const validators = new InputValidators(2);
  // The same `$id` for another version and another entry: each compiles (Ajv would refuse a second schema with it).
  validators.issues(tool('find', 1), schema, { id: 'a' });
  validators.issues(tool('find', 2), schema, { id: 'a' });
  validators.issues(tool('get', 2), schema, { id: 'a' });
  assert.equal(validators.size, 2);
  // The first was dropped, and with it Ajv's copy: it compiles again.
  assert.deepEqual(validators.issues(tool('find', 1), schema, {}), [{ path: 'id', message: 'is required' }]);
});

test('input validators: a schema that does not compile throws, every time, and holds nothing', () => {
  const validators = new InputValidators();
  const broken = { type: 'object', properties: { a: { $ref: 'https://example.com/remote.json' } } };
  for (let i = 0; i < 2; i++) assert.throws(() => validators.issues(tool('broken'), broken, {}));
  assert.equal(validators.size, 0);
});

test('input validators: a WSDL author’s pattern is matched in linear time, never by a backtracking RegExp', () => {
  const validators = new InputValidators();
  const hostile = {
    type: 'object',
    properties: {
      code: { type: 'string', pattern: '^(a+)+$' },
      letter: { type: 'string', pattern: '^\\u{41}+$' },
      // RE2 has no lookahead: such a pattern is not checked here (execute's own check decides).
      ahead: { type: 'string', pattern: '^(?=x)x$' },
    },
  };
  // With JavaScript's RegExp, 40 a's and a ! take minutes (the test would time out); RE2 answers at once.
  assert.deepEqual(validators.issues(tool('hostile'), hostile, { code: `${'a'.repeat(40)}!` }), [
    { path: 'code', message: 'must match pattern "^(a+)+$"' },
  ]);
  assert.deepEqual(validators.issues(tool('hostile'), hostile, { code: 'aaa', letter: 'AA', ahead: 'y' }), []);
  assert.equal(validators.issues(tool('hostile'), hostile, { letter: 'AB' }).length, 1);
});
