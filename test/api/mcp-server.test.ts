// The MCP server (docs/mcp.md, src/mcp/server.ts, src/routes/mcp.ts) driven as agents drive it: the official SDK's
// Client over Streamable HTTP (protocol 2025-11-25, and a client that asks 2025-06-18), and plain HTTP for what clients
// do not send (the Inspector CLI: test/interop/mcp-inspector.test.ts). The route sits on a small app
// (test/support/mcp-fixture.ts): the service's Fastify instance, error handling, request log and metrics, a test auth
// hook and a fake backend.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import { CallToolResultSchema, type Progress } from '@modelcontextprotocol/sdk/types.js';
import type { JsonSchema } from '../../src/connectors/catalog.ts';
import { packageVersion } from '../../src/core/version.ts';
import { insufficientScopeCode } from '../../src/mcp/server.ts';
import { withErrorResult } from '../../src/mcp/tool-list.ts';
import { toolNames } from '../../src/mcp/tool-names.ts';
import { acmeTools, fakeBackend, type McpTestApp, mcpTestApp, testKey } from '../support/mcp-fixture.ts';
import { listAllTools } from '../support/mcp-tools.ts';

// biome-ignore lint/suspicious/noExplicitAny: JSON-RPC answers are read by shape, and every field read is asserted.
type Json = any;

const allScopes = 'integrations.*';

function headers(scopes = allScopes, tenant = 'acme'): Record<string, string> {
  return { 'x-api-key': testKey, 'x-tenant-id': tenant, 'x-test-scopes': scopes };
}

interface ClientOptions {
  scopes?: string;
  tenant?: string;
  /** The protocol revision the client asks for in `initialize` (the SDK's asks its latest, 2025-11-25). */
  protocolVersion?: string;
  fetch?: FetchLike;
}

/** An SDK client connected (initialized) to `url`; `sent` records each request's MCP-Protocol-Version header. */
async function connect(url: string, options: ClientOptions = {}) {
  const sent: Array<string | null> = [];
  const fetchVia = options.fetch ?? fetch;
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers: headers(options.scopes, options.tenant) },
    fetch: async (target, init) => {
      sent.push(new Headers(init?.headers).get('mcp-protocol-version'));
      const body = init?.body;
      // An older client: its initialize asks for an older revision.
      if (options.protocolVersion && typeof body === 'string' && body.includes('"initialize"')) {
        const message = JSON.parse(body);
        message.params.protocolVersion = options.protocolVersion;
        return fetchVia(target, { ...init, body: JSON.stringify(message) });
      }
      return fetchVia(target, init);
    },
  });
  const client = new Client({ name: 'interchange-test', version: '1.0.0' });
  await client.connect(transport);
  return { client, transport, sent };
}

/** POSTs `body` (an object as JSON, a string as it is) with the test credentials and MCP's Accept header. */
function post(url: string, body: unknown, extra: Record<string, string> = {}): Promise<Response> {
  return fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers(), ...extra },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

/** The JSON-RPC messages of an answer: its JSON body, or the data of its SSE events. */
async function messagesOf(res: Response): Promise<Json[]> {
  const text = await res.text();
  if (!res.headers.get('content-type')?.startsWith('text/event-stream')) return [JSON.parse(text)];
  return text
    .split('\n')
    .filter((line) => line.startsWith('data: '))
    .map((line) => JSON.parse(line.slice('data: '.length)));
}

/** JSON-RPC `method` with `params`, answered by one message. */
async function rpc(url: string, method: string, params: object, extra: Record<string, string> = {}): Promise<Json> {
  const res = await post(url, { jsonrpc: '2.0', id: 7, method, params }, extra);
  assert.equal(res.status, 200);
  const messages = await messagesOf(res);
  assert.equal(messages.length, 1);
  return messages[0];
}

