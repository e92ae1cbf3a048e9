import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { OfferedTool } from '../../src/mcp/backend.ts';
import { maxToolNameLength, toolNames } from '../../src/mcp/tool-names.ts';

/** A read tool of `integrationId` named `name`: only the two names matter here. */
function tool(integrationId: string, name: string): OfferedTool {
  return {
    integrationId,
    integrationVersion: 1,
    entry: { name, kind: 'read', description: '', input_schema: { type: 'object' }, output_schema: { type: 'object' } },
  };
}

const names = (...tools: Array<[string, string]>) => toolNames(tools.map(([id, name]) => tool(id, name)));

describe('MCP tool names (docs/mcp.md)', () => {
  test('are `<integration id>.<entry name>`', () => {
    assert.deepEqual(names(['crm', 'findCustomer'], ['erp', 'get-order.v2']), ['crm.findCustomer', 'erp.get-order.v2']);
  });

  test('replace every character outside [A-Za-z0-9_.-] with `_`, one per character', () => {
    assert.deepEqual(names(['int/1', 'find customer'], ['ä', 'x:y'], ['e', '😀!'], ['s', '\ud800z']), [
      'int_1.find_customer',
      '_.x_y',
      'e.__',
      's._z',
    ]);
  });

  test('are cut at 128 characters', () => {
    const [name] = names(['i'.repeat(100), 'o'.repeat(100)]);
    assert.equal(name, `${'i'.repeat(100)}.${'o'.repeat(27)}`);
    assert.equal(name.length, maxToolNameLength);
  });

  test('that clash after the replacement get _2, _3, … in the order of integration id', () => {
    // Given out of order: the names follow the integration ids, and come back in the order given.
    assert.deepEqual(names(['b', 'x y'], ['a.b', 'x_y'], ['a', 'b.x y'], ['a_b', 'x'], ['a.b', 'x y']), [
      'b.x_y',
      'a.b.x_y_2',
      'a.b.x_y',
      'a_b.x',
      'a.b.x_y_3',
    ]);
    // Within an integration, in catalogue order.
    assert.deepEqual(names(['crm', 'find customer'], ['crm', 'find/customer'], ['crm', 'find_customer']), [
      'crm.find_customer',
      'crm.find_customer_2',
      'crm.find_customer_3',
    ]);
  });

  test('that clash after the cut keep 128 characters with their suffix', () => {
    const long = 'o'.repeat(200);
    const ks = Array.from({ length: 10 }, (_, n): [string, string] => ['k', `${long}${n}`]);
    const result = names(['i', `${long}a`], ['i', `${long}b`], ['j', long], ...ks);
    const base = `i.${'o'.repeat(126)}`;
    assert.equal(result[0], base);
    assert.equal(result[1], `${base.slice(0, 126)}_2`);
    assert.equal(result[2], `j.${'o'.repeat(126)}`);
    // The tenth of one base: a two-digit suffix cuts one character more.
    assert.equal(result[11], `${`k.${'o'.repeat(126)}`.slice(0, 126)}_9`);
    assert.equal(result[12], `${`k.${'o'.repeat(126)}`.slice(0, 125)}_10`);
    assert.ok(result.every((name) => name.length <= maxToolNameLength));
    assert.equal(new Set(result).size, result.length);
  });

  test('never take a real name for a suffix: the second `a.b` skips `a.b_2`', () => {
    assert.deepEqual(names(['a', 'b'], ['a', 'b'], ['a', 'b_2']), ['a.b', 'a.b_3', 'a.b_2']);
    // The real name is a later integration's: still its own.
    assert.deepEqual(names(['a', 'b.c'], ['a', 'b.c'], ['a.b', 'c_2']), ['a.b.c', 'a.b.c_3', 'a.b.c_2']);
    // A suffixed name that is also a base claimed later: `x.y_2` is x's own, so the second `x.y` is `x.y_3`.
    assert.deepEqual(names(['x', 'y'], ['x', 'y'], ['x', 'y_2'], ['x', 'y_2']), ['x.y', 'x.y_3', 'x.y_2', 'x.y_2_2']);
  });

  test('are unique and stable for many tools, whatever order they are given in', () => {
    const tools: OfferedTool[] = [];
    for (let i = 0; i < 30; i++)
      for (const name of ['a b', 'a_b', 'a/b', 'a_b_2', 'a_b_3']) tools.push(tool(`int ${i % 7}`, name));
    const result = toolNames(tools);
    assert.equal(new Set(result).size, tools.length);
    const reversed = toolNames(tools.toReversed()).toReversed();
    // Reversing the input reverses the catalogue order within an integration too: compare as sets per integration.
    assert.deepEqual(new Set(reversed), new Set(result));
    // Integrations in reverse order, each one's entries in catalogue order: the same names.
    const id = (i: number) => tools[i].integrationId;
    const indexes = tools.map((_, i) => i).sort((a, b) => (id(a) > id(b) ? -1 : id(a) < id(b) ? 1 : 0));
    const again = toolNames(indexes.map((i) => tools[i]));
    const byIndex = new Map(indexes.map((i, k) => [i, again[k]]));
    assert.deepEqual(
      tools.map((_, i) => byIndex.get(i)),
      result,
    );
  });

  test('of no tools are none', () => {
    assert.deepEqual(toolNames([]), []);
  });
});
