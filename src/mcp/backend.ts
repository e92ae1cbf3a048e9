import type { FastifyBaseLogger } from 'fastify';
import type { CatalogEntry } from '../connectors/catalog.ts';

/**
 * What the MCP server (server.ts) asks of the rest of Interchange: the tools a tenant offers and running one. The
 * execution layer implements it (execution/catalog-service.ts); the MCP layer knows nothing of connectors.
 */

/** One catalogue entry offered as a tool: of an integration with `catalog.mcp: true`, a write only with `allow_writes`. */
export interface OfferedTool {
  integrationId: string;
  /** The integration's version: with the id and the entry's name, a key for what is compiled from the entry. */
  integrationVersion: number;
  entry: CatalogEntry;
}

/** A progress report while a call runs (MCP `notifications/progress`). */
export type ProgressReport = (progress: number, message: string) => void;

/** How a tool's call ended: the execute answer's `data`, or the error execute answered (status and error body). */
export type ToolOutcome =
  | { ok: true; data: Record<string, unknown> }
  | { ok: false; status: number; error: { code: string; message: string; details?: unknown } };

/** Who calls a tool, as the execute it runs records them: the tenant, the key or the person, the request. */
export interface ToolCaller {
  tenantId: string;
  keyId: string | null;
  userId: string | null;
  requestId: string;
  log: FastifyBaseLogger;
}

export interface McpBackend {
  /**
   * Every tool the tenant offers, integrations in id order and each one's entries in catalogue order. An integration
   * whose catalogue cannot be read now (its WSDL unreachable) offers none and does not fail the list.
   */
  tools(tenantId: string): Promise<OfferedTool[]>;
  /**
   * Runs `tool` with `input` as execute would (`receive` for a read, `send` for a write) for `caller`,
   * recorded with `via: "mcp"`. Every refusal execute would answer (scope, limits, validation, upstream failures) is an
   * `ok: false` outcome, never a throw.
   */
  call(caller: ToolCaller, tool: OfferedTool, input: Record<string, unknown>): Promise<ToolOutcome>;
}
