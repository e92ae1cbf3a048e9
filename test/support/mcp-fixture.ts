// A small app around the MCP route (src/routes/mcp.ts) for test/api/mcp-server.test.ts: the service's own Fastify
// instance (JSON parser, request ids, logger), error handling, request log and metrics, with an auth hook that reads
// the caller from test headers in place of keys in storage, and a fake McpBackend.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { createFastify } from '../../src/app/fastify-instance.ts';
import { loadConfig } from '../../src/config/config.ts';
import type { ConnectorRegistry } from '../../src/connectors/registry.ts';
import { ApiError } from '../../src/core/errors.ts';
import { registerErrorHandling } from '../../src/http/error-handler.ts';
import { registerMetrics } from '../../src/http/metrics.ts';
import { registerRequestLog } from '../../src/http/request-log.ts';
import type { McpBackend, OfferedTool, ToolOutcome } from '../../src/mcp/backend.ts';
import { type McpRouteOptions, registerMcpRoute } from '../../src/routes/mcp.ts';
import type { ApiKeyRecord } from '../../src/storage/api-keys.ts';

/** The one API key the test auth hook takes; the caller's scopes come in `X-Test-Scopes` (comma-separated). */
export const testKey = 'ix_test_key';

const object = (properties: Record<string, unknown>, required: string[] = []) => ({
  type: 'object',
  properties,
  required,
  additionalProperties: false,
});

function tool(integrationId: string, entry: Partial<OfferedTool['entry']> & { name: string }): OfferedTool {
  return {
    integrationId,
    integrationVersion: 3,
    entry: {
      kind: 'read',
      description: `${entry.name} of ${integrationId}.`,
      input_schema: object({}),
      output_schema: object({ ok: { type: 'boolean' } }),
      ...entry,
    },
  };
}

/** The tools of tenant `acme`: four of `crm` first (by integration id), then 446 of two bulk integrations: 450. */
export const acmeTools: OfferedTool[] = [
  tool('crm', {
    name: 'findCustomer',
    description: 'Finds a customer by id.',
    input_schema: object({ id: { type: 'string', minLength: 1 }, limit: { type: 'integer', maximum: 10 } }, ['id']),
    output_schema: object({ customer: object({ id: { type: 'string' }, name: { type: 'string' } }) }, ['customer']),
  }),
  tool('crm', {
    name: 'create customer',
    kind: 'write',
    input_schema: object({ name: { type: 'string' } }, ['name']),
    output_schema: object({ id: { type: 'string' } }, ['id']),
  }),
  tool('crm', { name: 'slowReport', input_schema: object({ ms: { type: 'integer', minimum: 0, maximum: 5000 } }) }),
  // Its output schema lets `{error}` through: SDK clients up to 1.32.2 check an error result against it too (#1943).
  tool('crm', { name: 'failing', output_schema: { type: 'object', properties: { ok: { type: 'boolean' } } } }),
  ...Array.from({ length: 446 }, (_, n) => tool(`zz-bulk-${n % 2}`, { name: `op${String(n).padStart(3, '0')}` })),
];

/** Tenant `other`'s one tool: never listed nor callable for acme. */
export const otherTools: OfferedTool[] = [tool('secret', { name: 'op' })];

/** What the fake backend was asked to run. */
export interface RecordedCall {
  tenantId: string;
  tool: string;
  input: Record<string, unknown>;
}

/** A fake backend over `acmeTools` and `otherTools`: `findCustomer` and `create customer` answer, `slowReport` waits. */
export function fakeBackend(): McpBackend & { calls: RecordedCall[] } {
  const calls: RecordedCall[] = [];
  return {
    calls,
    async tools(tenantId) {
      return tenantId === 'acme' ? acmeTools : tenantId === 'other' ? otherTools : [];
    },
    async call(caller, offered, input): Promise<ToolOutcome> {
      calls.push({ tenantId: caller.tenantId, tool: `${offered.integrationId}/${offered.entry.name}`, input });
      switch (offered.entry.name) {
        case 'findCustomer':
          return { ok: true, data: { customer: { id: String(input.id), name: 'Ada' } } };
        case 'create customer':
          return { ok: true, data: { id: 'cus_1' } };
        case 'slowReport':
          await new Promise((resolve) => setTimeout(resolve, Number(input.ms ?? 0)));
          return { ok: true, data: { ok: true } };
        case 'failing':
          return {
            ok: false,
            status: 502,
            error: {
              code: 'upstream_http_error',
              message: 'The upstream service answered with an HTTP error.',
              details: { upstream_status: 500 },
            },
          };
        default:
          return { ok: true, data: { ok: true } };
      }
    },
  };
}

export interface McpTestApp {
  app: FastifyInstance;
  /** `http://127.0.0.1:<port>/api/v1/mcp` */
  url: string;
  /** The request log's lines so far, parsed. */
  lines: Array<Record<string, unknown>>;
}

/** The route on a small app listening on 127.0.0.1, port 0. */
export async function mcpTestApp(backend: McpBackend, options: McpRouteOptions = {}): Promise<McpTestApp> {
  const lines: Array<Record<string, unknown>> = [];
  const logStream = new Writable({
    write(chunk, _encoding, done) {
      for (const line of String(chunk).split('\n')) if (line) lines.push(JSON.parse(line));
      done();
    },
  });
  const config = loadConfig({
    DATABASE_URL: `sqlite:${join(mkdtempSync(join(tmpdir(), 'ix-mcp-')), 'unused.db')}`,
    LOG_LEVEL: 'info',
  });
  // The registry only names secret fields to redact from logs; these tests log none.
  const app = await createFastify(config, { secretFields: [] } as unknown as ConnectorRegistry, logStream);
  registerErrorHandling(app);
  registerRequestLog(app);
  registerMetrics(app);
  app.decorateRequest('auth', null);
  // In place of registerAuth: the same declaration (`config.scope`), the caller from test headers.
  app.addHook('onRequest', async (request, reply) => {
    if (request.routeOptions.config.scope === undefined) return;
    const key = request.headers['x-api-key'];
    if (key === undefined) throw new ApiError('missing_credentials');
    if (key !== testKey) throw new ApiError('invalid_credentials');
    const tenantId = request.headers['x-tenant-id'];
    if (typeof tenantId !== 'string') throw new ApiError('missing_tenant');
    const scopes = String(request.headers['x-test-scopes'] ?? '')
      .split(',')
      .filter(Boolean);
    request.auth = { tenantId, key: { id: 'key_test' } as ApiKeyRecord, user: null, role: null, scopes };
    reply.header('ratelimit-limit', 600).header('ratelimit-remaining', 599);
  });
  registerMcpRoute(app, backend, options);
  await app.listen({ host: '127.0.0.1', port: 0 });
  const { port } = app.server.address() as { port: number };
  return { app, url: `http://127.0.0.1:${port}/api/v1/mcp`, lines };
}
