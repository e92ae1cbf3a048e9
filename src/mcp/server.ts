import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import {
  CallToolRequestSchema,
  type CallToolResult,
  ErrorCode,
  ListToolsRequestSchema,
  type ServerNotification,
  type ServerRequest,
} from '@modelcontextprotocol/sdk/types.js';
import type { jsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/types.js';
import type { FastifyRequest } from 'fastify';
import { type AuthContext, caller } from '../auth/authenticate.ts';
import { hasScope } from '../auth/scopes.ts';
import { ApiError, validationFailed } from '../core/errors.ts';
import { packageVersion } from '../core/version.ts';
import { toApiError } from '../http/error-handler.ts';
import type { McpBackend, OfferedTool, ToolOutcome } from './backend.ts';
import { InputValidators, inputValidatorCacheSize } from './input-validation.ts';
import { type ListedTool, listedTools, maxCursorLength, toolsPage } from './tool-list.ts';
import { maxToolNameLength } from './tool-names.ts';

/**
 * JSON-RPC error code of a request the caller's scopes do not cover (`tools/list` without `integrations.read`), from
 * the range JSON-RPC leaves to servers (-32000 to -32099; the SDK uses -32000 and -32001, MCP -32002 and -32042).
 * `data` holds `code: "insufficient_scope"`, `required_scope` and `granted_scopes`, as the HTTP API's 403 details.
 */
export const insufficientScopeCode = -32003;

/** Milliseconds between progress notifications while a call runs, when the caller asked for them. */
export const defaultProgressIntervalMs = 5000;

export interface McpServerOptions {
  /** Milliseconds between `notifications/progress` while a `tools/call` with a progress token runs (default 5,000). */
  progressIntervalMs?: number;
  /** How many tools' compiled input validators are kept (default `inputValidatorCacheSize`). */
  validatorCacheSize?: number;
}

const instructions =
  'Interchange runs operations on the external systems (GraphQL and SOAP services) that this tenant has integrated. ' +
  'Each tool is one operation of one integration, named <integration id>.<operation>; its input schema describes the ' +
  'parameters, its output schema the data it answers. Read tools change nothing upstream; write tools may. A failed ' +
  'call is a result with isError and an error code (for example validation_failed, upstream_timeout).';

/**
 * A JSON-RPC error as the SDK sends it (`code`, `message`, `data` of a thrown value). Not the SDK's McpError, whose
 * message would go out as "MCP error -32602: …".
 */
class RpcError extends Error {
  readonly code: number;
  readonly data: unknown;

  constructor(code: number, message: string, data?: unknown) {
    super(message);
    this.code = code;
    this.data = data;
  }
}

// The SDK's Server builds an Ajv instance for elicitation answers when given no validator: one per request here, for
// a feature this server never uses.
const noElicitation: jsonSchemaValidator = {
  getValidator() {
    throw new Error('This server asks no elicitation.');
  },
};

type Extra = RequestHandlerExtra<ServerRequest, ServerNotification>;

/**
 * A failed call as a tool result (docs/mcp.md): `isError`, the code and message, and the error as structured content.
 * SDK clients up to 1.32.2 check that `{error}` against the tool's output schema as if it were data, and answer their
 * caller -32602 in its place when the schema does not let it through (typescript-sdk #1943, its fix #1945).
 */
function failedCall(request: FastifyRequest, error: { code: string; message: string; details?: unknown }): CallToolResult {
  request.errorCode = error.code;
  const { code, message, details } = error;
  return {
    isError: true,
    content: [{ type: 'text', text: `${code}: ${message}` }],
    structuredContent: { error: details === undefined ? { code, message } : { code, message, details } },
  };
}

/**
 * MCP over the tools of the caller's tenant (docs/mcp.md), with the official SDK's `Server`: `forRequest` builds one for
 * each HTTP request, connected by the route to a stateless Streamable HTTP transport. Nothing of a session is held:
 * the caller and its tenant are the request's, a page's position is in its cursor, so any instance answers any
 * request. What is kept is the compiled input validators, by integration version and entry.
 */
export class McpServers {
  readonly #backend: McpBackend;
  readonly #progressIntervalMs: number;
  readonly #validators: InputValidators;

  constructor(backend: McpBackend, options: McpServerOptions = {}) {
    const interval = options.progressIntervalMs ?? defaultProgressIntervalMs;
    if (!Number.isFinite(interval) || interval <= 0) throw new RangeError(`progressIntervalMs must be positive, got ${interval}`);
    this.#backend = backend;
    this.#progressIntervalMs = interval;
    this.#validators = new InputValidators(options.validatorCacheSize ?? inputValidatorCacheSize);
  }

  /** An MCP server for one authenticated HTTP request (`request.auth` set by the auth hook, the route's `scope: 'any'`). */
  forRequest(request: FastifyRequest): Server {
    const server = new Server(
      { name: 'interchange', version: packageVersion() },
      { capabilities: { tools: { listChanged: true } }, instructions, jsonSchemaValidator: noElicitation },
    );
    server.setRequestHandler(ListToolsRequestSchema, (message) =>
      guarded(request, () => this.#list(request, caller(request), message.params?.cursor)),
    );
    server.setRequestHandler(CallToolRequestSchema, (message, extra) =>
      guarded(request, () => this.#call(request, caller(request), message.params.name, message.params.arguments ?? {}, extra)),
    );
    return server;
  }

  async #list(request: FastifyRequest, auth: AuthContext, cursor: string | undefined) {
    if (!hasScope(auth.scopes, 'integrations.read')) {
      request.errorCode = 'insufficient_scope';
      throw new RpcError(insufficientScopeCode, 'Listing tools needs the integrations.read scope.', {
        code: 'insufficient_scope',
        required_scope: 'integrations.read',
        granted_scopes: auth.scopes,
      });
    }
    // Checked before anything is read: a cursor is short, whatever it holds.
    const page =
      cursor !== undefined && cursor.length > maxCursorLength
        ? undefined
        : toolsPage(await this.#tools(request, auth.tenantId), auth.tenantId, cursor);
    if (page === undefined) {
      request.errorCode = 'validation_failed';
      throw new RpcError(ErrorCode.InvalidParams, 'Invalid cursor.');
    }
    return page;
  }

  async #call(
    request: FastifyRequest,
    auth: AuthContext,
    name: string,
    input: Record<string, unknown>,
    extra: Extra,
  ): Promise<CallToolResult> {
    // A name no tool can have is not looked for, nor repeated back at any length.
    const possible = name.length <= maxToolNameLength && /^[A-Za-z0-9_.-]+$/.test(name);
    const listed = possible ? (await this.#tools(request, auth.tenantId)).find((tool) => tool.name === name) : undefined;
    // An unknown tool, another tenant's, or a write the integration does not offer (backend.tools leaves it out).
    if (listed === undefined) {
      request.errorCode = 'not_found';
      throw new RpcError(
        ErrorCode.InvalidParams,
        possible
          ? `Unknown tool: ${name}`
          : `Unknown tool: a tool name has 1 to ${maxToolNameLength} of A-Z, a-z, 0-9, _, . and -.`,
      );
    }

    // The scope first: every call of a key without it is refused alike, whatever its arguments (docs/mcp.md).
    if (!hasScope(auth.scopes, 'integrations.execute')) {
      return failedCall(
        request,
        new ApiError('insufficient_scope', 'Calling a tool needs the integrations.execute scope.', {
          required_scope: 'integrations.execute',
          granted_scopes: auth.scopes,
        }),
      );
    }
    const issues = this.#validators.issues(listed.tool, listed.inputSchema, input);
    if (issues.length > 0) return failedCall(request, validationFailed(issues));
    const toolCaller = {
      tenantId: auth.tenantId,
      keyId: auth.key?.id ?? null,
      userId: auth.user?.id ?? null,
      requestId: request.id,
      log: request.log,
    };
    const outcome = await this.#withProgress(extra, () => this.#backend.call(toolCaller, listed.tool, input));
    if (!outcome.ok) return failedCall(request, outcome.error);
    return { content: [{ type: 'text', text: JSON.stringify(outcome.data) }], structuredContent: outcome.data };
  }

  async #tools(request: FastifyRequest, tenantId: string): Promise<ListedTool[]> {
    return listedTools(await this.#backend.tools(tenantId), (tool: OfferedTool) =>
      request.log.warn(
        { integration_id: tool.integrationId, operation: tool.entry.name },
        'MCP tool left out: its input schema describes no object',
      ),
    );
  }

  /**
   * Runs `call`, and while it runs sends `notifications/progress` every interval when the caller gave a progress token
   * (on the request's own SSE stream: the notification is related to the request), counting up from 1. Stops when the
   * call ends, or when the request's stream is gone.
   */
  async #withProgress(extra: Extra, call: () => Promise<ToolOutcome>): Promise<ToolOutcome> {
    const progressToken = extra._meta?.progressToken;
    if (progressToken === undefined) return call();
    const started = Date.now();
    let progress = 0;
    const timer = setInterval(() => {
      progress += 1;
      const seconds = Math.round((Date.now() - started) / 1000);
      extra
        .sendNotification({
          method: 'notifications/progress',
          params: { progressToken, progress, message: `still running (${seconds} s)` },
        })
        .catch(() => {});
    }, this.#progressIntervalMs).unref();
    // The client went away (the route closes the server): the call runs on, its reports have nowhere to go.
    const stop = () => clearInterval(timer);
    extra.signal.addEventListener('abort', stop, { once: true });
    try {
      return await call();
    } finally {
      stop();
      extra.signal.removeEventListener('abort', stop);
    }
  }
}

/**
 * Runs a handler; what it throws that is no JSON-RPC error of ours becomes JSON-RPC -32603 with the catalogue code
 * and the request id in `data`: storage unavailable says so, anything unknown is logged and never shown.
 */
async function guarded<T>(request: FastifyRequest, handle: () => Promise<T>): Promise<T> {
  try {
    return await handle();
  } catch (error) {
    if (error instanceof RpcError) throw error;
    const known = toApiError(error);
    if (known === undefined) request.log.error({ err: error }, 'MCP request failed');
    const failure = known ?? new ApiError('internal_error');
    request.errorCode = failure.code;
    throw new RpcError(ErrorCode.InternalError, failure.message, { code: failure.code, request_id: request.id });
  }
}