describe('MCP server: /api/v1/mcp (docs/mcp.md)', () => {
  const backend = fakeBackend();
  let server: McpTestApp;

  before(async () => {
    server = await mcpTestApp(backend, { progressIntervalMs: 40 });
  });
  after(() => server.app.close());

  test('initialize answers serverInfo, the tools capability with listChanged, instructions, and 2025-11-25', async () => {
    const { client, transport } = await connect(server.url);
    assert.deepEqual(client.getServerVersion(), { name: 'interchange', version: packageVersion() });
    assert.deepEqual(client.getServerCapabilities(), { tools: { listChanged: true } });
    assert.match(client.getInstructions() ?? '', /Interchange/);
    assert.equal(transport.protocolVersion, '2025-11-25');
    // No session: the server keeps nothing between requests.
    assert.equal(transport.sessionId, undefined);
    await client.close();
  });

  test('a client asking for 2025-06-18 gets it, and lists and calls with it', async () => {
    const { client, transport, sent } = await connect(server.url, { protocolVersion: '2025-06-18' });
    assert.equal(transport.protocolVersion, '2025-06-18');
    assert.equal((await client.listTools()).tools.length, 200);
    const result = await client.callTool({ name: 'crm.findCustomer', arguments: { id: 'c-9' } });
    assert.deepEqual(result.structuredContent, { customer: { id: 'c-9', name: 'Ada' } });
    // Every request after initialize names the revision.
    assert.ok(sent.length >= 4);
    assert.deepEqual(
      sent.slice(1),
      sent.slice(1).map(() => '2025-06-18'),
    );
    await client.close();
  });

  test('tools/list pages through all 450 tools, 200 at most a page, in order, named by tool-names.ts', async () => {
    const { client } = await connect(server.url);
    const { tools, pages } = await listAllTools(client);
    assert.deepEqual(pages, [200, 200, 50]);
    assert.deepEqual(
      tools.map((tool) => tool.name),
      toolNames(acmeTools),
    );
    assert.equal(new Set(tools.map((tool) => tool.name)).size, 450);
    const [find, create] = tools;
    assert.deepEqual(find, {
      name: 'crm.findCustomer',
      title: 'findCustomer (crm)',
      description: 'Finds a customer by id.',
      inputSchema: acmeTools[0].entry.input_schema,
      outputSchema: withErrorResult(acmeTools[0].entry.output_schema as JsonSchema & { type: 'object' }),
      annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: true },
      _meta: { 'interchange/integration': 'crm', 'interchange/operation': 'findCustomer' },
    });
    assert.equal(create.name, 'crm.create_customer');
    assert.deepEqual(create.annotations, {
      readOnlyHint: false,
      destructiveHint: true,
      idempotentHint: false,
      openWorldHint: true,
    });
    assert.equal(create._meta?.['interchange/operation'], 'create customer');
    await client.close();
  });

  test('a malformed, over-long or another tenant’s cursor is JSON-RPC -32602', async () => {
    const next = (await rpc(server.url, 'tools/list', {})).result.nextCursor;
    assert.equal(typeof next, 'string');
    const otherTenants = (await rpc(server.url, 'tools/list', {}, headers(allScopes, 'other'))).result;
    assert.equal(otherTenants.nextCursor, undefined);
    const foreign = Buffer.from(JSON.stringify([1, 'other', 200, 'secret.op'])).toString('base64url');
    for (const cursor of ['nope!', Buffer.from('[1,"acme"]').toString('base64url'), foreign, 'A'.repeat(5000)]) {
      const answer = await rpc(server.url, 'tools/list', { cursor });
      assert.equal(answer.error?.code, -32602, cursor);
      assert.equal(answer.error.message, 'Invalid cursor.');
    }
    // The cursor works on any request, without a session.
    assert.equal((await rpc(server.url, 'tools/list', { cursor: next })).result.tools.length, 200);
  });

  test('tools/list without integrations.read is JSON-RPC error -32003 (insufficient_scope)', async () => {
    const answer = await rpc(server.url, 'tools/list', {}, headers('integrations.execute'));
    assert.equal(answer.error.code, insufficientScopeCode);
    assert.deepEqual(answer.error.data, {
      code: 'insufficient_scope',
      required_scope: 'integrations.read',
      granted_scopes: ['integrations.execute'],
    });
  });

  test('tools/call answers the data as structuredContent and as JSON text', async () => {
    const { client } = await connect(server.url);
    await client.listTools();
    const result = await client.callTool({ name: 'crm.findCustomer', arguments: { id: 'c-1', limit: 3 } });
    assert.deepEqual(result, {
      content: [{ type: 'text', text: '{"customer":{"id":"c-1","name":"Ada"}}' }],
      structuredContent: { customer: { id: 'c-1', name: 'Ada' } },
    });
    assert.deepEqual(backend.calls.at(-1), { tenantId: 'acme', tool: 'crm/findCustomer', input: { id: 'c-1', limit: 3 } });
    const write = await client.callTool({ name: 'crm.create_customer', arguments: { name: 'Ada' } });
    assert.deepEqual(write.structuredContent, { id: 'cus_1' });
    await client.close();
  });

  test('a call that execute refuses is a tool result with isError, its code and message, never a JSON-RPC error', async () => {
    const { client } = await connect(server.url);
    const result = await client.callTool({ name: 'crm.failing', arguments: {} });
    assert.deepEqual(result, {
      isError: true,
      content: [{ type: 'text', text: 'upstream_http_error: The upstream service answered with an HTTP error.' }],
      structuredContent: {
        error: {
          code: 'upstream_http_error',
          message: 'The upstream service answered with an HTTP error.',
          details: { upstream_status: 500 },
        },
      },
    });
    await client.close();
  });

  test('an unknown tool, another tenant’s, or a name no tool can have is JSON-RPC -32602; nothing runs', async () => {
    const { client } = await connect(server.url);
    const before = backend.calls.length;
    for (const name of ['crm.nope', 'secret.op', 'x'.repeat(129), 'crm findCustomer']) {
      await assert.rejects(client.callTool({ name, arguments: {} }), (error: Json) => {
        assert.equal(error.code, -32602, name);
        return true;
      });
    }
    // Raw: the message names the tool, without the SDK's "MCP error" prefix.
    const answer = await rpc(server.url, 'tools/call', { name: 'crm.nope', arguments: {} });
    assert.deepEqual(answer.error, { code: -32602, message: 'Unknown tool: crm.nope' });
    assert.equal(backend.calls.length, before);
    await client.close();
  });

  test('arguments that do not fit the input schema are validation_failed with every issue; the backend never sees them', async () => {
    const { client } = await connect(server.url);
    const before = backend.calls.length;
    const result = await client.callTool({ name: 'crm.findCustomer', arguments: { limit: '3', extra: true } });
    assert.equal(result.isError, true);
    const error = (result.structuredContent as Json).error;
    assert.equal(error.code, 'validation_failed');
    assert.deepEqual(error.details.issues.map((issue: Json) => issue.path).toSorted(), ['extra', 'id', 'limit']);
    assert.match((result.content as Json)[0].text, /^validation_failed: 3 fields are invalid\.$/);
    // No arguments at all are `{}`: `id` is missing.
    const none = await client.request({ method: 'tools/call', params: { name: 'crm.findCustomer' } }, CallToolResultSchema);
    assert.equal((none.structuredContent as Json).error.details.issues[0].path, 'id');
    assert.equal(backend.calls.length, before);
    await client.close();
  });

  test('a key without integrations.execute sees the tools; every call is insufficient_scope and nothing runs', async () => {
    const { client } = await connect(server.url, { scopes: 'integrations.read' });
    assert.equal((await client.listTools()).tools.length, 200);
    const before = backend.calls.length;
    // callTool, after listTools: the SDK's client checks an error result's structuredContent against the tool's
    // outputSchema too (typescript-sdk#1943); the listed outputSchema names the error, so the client shows it.
    const result = await client.callTool({ name: 'crm.findCustomer', arguments: { id: 'c-1' } });
    assert.deepEqual(result.structuredContent, {
      error: {
        code: 'insufficient_scope',
        message: 'Calling a tool needs the integrations.execute scope.',
        details: { required_scope: 'integrations.execute', granted_scopes: ['integrations.read'] },
      },
    });
    assert.equal(result.isError, true);
    assert.equal(backend.calls.length, before);
    await client.close();
  });

  test('a call with a progress token gets notifications/progress on its stream while it runs, and none after', async () => {
    const { client } = await connect(server.url);
    const reports: Progress[] = [];
    const result = await client.callTool({ name: 'crm.slowReport', arguments: { ms: 300 } }, CallToolResultSchema, {
      onprogress: (progress) => reports.push(progress),
    });
    assert.deepEqual(result.structuredContent, { ok: true });
    assert.ok(reports.length >= 3, `${reports.length} progress notifications`);
    assert.deepEqual(
      reports.map((report) => report.progress),
      reports.map((_, i) => i + 1),
    );
    for (const report of reports) assert.match(report.message ?? '', /^still running \(\d+ s\)$/);

    // On the wire: the notifications, then the response, and the stream ends; without a token, the response alone.
    const call = (meta: object) =>
      post(server.url, {
        jsonrpc: '2.0',
        id: 3,
        method: 'tools/call',
        params: { name: 'crm.slowReport', arguments: { ms: 250 }, _meta: meta },
      });
    const withToken = await messagesOf(await call({ progressToken: 'p-1' }));
    assert.equal(withToken.at(-1).id, 3);
    assert.ok(withToken.length >= 3);
    for (const message of withToken.slice(0, -1)) {
      assert.equal(message.method, 'notifications/progress');
      assert.equal(message.params.progressToken, 'p-1');
    }
    assert.deepEqual(
      (await messagesOf(await call({}))).map((message) => message.id),
      [3],
    );
    await client.close();
  });

  test('a client that goes away while its call runs: the call ends, nothing throws, the server answers on', async () => {
    const failures: unknown[] = [];
    const onFailure = (error: unknown) => failures.push(error);
    process.on('unhandledRejection', onFailure);
    process.on('uncaughtException', onFailure);
    try {
      const controller = new AbortController();
      const res = await fetch(server.url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          ...headers(),
          'x-request-id': 'gone-1',
        },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'tools/call',
          params: { name: 'crm.slowReport', arguments: { ms: 250 }, _meta: { progressToken: 1 } },
        }),
        signal: controller.signal,
      });
      assert.equal(res.status, 200);
      const reader = res.body!.getReader();
      await reader.read();
      controller.abort();
      const before = backend.calls.length;
      // The call finishes after its client has gone; its answer has nowhere to go, and nothing fails for that. (No
      // request log line either: Fastify's onResponse waits for a response that finishes, on every route.)
      await new Promise((resolve) => setTimeout(resolve, 400));
      assert.equal(backend.calls.length, before);
      assert.equal(backend.calls.at(-1)?.tool, 'crm/slowReport');
      assert.equal((await rpc(server.url, 'tools/list', {})).result.tools.length, 200);
      assert.deepEqual(failures, []);
    } finally {
      process.off('unhandledRejection', onFailure);
      process.off('uncaughtException', onFailure);
    }
  });

  test('GET and DELETE are 405 with Allow: POST (no stream of its own, no session), after authentication', async () => {
    for (const method of ['GET', 'DELETE']) {
      const res = await fetch(server.url, { method, headers: { accept: 'text/event-stream', ...headers() } });
      assert.equal(res.status, 405);
      assert.equal(res.headers.get('allow'), 'POST');
      assert.equal((await res.json()).error.code, -32000);
      const anonymous = await fetch(server.url, { method });
      assert.equal(anonymous.status, 401);
    }
  });

  test('a 401 comes before any JSON-RPC, in the API’s shape, offering the API key and Bearer schemes', async () => {
    const res = await fetch(server.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    assert.equal(res.status, 401);
    assert.equal(
      res.headers.get('www-authenticate'),
      'ApiKey realm="interchange", header="X-API-Key", Bearer realm="interchange"',
    );
    const body = await res.json();
    assert.equal(body.error.code, 'missing_credentials');
    assert.equal(body.request_id, res.headers.get('x-request-id'));
  });

  test('bodies: not JSON is 400 invalid_json, not application/json 415, a batch 400 -32600, not JSON-RPC 400 -32700', async () => {
    const notJson = await post(server.url, '{"jsonrpc": ');
    assert.equal(notJson.status, 400);
    assert.equal((await notJson.json()).error.code, 'invalid_json');
    // No body is no message, as on any route that takes one.
    const empty = await post(server.url, '');
    assert.equal(empty.status, 400);
    assert.equal((await empty.json()).error.code, 'validation_failed');
    const text = await post(server.url, 'hello', { 'content-type': 'text/plain' });
    assert.equal(text.status, 415);
    assert.equal((await text.json()).error.code, 'unsupported_media_type');

    const before = backend.calls.length;
    const batch = await post(server.url, [
      { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'crm.findCustomer', arguments: { id: 'a' } } },
      { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'crm.findCustomer', arguments: { id: 'b' } } },
    ]);
    assert.equal(batch.status, 400);
    assert.equal((await batch.json()).error.code, -32600);
    assert.equal(backend.calls.length, before);
    const notRpc = await post(server.url, { hello: 'world' });
    assert.equal(notRpc.status, 400);
    assert.equal((await notRpc.json()).error.code, -32700);
    // The transport's own rule: a client must take both JSON and SSE.
    const accept = await post(server.url, { jsonrpc: '2.0', id: 1, method: 'tools/list' }, { accept: 'application/json' });
    assert.equal(accept.status, 406);
  });

  test('the handed-over answer keeps the request id and rate-limit headers, and gets its log line and metrics', async () => {
    const res = await post(
      server.url,
      { jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} },
      { 'x-request-id': 'mcp-req-1' },
    );
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('x-request-id'), 'mcp-req-1');
    assert.equal(res.headers.get('ratelimit-limit'), '600');
    assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
    await res.text();
    // The log line is written when the response has finished: wait for it.
    let line: Json;
    for (let i = 0; i < 50 && !line; i++) {
      line = server.lines.find((l) => l.request_id === 'mcp-req-1');
      if (!line) await new Promise((resolve) => setTimeout(resolve, 10));
    }
    assert.ok(line, 'no log line');
    assert.deepEqual([line.route, line.status, line.tenant_id, line.key_id], ['/api/v1/mcp', 200, 'acme', 'key_test']);
    const metrics = await server.app.metrics.getSingleMetricAsString('ix_http_requests_total');
    assert.match(metrics, /ix_http_requests_total\{method="POST",route="\/api\/v1\/mcp",status="200"\} \d+/);
  });
});

