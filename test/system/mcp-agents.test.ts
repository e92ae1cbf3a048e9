import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CallToolResultSchema, type Progress, type Tool } from '@modelcontextprotocol/sdk/types.js';
import { cliJson } from '../support/cli.ts';
import { runInspector } from '../support/mcp-inspector.ts';
import { listAllTools } from '../support/mcp-tools.ts';
import { type PhpSoapServer, startPhpSoapServer } from '../support/php-soap-server.ts';
import { createTestDatabase, testMasterKey } from '../support/postgres.ts';
import { type Env, type Json, killAll, type ServerProcess, startServer, tempDatabase } from '../support/processes.ts';
import { type CountingGraphqlServer, startYogaServer } from '../support/yoga-server.ts';

/**
 * AI agents through the MCP server (docs/mcp.md), end to end: `interchange serve` as it ships, a SOAP integration on
 * PHP's SoapServer and a GraphQL one on graphql-yoga, listed and called by the MCP SDK's own client (both protocol
 * revisions) and by the Inspector CLI; on SQLite, and on PostgreSQL with two instances answering one client's requests
 * in turn.
 */

after(killAll);

const tenant = 'acme';
const topCustomers =
  'query topCustomers($first: Int) { customers(first: $first) { edges { node { id name tier } } totalCount } }';

let soap: PhpSoapServer;
let yoga: CountingGraphqlServer;

before(async () => {
  [soap, yoga] = await Promise.all([startPhpSoapServer(), startYogaServer()]);
});
after(async () => {
  await Promise.all([soap?.close(), yoga?.close()]);
});

interface Deployment {
  servers: ServerProcess[];
  agent: string;
  reader: string;
}

