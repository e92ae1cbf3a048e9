import type { ListToolsResult, Tool } from '@modelcontextprotocol/sdk/types.js';
import type { JsonSchema } from '../connectors/catalog.ts';
import type { OfferedTool } from './backend.ts';
import { toolNames } from './tool-names.ts';

/** The most tools one `tools/list` page holds (docs/mcp.md). */
export const toolsPerPage = 200;

/** The longest `cursor` taken: ours are far shorter (a tenant id and a tool name of at most 128 characters each). */
export const maxCursorLength = 1024;

/** An offered tool with its MCP name and the schemas it is listed with. */
export interface ListedTool {
  name: string;
  tool: OfferedTool;
  inputSchema: JsonSchema & { type: 'object' };
  outputSchema: (JsonSchema & { type: 'object' }) | undefined;
}

/**
 * A schema as MCP takes it (`type: "object"`, each property's schema an object), or undefined when it describes no
 * object: the SDK's clients refuse a whole `tools/list` page over one schema they cannot read. A schema without `type`
 * gets `type: "object"` (execute takes, and answers, only objects there); a property's boolean schema its object form.
 */
function objectSchema(schema: JsonSchema): (JsonSchema & { type: 'object' }) | undefined {
  if (schema.type !== undefined && schema.type !== 'object') return undefined;
  const properties = schema.properties;
  if (properties !== undefined && (typeof properties !== 'object' || properties === null || Array.isArray(properties))) {
    return undefined;
  }
  const fixed =
    properties &&
    Object.fromEntries(
      Object.entries(properties).map(([name, value]) => [name, value === true ? {} : value === false ? { not: {} } : value]),
    );
  return { ...schema, type: 'object', ...(fixed && { properties: fixed }) };
}

/**
 * The tools as `tools/list` shows them, in the backend's order, named by `toolNames` over all of them (so that a
 * tool left out does not rename the others). A tool whose input schema describes no object is left out and told to
 * `leftOut`; an output schema that describes no object is not listed (the tool is, without it).
 */
export function listedTools(tools: readonly OfferedTool[], leftOut: (tool: OfferedTool) => void = () => {}): ListedTool[] {
  const names = toolNames(tools);
  const listed: ListedTool[] = [];
  tools.forEach((tool, index) => {
    const inputSchema = objectSchema(tool.entry.input_schema);
    if (inputSchema === undefined) leftOut(tool);
    else listed.push({ name: names[index], tool, inputSchema, outputSchema: objectSchema(tool.entry.output_schema) });
  });
  return listed;
}

/** A failed call's `structuredContent` (docs/mcp.md): the error execute answered. */
const errorResult: JsonSchema = {
  type: 'object',
  required: ['error'],
  additionalProperties: false,
  properties: {
    error: {
      type: 'object',
      required: ['code', 'message'],
      properties: { code: { type: 'string' }, message: { type: 'string' }, details: {} },
    },
  },
};

/**
 * The `outputSchema` a tool is listed with: the entry's `output_schema`, or the error a failed call carries. A failed
 * call is `isError: true` with `structuredContent: {error}` (docs/mcp.md); the SDK's client (1.32.2) checks even such a
 * result against `outputSchema` and throws where it should show the error (modelcontextprotocol/typescript-sdk#1943),
 * so the schema names both. The entry's `$defs` stay at the root, where its `#/$defs/…` references point.
 */
export function withErrorResult(output: JsonSchema & { type: 'object' }): JsonSchema & { type: 'object' } {
  const { $defs, ...answer } = output;
  return { type: 'object', ...($defs !== undefined && { $defs }), anyOf: [answer, errorResult] };
}

/** A tool as MCP lists it (docs/mcp.md). */
export function toolDescription({ name, tool, inputSchema, outputSchema }: ListedTool): Tool {
  const { integrationId, entry } = tool;
  return {
    name,
    title: `${entry.name} (${integrationId})`,
    // The catalogue's text, cleaned of control characters when it was made: data, never mixed with instructions.
    description: entry.description,
    inputSchema,
    ...(outputSchema && { outputSchema: withErrorResult(outputSchema) }),
    annotations: {
      readOnlyHint: entry.kind === 'read',
      destructiveHint: entry.kind === 'write',
      idempotentHint: entry.kind === 'read',
      openWorldHint: true,
    },
    _meta: { 'interchange/integration': integrationId, 'interchange/operation': entry.name },
  };
}

/** Where the next page starts: after the tool named `after`, or at `offset` when that tool is gone. */
interface Position {
  offset: number;
  after: string;
}

function encodeCursor(tenantId: string, position: Position): string {
  return Buffer.from(JSON.stringify([1, tenantId, position.offset, position.after])).toString('base64url');
}

/** The position a cursor of this tenant's holds; undefined for anything else (malformed, another tenant's). */
function decodeCursor(cursor: string, tenantId: string): Position | undefined {
  if (cursor.length > maxCursorLength || !/^[A-Za-z0-9_-]+$/.test(cursor)) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    return undefined;
  }
  if (!Array.isArray(value) || value.length !== 4) return undefined;
  const [version, tenant, offset, after] = value;
  if (version !== 1 || tenant !== tenantId || typeof after !== 'string') return undefined;
  if (!Number.isSafeInteger(offset) || offset < 1) return undefined;
  return { offset, after };
}

/**
 * One page of `tools/list`: at most `toolsPerPage` tools from where `cursor` says, and `nextCursor` when more follow.
 * The cursor holds its position (the last tool listed, and how many came before), not a reference to state: any
 * instance continues it. Undefined when the cursor is not one of this tenant's (the caller answers -32602).
 */
export function toolsPage(
  tools: readonly ListedTool[],
  tenantId: string,
  cursor: string | undefined,
): ListToolsResult | undefined {
  let start = 0;
  if (cursor !== undefined) {
    const position = decodeCursor(cursor, tenantId);
    if (position === undefined) return undefined;
    // The list may have changed since the previous page: continue after the last tool shown while it is there.
    const after = tools.findIndex((listed) => listed.name === position.after);
    start = after === -1 ? position.offset : after + 1;
  }
  const page = tools.slice(start, start + toolsPerPage);
  const end = start + page.length;
  return {
    tools: page.map(toolDescription),
    ...(end < tools.length &&
      page.length > 0 && { nextCursor: encodeCursor(tenantId, { offset: end, after: page.at(-1)!.name }) }),
  };
}
