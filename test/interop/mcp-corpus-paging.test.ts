import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { type Auth, body, type Harness, harness } from '../support/harness.ts';
import { listAllTools } from '../support/mcp-tools.ts';
import { type CorpusServer, corpusEntries, describeWithCorpus, serveCorpus } from '../support/wsdl-corpus.ts';

/**
 * The corpus's largest WSDLs as MCP tools (docs/mcp.md): e-conomic's ASMX API (two ports of over a thousand operations
 * each) and VirtualBox's web service, offered whole (`allow_writes`), listed by the SDK's client page by page: every
 * catalogue entry is a tool exactly once, 200 at most a page, in catalogue order.
 */

const largest = ['asmx-economic', 'vbox-webservice'];

describeWithCorpus('the largest corpus WSDLs as MCP tools, in pages', () => {
  let h: Harness;
  let auth: Auth;
  let corpus: CorpusServer;
  let mcpUrl: URL;

  before(async () => {
    corpus = await serveCorpus();
    h = await harness();
    await h.tenant('acme');
    auth = await h.auth('acme', ['integrations.*']);
    for (const entry of corpusEntries().filter((candidate) => largest.includes(candidate.name))) {
      const put = await h.call(auth, {
        method: 'PUT',
        url: `/api/v1/integrations/${entry.name}`,
        payload: {
          connector: 'soap-1.0.0',
          config: { endpoint_url: corpus.url(entry), timeout_seconds: 120 },
          catalog: { mcp: true, allow_writes: true },
        },
      });
      assert.equal(put.statusCode, 201, put.body);
    }
    const address = await h.app.listen({ host: '127.0.0.1', port: 0 });
    mcpUrl = new URL('/api/v1/mcp', address);
  });
  after(async () => {
    await h.close();
    await corpus.close();
  });

  /** Every entry of an integration's catalogue, through the API's own pages. */
  async function entryNames(id: string): Promise<string[]> {
    const names: string[] = [];
    let cursor: string | null = null;
    do {
      const res = await h.call(auth, {
        method: 'GET',
        url: `/api/v1/integrations/${id}/operations?limit=100${cursor ? `&cursor=${cursor}` : ''}`,
      });
      assert.equal(res.statusCode, 200, res.body.slice(0, 500));
      const page = body(res);
      names.push(...page.data.map((entry: { name: string }) => entry.name));
      cursor = page.pagination.next_cursor;
    } while (cursor !== null);
    return names;
  }

  test('tools/list pages through thousands of tools: each entry once, in order', { timeout: 600_000 }, async (t) => {
    const expected: string[] = [];
    for (const id of largest)
      expected.push(...(await entryNames(id)).map((name) => `${id}.${name}`.replace(/[^A-Za-z0-9_.-]/g, '_')));
    assert.ok(expected.length > 2000, `${expected.length} entries`);

    const transport = new StreamableHTTPClientTransport(mcpUrl, {
      requestInit: { headers: { 'x-api-key': auth.key, 'x-tenant-id': 'acme' } },
    });
    const client = new Client({ name: 'corpus-pager', version: '1.0.0' });
    await client.connect(transport);
    const { tools, pages } = await listAllTools(client);
    await client.close();

    t.diagnostic(`${tools.length} tools in ${pages.length} pages`);
    assert.ok(pages.every((size) => size <= 200));
    assert.ok(pages.slice(0, -1).every((size) => size === 200));
    const names = tools.map((tool) => tool.name);
    assert.equal(new Set(names).size, names.length, 'no tool twice');
    assert.deepEqual(names, expected);
    for (const tool of tools) {
      assert.equal(tool.inputSchema.type, 'object', tool.name);
      assert.ok(tool.name.length <= 128, tool.name);
    }
  });
});
