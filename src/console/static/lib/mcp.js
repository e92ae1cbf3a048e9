import { ApiFailure, request } from './api.js';

/**
 * The service's MCP server (docs/mcp.md) as the console uses it: its address, the tools it offers the tenant (asked of
 * the server itself, with the person's access token), and a client's configuration.
 */

export const mcpPath = '/api/v1/mcp';
export const mcpProtocolVersion = '2025-11-25';

/** The address an MCP client connects to. */
export const mcpUrl = () => `${location.origin}${mcpPath}`;

/** What an MCP client's configuration (Streamable HTTP, an API key) holds for this tenant. */
export function clientConfiguration(tenant) {
  return {
    mcpServers: {
      interchange: {
        type: 'http',
        url: mcpUrl(),
        headers: { 'X-API-Key': '<your API key>', 'X-Tenant-ID': tenant },
      },
    },
  };
}

/** A JSON-RPC error answered by the MCP server. */
export class McpFailure extends Error {
  constructor(error, requestId) {
    super(error?.message ?? 'The MCP server answered with an error.');
    this.code = `JSON-RPC ${error?.code ?? 'error'}`;
    this.details = error?.data ?? null;
    this.requestId = requestId;
  }
}

/** The JSON-RPC messages of an SSE stream: each event's `data:` lines, joined, as JSON (what is not JSON is skipped). */
export function eventStreamMessages(text) {
  const messages = [];
  for (const event of text.split(/\r\n\r\n|\n\n|\r\r/)) {
    const data = event
      .split(/\r\n|\n|\r/)
      .filter((line) => line.startsWith('data:'))
      .map((line) => line.slice(5).replace(/^ /, ''))
      .join('\n');
    if (!data) continue;
    try {
      messages.push(JSON.parse(data));
    } catch {
      // A keep-alive or a partial event: nothing to read.
    }
  }
  return messages;
}

/** Sends one JSON-RPC request and resolves to its `result`; the answer may be JSON or an SSE stream. */
async function call(tenant, id, method, params) {
  const answer = await request('/mcp', {
    method: 'POST',
    tenant,
    headers: {
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': mcpProtocolVersion,
    },
    body: { jsonrpc: '2.0', id, method, params },
  });
  const requestId = answer.headers.get('x-request-id');
  const type = answer.headers.get('content-type') ?? '';
  const messages = type.includes('text/event-stream') ? eventStreamMessages(answer.text) : [answer.body];
  const reply = messages.find((m) => m && typeof m === 'object' && m.id === id && ('result' in m || 'error' in m));
  if (reply?.error) throw new McpFailure(reply.error, requestId);
  if (!answer.ok) {
    // The API's own refusals (401, 429, …) come before any JSON-RPC, in its error shape.
    const rpcError = answer.body?.error && typeof answer.body.error.code === 'number' ? answer.body.error : null;
    throw rpcError ? new McpFailure(rpcError, requestId) : new ApiFailure(answer);
  }
  if (!reply) throw new McpFailure({ message: 'The MCP server gave no answer to the request.' }, requestId);
  return reply.result;
}

/** Every tool offered to the tenant's agents (all `tools/list` pages, at most `max`). */
export async function listTools(tenant, max = 10_000) {
  const tools = [];
  let cursor;
  let id = 0;
  do {
    id += 1;
    const result = await call(tenant, id, 'tools/list', cursor ? { cursor } : {});
    tools.push(...(result?.tools ?? []));
    cursor = result?.nextCursor;
  } while (cursor && tools.length < max);
  return tools;
}

/** A listed tool in the console's words: `{name, title, integration, operation, kind, description}`. */
export function toolSummary(tool) {
  const meta = tool._meta ?? {};
  return {
    name: tool.name,
    title: tool.title ?? '',
    integration: meta['interchange/integration'] ?? null,
    operation: meta['interchange/operation'] ?? tool.name,
    kind: tool.annotations?.readOnlyHint ? 'read' : 'write',
    description: tool.description ?? '',
  };
}
