import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';

/** Every page of an MCP server's tools/list through the SDK client, and each page's size. */
export async function listAllTools(client: Client): Promise<{ tools: Tool[]; pages: number[] }> {
  const tools: Tool[] = [];
  const pages: number[] = [];
  let cursor: string | undefined;
  do {
    const page = await client.listTools(cursor === undefined ? {} : { cursor });
    tools.push(...page.tools);
    pages.push(page.tools.length);
    cursor = page.nextCursor;
  } while (cursor !== undefined);
  return { tools, pages };
}