describe('MCP server: two instances behind one address', () => {
  const backend = fakeBackend();
  let one: McpTestApp;
  let two: McpTestApp;

  before(async () => {
    [one, two] = await Promise.all([
      mcpTestApp(backend, { progressIntervalMs: 40 }),
      mcpTestApp(backend, { progressIntervalMs: 40 }),
    ]);
  });
  after(() => Promise.all([one.app.close(), two.app.close()]));

  test('answer alternate requests of one client session', async () => {
    const served: string[] = [];
    let turn = 0;
    const alternate: FetchLike = (_url, init) => {
      const target = turn++ % 2 === 0 ? one.url : two.url;
      served.push(target);
      return fetch(target, init);
    };
    const { client } = await connect(one.url, { fetch: alternate });
    const { tools, pages } = await listAllTools(client);
    assert.deepEqual(pages, [200, 200, 50]);
    assert.equal(new Set(tools.map((tool) => tool.name)).size, 450);
    for (const id of ['a', 'b', 'c']) {
      const result = await client.callTool({ name: 'crm.findCustomer', arguments: { id } });
      assert.deepEqual(result.structuredContent, { customer: { id, name: 'Ada' } });
    }
    const reports: Progress[] = [];
    await client.callTool({ name: 'crm.slowReport', arguments: { ms: 150 } }, CallToolResultSchema, {
      onprogress: (progress) => reports.push(progress),
    });
    assert.ok(reports.length >= 1);
    assert.ok(served.filter((url) => url === one.url).length >= 4);
    assert.ok(served.filter((url) => url === two.url).length >= 4);
    await client.close();
  });
});
