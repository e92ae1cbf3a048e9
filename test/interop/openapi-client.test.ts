import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import openapiTS, { astToString } from 'openapi-typescript';
import { cliSource } from '../../src/audit/audit-log.ts';
import { createApiKey } from '../../src/auth/key-service.ts';
import { migrate, openStorage } from '../../src/storage/database.ts';
import { insertTenant } from '../../src/storage/tenants.ts';
import { type GraphqlServer, startGraphqlServer } from '../support/graphql-server.ts';
import { type PhpSoapServer, startPhpSoapServer } from '../support/php-soap-server.ts';
import { type Json, type ServerProcess, startServer, tempDatabase } from '../support/processes.ts';

/**
 * A client generated from the live OpenAPI document with openapi-typescript and openapi-fetch, both at their defaults
 * (docs/api.md#get-apiv1openapijson): it must type-check a call that sends free objects (`params`, `variables`) and
 * run it against a real server. Issue 31: without `additionalProperties: true` the generator typed them as objects
 * that take no keys, and `params: {a: 40, b: 2}` did not compile.
 */

const root = resolve(import.meta.dirname, '../..');
const tsc = join(root, 'node_modules/typescript/bin/tsc');
const run = promisify(execFile);

/** What a user of the generated types writes; `connect` is given nothing but the base URL and the credentials. */
const clientModule = `import createClient from 'openapi-fetch';
import type { paths } from './api.ts';

export function connect(baseUrl: string, key: string, tenant: string) {
  return createClient<paths>({ baseUrl, headers: { 'x-api-key': key, 'x-tenant-id': tenant } });
}

type Client = ReturnType<typeof connect>;

export async function add(client: Client, id: string) {
  const { data, error, response } = await client.POST('/api/v1/integrations/{id}/execute', {
    params: { path: { id } },
    body: { operation: 'send', method: 'Add', params: { a: 40, b: 2 } },
  });
  if (error) throw new Error(\`execute \${response.status}: \${JSON.stringify(error)}\`);
  return data.data;
}

export async function firstUsers(client: Client, id: string) {
  const { data, error, response } = await client.POST('/api/v1/integrations/{id}/execute', {
    params: { path: { id } },
    body: {
      operation: 'receive',
      query: 'query($n: Int) { users(first: $n) { nodes { id name } } }',
      variables: { n: 1 },
      records_path: 'users.nodes',
    },
  });
  if (error) throw new Error(\`execute \${response.status}: \${JSON.stringify(error)}\`);
  return data.data;
}

/** Never called: types that refused nothing would let every call above compile too. */
export function refused(client: Client) {
  return client.POST('/api/v1/integrations/{id}/execute', {
    params: { path: { id: 'calc' } },
    // @ts-expect-error \`params\` is an object, not a string.
    body: { operation: 'send', method: 'Add', params: 'a=40&b=2' },
  });
}
`;

/** The project's compiler settings that matter here, strict; only the client module is named (it imports the types). */
const tsconfig = {
  compilerOptions: {
    target: 'es2024',
    module: 'nodenext',
    moduleResolution: 'nodenext',
    allowImportingTsExtensions: true,
    verbatimModuleSyntax: true,
    noEmit: true,
    strict: true,
    skipLibCheck: true,
    types: ['node'],
  },
  files: ['client.ts'],
};

describe('a client generated from the OpenAPI document', () => {
  const database = tempDatabase();
  /** The generated types and the client module: outside the checkout, so that Node strips their types. */
  const dir = mkdtempSync(join(tmpdir(), 'ix-openapi-client-'));
  let key: string;
  let server: ServerProcess;
  let soap: PhpSoapServer;
  let graphql: GraphqlServer;

  before(async () => {
    const storage = openStorage(database.env.DATABASE_URL);
    try {
      await migrate(storage);
      const tenant = { id: 'acme', name: 'Acme', type: 'production' as const };
      await insertTenant(storage.db, tenant);
      ({ key } = await createApiKey(
        storage.db,
        { ...tenant, created_at: '' },
        { scopes: ['integrations.*'] },
        1000,
        cliSource(),
      ));
    } finally {
      await storage.close();
    }
    // One after the other: if one fails to start, `after` still stops those that did.
    server = await startServer(database.env);
    soap = await startPhpSoapServer();
    graphql = await startGraphqlServer();

    const res = await fetch(`${server.url}/api/v1/openapi.json`);
    assert.equal(res.status, 200);
    writeFileSync(join(dir, 'api.ts'), astToString(await openapiTS((await res.json()) as Json)));
    writeFileSync(join(dir, 'client.ts'), clientModule);
    writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify(tsconfig));
    writeFileSync(join(dir, 'package.json'), JSON.stringify({ type: 'module' }));
    // openapi-fetch and the compiler's types, as an application that installed them would have them.
    symlinkSync(join(root, 'node_modules'), join(dir, 'node_modules'), 'dir');
  });
  after(async () => {
    await Promise.all([server?.stop(), soap?.close(), graphql?.close()]);
    database.cleanup();
    // Removes the link, not the checkout's node_modules.
    rmSync(dir, { recursive: true, force: true });
  });

  /** The integrations are set up without the client: what is under test is the execute. */
  async function putIntegration(id: string, payload: object): Promise<void> {
    const res = await fetch(`${server.url}/api/v1/integrations/${id}`, {
      method: 'PUT',
      headers: { 'x-api-key': key, 'x-tenant-id': 'acme', 'content-type': 'application/json' },
      body: JSON.stringify(payload),
    });
    assert.equal(res.status, 201, await res.text());
  }

  test('type-checks, strict: free objects take any keys, and a wrong body is still refused', async () => {
    const compiled = await run(process.execPath, [tsc, '-p', dir], { cwd: dir }).then(
      () => '',
      (error: { stdout?: string; stderr?: string; message: string }) =>
        `${error.stdout ?? ''}${error.stderr ?? ''}` || error.message,
    );
    assert.equal(compiled, '', `tsc found errors in the generated client:\n${compiled}`);
  });

  test('runs the execute against the server: SOAP params and GraphQL variables reach the upstreams', async () => {
    await putIntegration('calc', { connector: 'soap-1.0.0', config: { endpoint_url: soap.url('/calculator?wsdl') } });
    await putIntegration('people', { connector: 'graphql-1.0.0', config: { base_url: graphql.url } });
    const client = await import(pathToFileURL(join(dir, 'client.ts')).href);
    const calls = client.connect(server.url, key, 'acme');

    assert.deepEqual(await client.add(calls, 'calc'), { AddResult: 42 });
    assert.deepEqual(await client.firstUsers(calls, 'people'), {
      message_count: 1,
      data: [{ id: '1', name: 'User 1' }],
      total_size: 1,
    });
    assert.deepEqual((graphql.requests.at(-1)?.body as Json | undefined)?.variables, { n: 1 });
  });
});
