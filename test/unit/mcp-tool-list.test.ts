import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { JsonSchema } from '../../src/connectors/catalog.ts';
import type { OfferedTool } from '../../src/mcp/backend.ts';
import { listedTools, toolsPage, toolsPerPage } from '../../src/mcp/tool-list.ts';

function tool(
  integrationId: string,
  name: string,
  input_schema: JsonSchema = { type: 'object' },
  output_schema: JsonSchema = {},
): OfferedTool {
  return { integrationId, integrationVersion: 1, entry: { name, kind: 'read', description: '', input_schema, output_schema } };
}

const many = (count: number, integrationId = 'int') =>
  Array.from({ length: count }, (_, n) => tool(integrationId, `op${String(n).padStart(4, '0')}`));

/** Every name of every page, following the cursors. */
function allPages(tools: OfferedTool[], tenantId = 't'): string[][] {
  const listed = listedTools(tools);
  const pages: string[][] = [];
  let cursor: string | undefined;
  do {
    const page = toolsPage(listed, tenantId, cursor);
    assert.ok(page);
    pages.push(page.tools.map((t) => t.name));
    cursor = page.nextCursor;
  } while (cursor !== undefined);
  return pages;
}

describe('MCP tools/list (docs/mcp.md)', () => {
  test('pages hold at most 200 tools; the last has no nextCursor', () => {
    assert.deepEqual(
      allPages(many(401)).map((page) => page.length),
      [toolsPerPage, toolsPerPage, 1],
    );
    assert.deepEqual(
      allPages(many(200)).map((page) => page.length),
      [200],
    );
    assert.deepEqual(allPages([]), [[]]);
  });

  test('a cursor continues after the last tool it showed, when tools were added or removed before it', () => {
    const tools = many(300);
    const first = toolsPage(listedTools(tools), 't', undefined)!;
    // Ten tools of an integration that sorts first appear, and one before the cursor goes: nothing is shown twice or lost.
    const changed = [...many(10, 'aaa'), ...tools.slice(1)];
    const second = toolsPage(listedTools(changed), 't', first.nextCursor)!;
    assert.equal(second.tools[0].name, 'int.op0200');
    assert.equal(second.tools.length, 100);
    // When that last tool itself is gone, the page starts where the count of tools shown says (here op0200, which
    // moved up into the gone tool's place, is missed: a list that changes between pages is listed again).
    const without = toolsPage(listedTools(tools.filter((_, n) => n !== 199)), 't', first.nextCursor)!;
    assert.equal(without.tools[0].name, 'int.op0201');
  });

  test('a cursor that is malformed, of another tenant, or of another shape is refused', () => {
    const listed = listedTools(many(300));
    const next = toolsPage(listed, 't', undefined)!.nextCursor!;
    assert.equal(toolsPage(listed, 'u', next), undefined);
    const encode = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
    for (const cursor of [
      '',
      '***',
      'x'.repeat(2000),
      encode([2, 't', 200, 'int.op0199']),
      encode([1, 't', -1, 'x']),
      encode([1, 't', 1.5, 'x']),
      encode({}),
    ]) {
      assert.equal(toolsPage(listed, 't', cursor), undefined, cursor);
    }
  });

  test('schemas: an object without `type` gets it, boolean property schemas their object form; no object, no tool', () => {
    const leftOut: string[] = [];
    const listed = listedTools(
      [
        tool('a', 'plain', { properties: { x: true, y: false, z: { type: 'string' } } }, { type: 'object' }),
        tool('a', 'array', { type: 'array' }),
        tool('a', 'odd output', { type: 'object' }, { type: 'string' }),
        tool('a', 'plain'),
      ],
      (t) => leftOut.push(t.entry.name),
    );
    assert.deepEqual(leftOut, ['array']);
    assert.deepEqual(
      listed.map((t) => t.name),
      ['a.plain', 'a.odd_output', 'a.plain_2'],
    );
    assert.deepEqual(listed[0].inputSchema, { type: 'object', properties: { x: {}, y: { not: {} }, z: { type: 'string' } } });
    assert.deepEqual(listed[0].outputSchema, { type: 'object' });
    assert.equal(listed[1].outputSchema, undefined);
    const described = toolsPage(listed, 't', undefined)!.tools[1];
    assert.equal('outputSchema' in described, false);
  });
});
