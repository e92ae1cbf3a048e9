import assert from 'node:assert/strict';
import type { InjectOptions } from 'fastify';
import { cliSource } from '../../src/audit/audit-log.ts';
import { importLegacyKey, revokeApiKey, rotateApiKey } from '../../src/auth/key-service.ts';
import { findTenant, type Tenant } from '../../src/storage/tenants.ts';
import type { UrlPool } from './fuzz-bodies.ts';
import { jsonText } from './fuzz-json.ts';
import type { FuzzRequest } from './fuzz-requests.ts';
import { type Harness, harness } from './harness.ts';
import { closedPort, httpUpstream, type RawUpstream } from './raw-upstream.ts';
import { StateWatch } from './state-watch.ts';

/**
 * The world the property tests run in: tenant `acme` (keys of every kind, entities, integrations on a local upstream
 * that answers well or badly by path, or on a closed port) and sandbox tenant `other` with ids that clash with acme's.
 */
export interface PropertyFixture {
  h: Harness;
  watch: StateWatch;
  /** Secrets of acme's keys (`star`: scope `*`; `narrow`; `legacy`; `revoked`; `expired`) and of other's (`sandbox`). */
  secrets: Record<'star' | 'narrow' | 'legacy' | 'revoked' | 'expired' | 'sandbox', string>;
  ids: {
    /** Keys the generated requests must not revoke or rotate (the calling keys). */
    keys: string[];
    /** Keys they may revoke or rotate; grows with the keys they create. */
    victims: string[];
    entities: string[];
    executions: string[];
    /** Integrations the execute property aims at; writes never touch them. */
    fixedIntegrations: string[];
    /** Integrations the generated PUT, PATCH and DELETE requests aim at. */
    writableIntegrations: string[];
  };
  urls: UrlPool;
  /** The inject options of a generated request, its auth variant resolved to headers. */
  injectOptions(request: FuzzRequest): InjectOptions;
  close(): Promise<void>;
}

/** An upstream on 127.0.0.1 whose answer depends on the path: good data, GraphQL errors (one with a NUL), junk, faults. */
function upstreamAnswer(path: string, body: string): { status: number; type: string; text: string } {
  const json = (text: string, status = 200) => ({ status, type: 'application/json', text });
  const xml = (text: string, status = 200) => ({ status, type: 'text/xml; charset=utf-8', text });
  const envelope = (inner: string) =>
    `<?xml version="1.0"?><soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/"><soap:Body>${inner}</soap:Body></soap:Envelope>`;
  const fault = (text: string) => `<soap:Fault><faultcode>soap:Server</faultcode><faultstring>${text}</faultstring></soap:Fault>`;
  if (path.startsWith('/errors-nul')) return json('{"errors":[{"message":"bad\\u0000thing"}],"data":null}');
  if (path.startsWith('/errors')) return json('{"errors":[{"message":"boom","path":["a"]}],"data":null}');
  if (path.startsWith('/partial-nul')) return json('{"errors":[{"message":"m\\u0000"}],"data":{"a":"x\\u0000"}}');
  if (path.startsWith('/garbage')) return json('not json <');
  if (path.startsWith('/http500')) return json('oops\u0000', 500);
  if (path.startsWith('/soap-fault-nul')) return xml(envelope(fault('bad\u0000fault')), 500);
  if (path.startsWith('/soap')) return xml(envelope('<EchoResponse><a>1</a></EchoResponse>'));
  if (/wsdl/i.test(path)) return xml('<definitions xmlns="http://schemas.xmlsoap.org/wsdl/"/>');
  if (body.includes('__schema')) return json('{"data":{"__schema":{"queryType":{"name":"Query"}}}}');
  return json(
    '{"data":{"items":{"edges":[{"node":{"id":"1"}}],"pageInfo":{"hasNextPage":false,"endCursor":null},"totalCount":1}}}',
  );
}