/** A tenant with an admin key (to set up), an agent's key (read and execute) and a reader's (read only), and the two integrations. */
async function deploy(env: Env, instances: number): Promise<Deployment> {
  await cliJson(['tenants', 'create', tenant], env);
  const key = async (scopes: string) =>
    (await cliJson(['keys', 'create', '--tenant', tenant, '--scopes', scopes, '--rate-limit', '10000'], env)).key as string;
  const [admin, agent, reader] = [
    await key('integrations.*,executions.read'),
    await key('integrations.read,integrations.execute'),
    await key('integrations.read'),
  ];
  const servers: ServerProcess[] = [];
  for (let i = 0; i < instances; i++) {
    servers.push(await startServer({ ...env, IX_EGRESS_ALLOW_PRIVATE: 'true', IX_MCP_PROGRESS_SECONDS: '1' }));
  }
  const put = async (id: string, body: object) => {
    const res = await fetch(`${servers[0].url}/api/v1/integrations/${id}`, {
      method: 'PUT',
      headers: { 'x-api-key': admin, 'x-tenant-id': tenant, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    assert.equal(res.status, 201, await res.text());
  };
  await put('calc', {
    connector: 'soap-1.0.0',
    config: { endpoint_url: soap.url('/calculator?wsdl') },
    catalog: { mcp: true, read_operations: ['Add', 'Slow', 'GetOrder'], descriptions: { Add: 'Adds two whole numbers.' } },
  });
  await put('shop', {
    connector: 'graphql-1.0.0',
    config: { base_url: yoga.url },
    catalog: { mcp: true, root_fields: true, documents: [{ name: 'topCustomers', document: topCustomers }] },
  });
  return { servers, agent, reader };
}

/**
 * An SDK client whose requests go to the instances in turn (no instance holds state the next request needs); with
 * `protocolVersion`, an older client: its initialize asks for that revision.
 */
async function connect(d: Deployment, key: string, protocolVersion?: string) {
  let next = 0;
  const urls = d.servers.map((server) => new URL('/api/v1/mcp', server.url));
  const transport = new StreamableHTTPClientTransport(urls[0], {
    requestInit: { headers: { 'x-api-key': key, 'x-tenant-id': tenant } },
    fetch: (_url, init) => {
      const url = urls[next++ % urls.length];
      const body = init?.body;
      if (protocolVersion && typeof body === 'string' && body.includes('"initialize"')) {
        const message = JSON.parse(body);
        message.params.protocolVersion = protocolVersion;
        return fetch(url, { ...init, body: JSON.stringify(message) });
      }
      return fetch(url, init);
    },
  });
  const client = new Client({ name: 'interchange-test-agent', version: '1.0.0' });
  await client.connect(transport);
  return client;
}

async function executions(d: Deployment, key: string, integrationId: string): Promise<Json[]> {
  const res = await fetch(`${d.servers[0].url}/api/v1/executions?integration_id=${integrationId}&limit=100`, {
    headers: { 'x-api-key': key, 'x-tenant-id': tenant },
  });
  return (await res.json()).data;
}

function scenario(name: string, setUp: () => Promise<{ env: Env; instances: number; cleanup(): Promise<void> }>) {
  describe(name, () => {
    let d: Deployment;
    let cleanup: () => Promise<void>;
    let admin: string;

    before(async () => {
      const setup = await setUp();
      cleanup = setup.cleanup;
      d = await deploy(setup.env, setup.instances);
      admin = (await cliJson(['keys', 'create', '--tenant', tenant, '--scopes', 'executions.read'], setup.env)).key;
    });
    after(async () => {
      for (const server of d?.servers ?? []) await server.stop();
      await cleanup?.();
    });

    test('the SDK client lists the tools: reads of both integrations, no write without allow_writes', async () => {
      const client = await connect(d, d.agent);
      assert.deepEqual(client.getServerVersion()?.name, 'interchange');
      const { tools } = await listAllTools(client);
      const names = tools.map((tool) => tool.name);
      for (const name of ['calc.Add', 'calc.Slow', 'calc.GetOrder', 'shop.topCustomers', 'shop.customers', 'shop.customer']) {
        assert.ok(names.includes(name), `${name} in ${names.join(', ')}`);
      }
      // Echo and Fail are writes (not in read_operations), createCustomer a Mutation field: none offered.
      for (const name of ['calc.Echo', 'calc.Fail', 'shop.createCustomer']) assert.ok(!names.includes(name), name);
      const add = tools.find((tool) => tool.name === 'calc.Add') as Tool;
      assert.equal(add.description, 'Adds two whole numbers.');
      assert.deepEqual(add.annotations, {
        readOnlyHint: true,
        destructiveHint: false,
        idempotentHint: true,
        openWorldHint: true,
      });
      assert.deepEqual(add._meta, { 'interchange/integration': 'calc', 'interchange/operation': 'Add' });
      await client.close();
    });

    test('tools/call runs each through execute: SOAP on PHP, a saved document and a root field on graphql-yoga', async () => {
      const client = await connect(d, d.agent);
      await client.listTools();
      // The client checks each structuredContent against the tool's outputSchema itself.
      const sum = await client.callTool({ name: 'calc.Add', arguments: { a: 2, b: 40 } });
      assert.equal(sum.isError, undefined);
      assert.deepEqual(sum.structuredContent, { AddResult: 42 });
      assert.deepEqual(JSON.parse((sum.content as Json)[0].text), { AddResult: 42 });
      const top = await client.callTool({ name: 'shop.topCustomers', arguments: { first: 2 } });
      assert.equal(top.isError, undefined, JSON.stringify(top));
      assert.equal((top.structuredContent as Json).data.length, 2);
      const customers = await client.callTool({ name: 'shop.customers', arguments: { first: 3 } });
      assert.equal(customers.isError, undefined, JSON.stringify(customers));
      assert.equal((customers.structuredContent as Json).message_count, 3);
      await client.close();
      const records = (await executions(d, admin, 'calc')).filter((record: Json) => record.via === 'mcp');
      assert.ok(records.some((record: Json) => record.operation === 'receive' && record.status === 'succeeded'));
    });

    test('failures are tool results with isError; a write not offered and an unknown tool are -32602', async () => {
      const client = await connect(d, d.agent);
      await client.listTools();
      const invalid = await client.callTool({ name: 'calc.Add', arguments: { a: 'two', b: 40 } });
      assert.equal(invalid.isError, true);
      assert.equal((invalid.structuredContent as Json).error.code, 'validation_failed');
      for (const name of ['calc.Echo', 'calc.Nope']) {
        await assert.rejects(client.callTool({ name, arguments: {} }), (error: Json) => error.code === -32602);
      }
      const posts = () => soap.log().filter((entry) => entry.method === 'POST').length;
      const before = posts();
      const refused = await connect(d, d.reader);
      await refused.listTools();
      const result = await refused.callTool({ name: 'calc.Add', arguments: { a: 1, b: 1 } });
      assert.equal(result.isError, true);
      assert.equal((result.structuredContent as Json).error.code, 'insufficient_scope');
      // Nothing went out for a refused call.
      assert.equal(posts(), before);
      await Promise.all([client.close(), refused.close()]);
    });

    test('a long call sends progress notifications while it runs', async () => {
      const client = await connect(d, d.agent);
      await client.listTools();
      const seen: Progress[] = [];
      const slow = await client.callTool({ name: 'calc.Slow', arguments: { seconds: 3 } }, CallToolResultSchema, {
        onprogress: (progress) => seen.push(progress),
        timeout: 60_000,
      });
      assert.deepEqual(slow.structuredContent, { SlowResult: 3 });
      assert.ok(seen.length >= 1, `progress notifications: ${seen.length}`);
      await client.close();
    });

    test('a client on protocol 2025-06-18 works the same', async () => {
      const client = await connect(d, d.agent, '2025-06-18');
      assert.equal((client.transport as StreamableHTTPClientTransport).protocolVersion, '2025-06-18');
      const sum = await client.callTool({ name: 'calc.Add', arguments: { a: 1, b: 2 } });
      assert.deepEqual(sum.structuredContent, { AddResult: 3 });
      await client.close();
    });

    test('the Inspector CLI lists and calls the tools', async () => {
      const url = `${d.servers.at(-1)?.url}/api/v1/mcp`;
      const headers = { 'X-API-Key': d.agent, 'X-Tenant-ID': tenant };
      const listed = await runInspector(url, ['--method', 'tools/list'], headers);
      assert.equal(listed.code, 0, listed.stderr);
      assert.ok(listed.result.tools.some((tool: Json) => tool.name === 'calc.Add'));
      const called = await runInspector(
        url,
        ['--method', 'tools/call', '--tool-name', 'calc.Add', '--tool-arg', 'a=5', 'b=6'],
        headers,
      );
      assert.equal(called.code, 0, called.stderr);
      assert.deepEqual(called.result.structuredContent, { AddResult: 11 });
    });
  });
}

scenario('MCP agents on SQLite, one instance', async () => {
  const db = tempDatabase();
  return { env: { ...db.env, IX_MASTER_KEY: testMasterKey() }, instances: 1, cleanup: async () => db.cleanup() };
});

scenario('MCP agents on PostgreSQL, two instances in turn', async () => {
  const database = await createTestDatabase();
  return { env: { DATABASE_URL: database.url, IX_MASTER_KEY: testMasterKey() }, instances: 2, cleanup: () => database.drop() };
});
