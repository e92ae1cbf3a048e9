// The MCP server (docs/mcp.md) driven by the MCP Inspector's CLI, spawned as a process as a person would run it:
// list, call, a failure, an unknown tool, a key without integrations.execute. The server is test/support/mcp-fixture.ts's
// small app with its fake backend (the SDK's own client drives it in test/api/mcp-server.test.ts).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { fakeBackend, type McpTestApp, mcpTestApp, testKey } from '../support/mcp-fixture.ts';
import { runInspector } from '../support/mcp-inspector.ts';

describe('MCP server: the Inspector CLI', () => {
  const backend = fakeBackend();
  let server: McpTestApp;

  before(async () => {
    server = await mcpTestApp(backend);
  });
  after(() => server.app.close());

  const inspector = (args: string[], scopes = 'integrations.*') =>
    runInspector(server.url, args, { 'X-API-Key': testKey, 'X-Tenant-ID': 'acme', 'X-Test-Scopes': scopes });

  test('lists the first page of tools, with a cursor for the next', async () => {
    const { code, result, stderr } = await inspector(['--method', 'tools/list']);
    assert.equal(code, 0, stderr);
    assert.equal(result.tools.length, 200);
    assert.equal(result.tools[0].name, 'crm.findCustomer');
    assert.equal(typeof result.nextCursor, 'string');
  });

  test('calls a tool with --tool-arg (converted by its input schema), and shows a failure as isError', async () => {
    const [ok, failed] = await Promise.all([
      inspector(['--method', 'tools/call', '--tool-name', 'crm.findCustomer', '--tool-arg', 'id=c-7', 'limit=2']),
      inspector(['--method', 'tools/call', '--tool-name', 'crm.failing']),
    ]);
    assert.equal(ok.code, 0, ok.stderr);
    assert.deepEqual(ok.result.structuredContent, { customer: { id: 'c-7', name: 'Ada' } });
    assert.deepEqual(backend.calls.find((call) => call.tool === 'crm/findCustomer')?.input, { id: 'c-7', limit: 2 });
    assert.equal(failed.code, 0, failed.stderr);
    assert.equal(failed.result.isError, true);
    assert.equal(failed.result.structuredContent.error.code, 'upstream_http_error');
  });

  test('an unknown tool fails with -32602; a key without integrations.execute gets insufficient_scope', async () => {
    const [unknown, refused] = await Promise.all([
      inspector(['--method', 'tools/call', '--tool-name', 'crm.nope']),
      // The listed outputSchema names the error result too: the Inspector's SDK client checks error results against it
      // as well (typescript-sdk#1943), and shows `insufficient_scope`.
      inspector(['--method', 'tools/call', '--tool-name', 'crm.findCustomer', '--tool-arg', 'id=c-1'], 'integrations.read'),
    ]);
    assert.equal(unknown.code, 1);
    assert.match(unknown.stderr, /-32602: Unknown tool: crm\.nope/);
    assert.equal(refused.code, 0, refused.stderr);
    assert.equal(refused.result.structuredContent.error.code, 'insufficient_scope');
  });
});
