import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { FastifyInstance, FastifyReply, FastifyRequest, onSendHookHandler } from 'fastify';
import { wwwAuthenticate } from '../http/error-handler.ts';
import type { McpBackend } from '../mcp/backend.ts';
import { type McpServerOptions, McpServers } from '../mcp/server.ts';
import { documentedBody, failures, ref, security } from './schemas.ts';

export type McpRouteOptions = McpServerOptions;

const path = '/api/v1/mcp';

/** This route takes a person's access token as a Bearer token too: its 401 offers both schemes (RFC 9110 §11.6.1). */
const mcpWwwAuthenticate = `${wwwAuthenticate}, Bearer realm="interchange"`;

const jsonRpcError = {
  type: 'object',
  description: 'A JSON-RPC 2.0 error response.',
  required: ['jsonrpc', 'error'],
  additionalProperties: false,
  properties: {
    jsonrpc: { type: 'string', enum: ['2.0'] },
    id: { type: ['string', 'integer', 'null'] },
    error: {
      type: 'object',
      required: ['code', 'message'],
      additionalProperties: false,
      properties: { code: { type: 'integer' }, message: { type: 'string' }, data: {} },
    },
  },
} as const;

const jsonRpcMessage = {
  type: 'object',
  description:
    'One JSON-RPC 2.0 message of MCP (revisions 2025-11-25 and 2025-06-18): a request (`initialize`, `ping`, `tools/list`, ' +
    '`tools/call`), a notification or a response. A batch (an array) is answered 400 with JSON-RPC error -32600: these ' +
    'revisions have none.',
  required: ['jsonrpc'],
  additionalProperties: true,
  properties: {
    jsonrpc: { type: 'string', enum: ['2.0'] },
    id: { type: ['string', 'integer'] },
    method: { type: 'string' },
    params: { type: 'object', additionalProperties: true },
    result: { type: 'object', additionalProperties: true },
    error: jsonRpcError.properties.error,
  },
  examples: [
    { jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} },
    { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'crm.findCustomer', arguments: { id: 'c-1' } } },
  ],
} as const;

const jsonRpcReply = {
  type: 'object',
  description: 'A JSON-RPC 2.0 response: `result`, or `error`.',
  required: ['jsonrpc'],
  additionalProperties: true,
  properties: {
    jsonrpc: { type: 'string', enum: ['2.0'] },
    id: { type: ['string', 'integer', 'null'] },
    result: { type: 'object', additionalProperties: true },
    error: jsonRpcError.properties.error,
  },
} as const;

/** Every 401 of this route offers the Bearer scheme beside the API key's. */
const challengeBoth: onSendHookHandler = (_request, reply, payload, done) => {
  if (reply.statusCode === 401) reply.header('www-authenticate', mcpWwwAuthenticate);
  done(null, payload);
};

function rpcError(reply: FastifyReply, status: number, code: number, message: string) {
  return reply.code(status).type('application/json').send({ jsonrpc: '2.0', error: { code, message }, id: null });
}

/**
 * Hands the request to a stateless Streamable HTTP transport and its MCP server, which write the answer themselves
 * (Fastify lets go of the reply). The headers set so far (X-Request-Id, the rate limit's) go out with it; the request's
 * log line and metrics still come from the onResponse hooks, which run when the raw response finishes.
 */
async function answer(servers: McpServers, request: FastifyRequest, reply: FastifyReply, body: unknown): Promise<void> {
  const message = body as { method?: unknown };
  // A call may run long: it answers on an SSE stream (progress notifications, keep-alive comments, then the result).
  // Anything else answers at once, as plain JSON.
  const transport = new StreamableHTTPServerTransport({
    sessionIdGenerator: undefined,
    enableJsonResponse: message.method !== 'tools/call',
  });
  const server = servers.forRequest(request);
  // The transport's own refusals (406 for a wrong Accept, a message that is not JSON-RPC) are the caller's doing.
  server.onerror = (error) => request.log.debug({ err: error }, 'MCP transport');
  reply.hijack();
  for (const [name, value] of Object.entries(reply.getHeaders())) if (value !== undefined) reply.raw.setHeader(name, value);
  // Whether the answer ended or the client went away: the server, its transport and a call's progress timer stop.
  reply.raw.once('close', () => {
    server.close().catch((error) => request.log.debug({ err: error }, 'MCP server close'));
  });
  try {
    await server.connect(transport);
    await transport.handleRequest(request.raw, reply.raw, body);
  } catch (error) {
    request.log.error({ err: error }, 'MCP request failed');
    request.errorCode = 'internal_error';
    if (!reply.raw.headersSent) {
      reply.raw.writeHead(500, { 'content-type': 'application/json' });
      reply.raw.end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32603, message: 'Internal error' }, id: null }));
    } else {
      reply.raw.destroy();
    }
  }
}

