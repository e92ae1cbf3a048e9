import { LRUCache } from 'lru-cache';
import { type CatalogEntry, type CatalogOperation, cleanDescription } from '../connectors/catalog.ts';
import { ApiError } from '../core/errors.ts';
import { catalogSettings } from '../integrations/catalog-settings.ts';
import type { McpBackend, OfferedTool, ToolCaller, ToolOutcome } from '../mcp/backend.ts';
import type { Db } from '../storage/database.ts';
import { listIntegrations, type StoredIntegration } from '../storage/integrations.ts';
import type { ExecuteAnswer, ExecuteCall } from './call.ts';

/** What the catalogue reads and runs through: the execution service's catalogue and its execute. */
export interface CatalogDeps {
  db: Db;
  integration(tenantId: string, integrationId: string): Promise<StoredIntegration>;
  catalog(stored: StoredIntegration): Promise<CatalogOperation[]>;
  execute(call: ExecuteCall): Promise<ExecuteAnswer>;
}

/** Catalogues kept (docs/limits.md#catalogue): one per integration version, read again after `catalogTtlMs`. */
export const catalogCacheEntries = 500;
/** How long a catalogue is kept: a GraphQL upstream's schema may change under the same integration version. */
export const catalogTtlMs = 60_000;
/** Integrations of one tenant read for `tools/list` at most (docs/limits.md#catalogue). */
export const maxToolIntegrations = 1000;

interface Catalogue {
  stored: StoredIntegration;
  operations: CatalogOperation[];
  entries: CatalogEntry[];
}

/**
 * The operation catalogue as the API and the MCP server show it (docs/catalog.md, docs/catalog.md): each integration's
 * entries with its `catalog` settings applied (descriptions given by the integration), kept per integration version
 * for a minute; and the MCP server's backend: the tools a tenant offers, and a tool's call run as execute runs it.
 */
export class CatalogService implements McpBackend {
  readonly #deps: CatalogDeps;
  readonly #catalogues = new LRUCache<string, Catalogue>({ max: catalogCacheEntries, ttl: catalogTtlMs });

  constructor(deps: CatalogDeps) {
    this.#deps = deps;
  }

  /** An integration's entries (`GET /integrations/{id}/operations`): `not_found`, or what reading them met. */
  async entries(tenantId: string, integrationId: string): Promise<CatalogEntry[]> {
    return (await this.#catalogue(tenantId, integrationId)).entries;
  }

  async tools(tenantId: string): Promise<OfferedTool[]> {
    const offering: StoredIntegration[] = [];
    let cursor: string | undefined;
    do {
      const page = await listIntegrations(this.#deps.db, tenantId, { limit: 100, cursor });
      offering.push(...page.items.filter((stored) => catalogSettings(stored.catalog).mcp));
      cursor = page.nextCursor ?? undefined;
    } while (cursor !== undefined && offering.length < maxToolIntegrations);
    offering.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    const tools: OfferedTool[] = [];
    for (const stored of offering.slice(0, maxToolIntegrations)) {
      // An integration whose catalogue cannot be read now (its WSDL unreachable) offers none; the others still list.
      const catalogue = await this.#catalogue(tenantId, stored.id).catch(() => undefined);
      if (catalogue === undefined) continue;
      const { allow_writes: allowWrites } = catalogSettings(catalogue.stored.catalog);
      for (const entry of catalogue.entries) {
        if (entry.kind === 'read' || allowWrites) {
          tools.push({ integrationId: stored.id, integrationVersion: catalogue.stored.version, entry });
        }
      }
    }
    return tools;
  }

  async call(caller: ToolCaller, tool: OfferedTool, input: Record<string, unknown>): Promise<ToolOutcome> {
    const { tenantId } = caller;
    let operation: CatalogOperation | undefined;
    try {
      const catalogue = await this.#catalogue(tenantId, tool.integrationId);
      operation = catalogue.operations.find((candidate) => candidate.name === tool.entry.name);
    } catch (error) {
      return failed(error);
    }
    if (operation === undefined) {
      return {
        ok: false,
        status: 404,
        error: { code: 'not_found', message: `Integration ${tool.integrationId} has no operation ${tool.entry.name} now.` },
      };
    }
    let fields: Record<string, unknown>;
    try {
      fields = operation.request(input);
    } catch (error) {
      return failed(error);
    }
    const answer = await this.#deps.execute({
      ...caller,
      integrationId: tool.integrationId,
      operation: operation.kind === 'read' ? 'receive' : 'send',
      fields,
      via: 'mcp',
    });
    return outcomeOf(answer);
  }

  async #catalogue(tenantId: string, integrationId: string): Promise<Catalogue> {
    const stored = await this.#deps.integration(tenantId, integrationId);
    const key = `${tenantId}\u0000${integrationId}\u0000${stored.version}`;
    const kept = this.#catalogues.get(key);
    if (kept) return kept;
    const operations = await this.#deps.catalog(stored);
    const { descriptions } = catalogSettings(stored.catalog);
    // The schemas are read through, not copied: a connector compiles them when first read (the SOAP connector lazily),
    // so a page of a WSDL of thousands of operations compiles that page's, not every one.
    const entries = operations.map((operation): CatalogEntry => {
      const description = Object.hasOwn(descriptions, operation.name)
        ? cleanDescription(descriptions[operation.name])
        : operation.description;
      return {
        name: operation.name,
        kind: operation.kind,
        description,
        get input_schema() {
          return operation.input_schema;
        },
        get output_schema() {
          return operation.output_schema;
        },
      };
    });
    const catalogue = { stored, operations, entries };
    this.#catalogues.set(key, catalogue);
    return catalogue;
  }
}

/** An execute answer as a tool's outcome: its `data`, or its error. */
function outcomeOf(answer: ExecuteAnswer): ToolOutcome {
  const text = typeof answer.body === 'string' ? answer.body : Buffer.concat(answer.body.chunks).toString('utf8');
  const body = JSON.parse(text) as {
    success: boolean;
    data?: Record<string, unknown>;
    error?: { code: string; message: string; details?: unknown };
  };
  if (body.success && answer.status < 400) return { ok: true, data: body.data ?? {} };
  const error = body.error ?? { code: 'internal_error', message: 'The call failed.' };
  return { ok: false, status: answer.status, error };
}

/** A refusal met before execute ran (the integration gone, a catalogue that cannot be read, a bad selection). */
function failed(error: unknown): ToolOutcome {
  if (!(error instanceof ApiError)) throw error;
  const { code, message, details, status } = error;
  return { ok: false, status, error: { code, message, ...(details !== undefined && { details }) } };
}