export async function propertyFixture(): Promise<PropertyFixture> {
  const upstream: RawUpstream = await httpUpstream((req, res, body) => {
    const answer = upstreamAnswer(req.url ?? '/', body);
    res.writeHead(answer.status, { 'content-type': answer.type });
    res.end(answer.text);
  });
  const closed = await closedPort();
  const up = upstream.url;
  const urls: UrlPool = {
    usual: [
      `${up}/ok`,
      `${up}/errors`,
      `${up}/errors-nul`,
      `${up}/partial-nul`,
      `${up}/garbage`,
      `${up}/soap`,
      `${up}/soap-fault-nul`,
      `${up}/service?wsdl`,
      `${up}/x.wsdl`,
      `${up}/ok?x=1#frag`,
    ],
    rare: [
      `https://127.0.0.1:${upstream.port}/`,
      `http://127.0.0.1:${closed}/`,
      `http://[::1]:${closed}/`,
      `http://localhost:${closed}/`,
      `http://0.0.0.0:${closed}/`,
      'http://169.254.169.254/latest/meta-data',
      'http://[fe80::1]/',
      'http://[::ffff:169.254.169.254]/',
      'https://user:pass@127.0.0.1/',
      'ftp://127.0.0.1/',
      'file:///etc/passwd',
      'javascript:alert(1)',
      'http://127.0.0.1:99999/',
      'http://',
      'not a url',
    ],
  };

  // Rate limits out of the way: a 429 is a contract answer, but it would hide the routes behind it.
  const h = await harness({ IX_AUTH_FAILURE_LIMIT: '1000000', IX_EXECUTE_DEADLINE_SECONDS: '10' });
  const db = h.storage.db;
  await h.tenant('acme');
  await h.tenant('other', 'sandbox');
  const acme = (await findTenant(db, 'acme')) as Tenant;
  const unlimited = { rate_limit_per_minute: 1_000_000 };
  const star = await h.key('acme', ['*'], unlimited);
  const narrow = await h.key('acme', ['entities.read', 'executions.read'], unlimited);
  const sandbox = await h.key('other', ['*'], unlimited);
  const revoked = await h.key('acme', ['*'], unlimited);
  await revokeApiKey(db, revoked.record.id, cliSource());
  const expired = await h.key('acme', ['*'], unlimited);
  await rotateApiKey(db, expired.record, acme, 0, cliSource());
  const legacy = await importLegacyKey(db, acme, `ix_prod_${'L'.repeat(24)}`, { scopes: ['*'], ...unlimited }, 600, cliSource());
  const secrets = {
    star: star.key,
    narrow: narrow.key,
    sandbox: sandbox.key,
    revoked: revoked.key,
    expired: expired.key,
    legacy: legacy.key,
  };
  const victims: string[] = [];
  for (let i = 0; i < 4; i++) victims.push((await h.key('acme', ['entities.read'], unlimited)).record.id);
  victims.push(sandbox.record.id, 'key_nope');

  const call = async (tenant: string, key: string, options: InjectOptions) => {
    const res = await h.call({ key, tenant }, { ...options, headers: { 'content-type': 'application/json' } });
    assert.ok(res.statusCode < 300, `seeding ${options.url}: ${res.statusCode} ${res.body}`);
    return JSON.parse(res.body);
  };
  const put = (tenant: string, key: string, id: string, body: object) =>
    call(tenant, key, { method: 'PUT', url: `/api/v1/integrations/${encodeURIComponent(id)}`, payload: body });
  const gql = (base_url?: string) => ({ connector: 'graphql-1.0.0', config: base_url ? { base_url, token: 'tok-1' } : {} });
  const soap = (endpoint_url: string) => ({
    connector: 'soap-1.0.0',
    config: { endpoint_url, namespace: 'urn:x', auth_value: 'sv-1' },
  });
  const withQuickRetries = (integration: { connector: string; config: object }) => ({
    ...integration,
    config: { ...integration.config, retry: { base_delay_ms: 1, max_delay_ms: 2 } },
  });
  const fixed: Record<string, object> = {
    'gql-ok': gql(`${up}/ok`),
    'gql-errors': gql(`${up}/errors`),
    'gql-errors-nul': gql(`${up}/errors-nul`),
    'gql-partial-nul': gql(`${up}/partial-nul`),
    'gql-garbage': gql(`${up}/garbage`),
    'gql-http500': gql(`${up}/http500`),
    // Retried at the smallest waits (docs/resilience.md): thousands of generated calls, each tried three times.
    'gql-closed': withQuickRetries(gql(`http://127.0.0.1:${closed}/`)),
    'gql-nourl': gql(),
    'soap-ok': soap(`${up}/soap`),
    'soap-fault-nul': soap(`${up}/soap-fault-nul`),
    'soap-wsdl': soap(`${up}/service?wsdl`),
    'soap-closed': withQuickRetries(soap(`http://127.0.0.1:${closed}/`)),
  };
  for (const [id, body] of Object.entries(fixed)) await put('acme', star.key, id, body);
  await put('other', sandbox.key, 'gql-ok', gql(`${up}/ok`));
  await put('other', sandbox.key, 'other-only', gql(`${up}/ok`));
  const entity = (tenant: string, key: string, entity_id: string) =>
    call(tenant, key, { method: 'POST', url: '/api/v1/entities', payload: { entity_id, name: entity_id } });
  for (const id of ['e1', 'e2', 'e3', 'a/b']) await entity('acme', star.key, id);
  for (const id of ['e1', 'other-only']) await entity('other', sandbox.key, id);
  const executions: string[] = ['exe_0000000000000000000000'];
  for (const [tenant, key] of [
    ['acme', star.key],
    ['other', sandbox.key],
  ]) {
    await call(tenant, key, { method: 'POST', url: '/api/v1/integrations/gql-ok/execute', payload: { operation: 'test' } });
    const listed = await call(tenant, key, { method: 'GET', url: '/api/v1/executions' });
    executions.push(...listed.data.map((e: { id: string }) => e.id));
  }
  const watch = await StateWatch.install(h.storage);

  function authHeaders(request: FuzzRequest): Record<string, string> {
    const as = (key: string | undefined, tenant: string | undefined) => ({
      ...(key !== undefined && { 'x-api-key': key }),
      ...(tenant !== undefined && { 'x-tenant-id': tenant }),
    });
    switch (request.auth) {
      case 'star':
      case 'narrow':
      case 'legacy':
      case 'revoked':
      case 'expired':
        return as(secrets[request.auth], 'acme');
      case 'sandbox':
        return as(secrets.sandbox, 'other');
      case 'other-tenants-key':
        return as(secrets.sandbox, 'acme');
      case 'key-with-other-tenant':
        return as(secrets.star, 'other');
      case 'odd-tenant':
        return as(secrets.star, request.authJunk);
      case 'no-key':
        return as(undefined, 'acme');
      case 'no-tenant':
        return as(secrets.star, undefined);
      case 'bad-checksum':
        return as(`${secrets.star.slice(0, -1)}${secrets.star.endsWith('A') ? 'B' : 'A'}`, 'acme');
      case 'malformed-key':
        return as(request.authJunk, 'acme');
      case 'key-in-bearer':
        return { authorization: `Bearer ${secrets.star}`, 'x-tenant-id': 'acme' };
      case 'junk-bearer':
        return { authorization: `Bearer ${request.authJunk}`, ...as(secrets.star, 'acme') };
    }
  }

  return {
    h,
    watch,
    secrets,
    ids: {
      keys: [star.record.id, narrow.record.id, revoked.record.id],
      victims,
      entities: ['e1', 'e2', 'e3', 'a/b', 'other-only'],
      executions,
      fixedIntegrations: Object.keys(fixed),
      writableIntegrations: ['w1', 'w2', 'w/3', 'wé😀', 'other-only'],
    },
    urls,
    injectOptions(request) {
      const headers: Record<string, string> = { ...request.headers, ...authHeaders(request) };
      const body = request.body;
      let payload: string | Buffer | undefined;
      if (body.kind !== 'none') {
        payload = body.kind === 'json' ? jsonText(body.value) : body.kind === 'raw' ? body.text : Buffer.from(body.hex, 'hex');
        if (body.contentType !== null) headers['content-type'] = body.contentType;
      }
      return {
        method: request.method as InjectOptions['method'],
        url: request.query === '' ? request.path : `${request.path}?${request.query}`,
        headers,
        ...(payload !== undefined && { payload }),
      };
    },
    async close() {
      await h.close();
      await upstream.close();
    },
  };
}