/**
 * The MCP server of docs/mcp.md at `/api/v1/mcp`: Streamable HTTP, stateless (no sessions: any instance answers any
 * request). Authenticated as the rest of the API (`scope: 'any'`: an API key or a person's access token, with
 * X-Tenant-ID; the rate limit applies); the JSON-RPC methods check their own scopes (src/mcp/server.ts).
 */
export function registerMcpRoute(app: FastifyInstance, backend: McpBackend, options: McpRouteOptions = {}): void {
  const servers = new McpServers(backend, options);

  app.post(
    path,
    {
      config: { scope: 'any', swaggerTransform: documentedBody(jsonRpcMessage) },
      onSend: challengeBoth,
      schema: {
        tags: ['AI agents'],
        security,
        operationId: 'mcp',
        summary: 'The Model Context Protocol server: the tenant’s catalogue operations as tools (Streamable HTTP, stateless).',
        description:
          'MCP over Streamable HTTP, revisions 2025-11-25 and 2025-06-18, without sessions. Send `Accept: application/json, ' +
          'text/event-stream` (otherwise 406 with a JSON-RPC error). `tools/list` needs `integrations.read` (else JSON-RPC ' +
          'error -32003), `tools/call` `integrations.execute` (else a tool result with `isError` and `insufficient_scope`).',
        // The validator takes any object or array: what is no JSON-RPC message is the transport's to refuse, in JSON-RPC.
        body: { type: ['object', 'array'] },
        response: {
          200: {
            description:
              'A request’s answer: one JSON-RPC response as application/json, or for `tools/call` an SSE stream of JSON-RPC ' +
              'messages (`notifications/progress` when the call gave a progress token, then its response). A body of ' +
              'notifications or responses only is accepted with 202 and no body.',
            content: {
              'application/json': { schema: jsonRpcReply },
              'text/event-stream': {
                schema: { type: 'string', description: 'Events `event: message` with `data: <one JSON-RPC message>`.' },
              },
            },
          },
          400: {
            description:
              'The body is no JSON (`invalid_json`), or no X-Tenant-ID (`missing_tenant`); or, as a JSON-RPC error, a batch ' +
              '(-32600) or no JSON-RPC message (-32700).',
            oneOf: [ref('Error'), jsonRpcError],
          },
          ...failures([413, 415, 429, 500, 503]),
          401: {
            ...failures([401])[401],
            headers: { 'WWW-Authenticate': { type: 'string', description: mcpWwwAuthenticate } },
          },
        },
      },
    },
    async (request, reply) => {
      const body = request.body;
      if (Array.isArray(body)) {
        return rpcError(
          reply,
          400,
          -32600,
          'JSON-RPC batches are not supported (MCP 2025-06-18 removed them): send one message per request.',
        );
      }
      await answer(servers, request, reply, body);
    },
  );

  // A stateless server opens no stream of its own and has no session to end: the Streamable HTTP transport lets it
  // answer GET and DELETE with 405 (MCP 2025-11-25, basic/transports: "Listening for Messages from the Server" and
  // "Session Management"). Authenticated all the same, as every method of this path.
  const notAllowed = (_request: FastifyRequest, reply: FastifyReply) => {
    reply.header('allow', 'POST');
    return rpcError(reply, 405, -32000, 'Method not allowed: this MCP server is stateless; POST JSON-RPC messages.');
  };
  for (const method of ['GET', 'DELETE'] as const) {
    app.route({
      method,
      url: path,
      config: { scope: 'any' },
      onSend: challengeBoth,
      schema: { hide: true },
      handler: notAllowed,
    });
  }
}
