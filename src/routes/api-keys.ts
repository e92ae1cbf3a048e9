import type { FastifyInstance, FastifyRequest } from 'fastify';
import { requestSource } from '../audit/audit-log.ts';
import { type AuthContext, caller } from '../auth/authenticate.ts';
import { toKeyObject } from '../auth/key-object.ts';
import {
  assertMayRotate,
  boundByGranter,
  checkNewKeyInput,
  createApiKey,
  type Granter,
  maxOverlapSeconds,
  maxRateLimitPerMinute,
  revokeApiKey,
  rotateApiKey,
} from '../auth/key-service.ts';
import type { AppContext } from '../context.ts';
import { ApiError } from '../core/errors.ts';
import { ok, okList } from '../http/envelope.ts';
import { type ApiKeyRecord, findKey, listKeys } from '../storage/api-keys.ts';
import { findTenant, type Tenant } from '../storage/tenants.ts';
import { usageSince } from '../storage/usage.ts';
import { bodyFailures, failures, idParams, pageQuery, reply, security, tenantFailures } from './schemas.ts';

const tags = ['API keys'];
const keyParams = idParams('key_id');

const createBody = {
  type: 'object',
  required: ['scopes'],
  additionalProperties: false,
  properties: {
    name: { type: 'string', maxLength: 200 },
    scopes: { type: 'array', minItems: 1, maxItems: 50, items: { type: 'string', maxLength: 64 } },
    expires_at: { type: ['string', 'null'], format: 'date-time' },
    rate_limit_per_minute: { type: 'integer', minimum: 1, maximum: maxRateLimitPerMinute },
  },
  examples: [{ name: 'crm sync', scopes: ['integrations.execute', 'executions.read'], rate_limit_per_minute: 120 }],
} as const;

const escalation = {
  403: 'The key lacks the scope (`insufficient_scope`), or the new key would have more than it (`scope_escalation`, `details.field`).',
} as const;
const noSuchKey = { 404: 'No such key in this tenant.' } as const;

interface CreateBody {
  name?: string;
  scopes: string[];
  expires_at?: string | null;
  rate_limit_per_minute?: number;
}

async function tenantOf(ctx: AppContext, auth: AuthContext): Promise<Tenant> {
  const tenant = await findTenant(ctx.storage.db, auth.tenantId);
  if (!tenant) throw new ApiError('invalid_credentials');
  return tenant;
}

/**
 * What the caller may hand on. A key: itself as stored now (the authenticated record may come from the key cache, and
 * a rotation elsewhere may have shortened its expiry to the end of its overlap since). A person: the scopes of their
 * role only, with no expiry or rate limit of their own to bound the key by (docs/api.md#post-apiv1api-keys).
 */
async function granter(ctx: AppContext, auth: AuthContext): Promise<Granter> {
  if (!auth.key) {
    return { id: auth.user?.id ?? '', scopes: [...auth.scopes], expires_at: null, rate_limit_per_minute: maxRateLimitPerMinute };
  }
  return (await findKey(ctx.storage.db, auth.key.id)) ?? auth.key;
}

async function keyInTenant(ctx: AppContext, request: FastifyRequest<{ Params: { key_id: string } }>): Promise<ApiKeyRecord> {
  const key = await findKey(ctx.storage.db, request.params.key_id, caller(request).tenantId);
  if (!key) throw new ApiError('not_found', `No API key ${request.params.key_id}.`);
  return key;
}

/** ISO date `days - 1` days before today (UTC), so that `days` whole days are covered. */
function firstDay(days: number): string {
  return new Date(Date.now() - (days - 1) * 86_400_000).toISOString().slice(0, 10);
}

export function registerApiKeyRoutes(app: FastifyInstance, ctx: AppContext): void {
  const view = (key: ApiKeyRecord) => toKeyObject(key, ctx.usage.pending(key.id));

  app.post<{ Body: CreateBody }>(
    '/api/v1/api-keys',
    {
      config: { scope: 'api_keys.write' },
      schema: {
        tags,
        security,
        operationId: 'createApiKey',
        summary: 'Create a key; the secret is returned only here.',
        body: createBody,
        response: {
          201: reply('NewApiKeyReply', 'The key, with its secret (shown this once).'),
          ...failures([...tenantFailures, ...bodyFailures], escalation),
        },
      },
    },
    async (request, reply) => {
      const auth = caller(request);
      // Bad input first: a scope that does not exist is validation_failed, not an escalation.
      checkNewKeyInput(request.body);
      const input = boundByGranter(await granter(ctx, auth), request.body, ctx.config.defaultRateLimit);
      const tenant = await tenantOf(ctx, auth);
      const { record, key } = await createApiKey(
        ctx.storage.db,
        tenant,
        { ...input, created_by: auth.user?.id ?? null },
        ctx.config.defaultRateLimit,
        requestSource(request),
      );
      return reply.code(201).send(ok({ ...view(record), key }));
    },
  );

  app.get<{ Querystring: { limit: number; cursor?: string } }>(
    '/api/v1/api-keys',
    {
      config: { scope: 'api_keys.read' },
      schema: {
        tags,
        security,
        operationId: 'listApiKeys',
        summary: "List this tenant's keys.",
        querystring: { type: 'object', additionalProperties: false, properties: pageQuery },
        response: { 200: reply('ApiKeyListReply', 'A page of keys.'), ...failures(tenantFailures) },
      },
    },
    async (request) => {
      const page = await listKeys(ctx.storage.db, caller(request).tenantId, request.query);
      return okList(page.items.map(view), page.nextCursor);
    },
  );

  app.get<{ Params: { key_id: string } }>(
    '/api/v1/api-keys/:key_id',
    {
      config: { scope: 'api_keys.read' },
      schema: {
        tags,
        security,
        operationId: 'getApiKey',
        summary: 'One key.',
        params: keyParams,
        response: { 200: reply('ApiKeyReply', 'The key.'), ...failures([...tenantFailures, 404], noSuchKey) },
      },
    },
    async (request) => ok(view(await keyInTenant(ctx, request))),
  );

  app.get<{ Params: { key_id: string }; Querystring: { days: number } }>(
    '/api/v1/api-keys/:key_id/usage',
    {
      config: { scope: 'api_keys.read' },
      schema: {
        tags,
        security,
        operationId: 'getApiKeyUsage',
        summary: 'Requests and errors per UTC day, oldest first, every day of the window listed.',
        params: keyParams,
        querystring: {
          type: 'object',
          additionalProperties: false,
          properties: { days: { type: 'integer', minimum: 1, maximum: 366, default: 30 } },
        },
        response: { 200: reply('ApiKeyUsageReply', 'One entry per day.'), ...failures([...tenantFailures, 404], noSuchKey) },
      },
    },
    async (request) => {
      const key = await keyInTenant(ctx, request);
      const from = firstDay(request.query.days);
      const stored = new Map((await usageSince(ctx.storage.db, key.id, from)).map((d) => [d.date, d]));
      const pending = ctx.usage.pending(key.id)?.days;
      const days = [];
      for (let i = request.query.days - 1; i >= 0; i--) {
        const date = new Date(Date.now() - i * 86_400_000).toISOString().slice(0, 10);
        const extra = pending?.get(date);
        days.push({
          date,
          requests: (stored.get(date)?.requests ?? 0) + (extra?.requests ?? 0),
          errors: (stored.get(date)?.errors ?? 0) + (extra?.errors ?? 0),
        });
      }
      return ok(days);
    },
  );

  app.post<{ Params: { key_id: string }; Body: { overlap_seconds?: number } | undefined }>(
    '/api/v1/api-keys/:key_id/rotate',
    {
      config: { scope: 'api_keys.write' },
      schema: {
        tags,
        security,
        operationId: 'rotateApiKey',
        summary: 'Issue a successor; the old key works for overlap_seconds more.',
        params: keyParams,
        body: {
          type: ['object', 'null'],
          additionalProperties: false,
          properties: { overlap_seconds: { type: 'integer', minimum: 0, maximum: maxOverlapSeconds, default: 3600 } },
          examples: [{ overlap_seconds: 600 }],
        },
        response: {
          201: reply('NewApiKeyReply', 'The successor, with its secret (shown this once).'),
          ...failures([...tenantFailures, ...bodyFailures, 404, 409], {
            ...escalation,
            ...noSuchKey,
            409: '`conflict`: the key is revoked, expired or rotated already.',
          }),
        },
      },
    },
    async (request, reply) => {
      const auth = caller(request);
      const old = await keyInTenant(ctx, request);
      // The caller receives the successor's secret, so it must hold everything the successor gets.
      assertMayRotate(await granter(ctx, auth), old);
      const tenant = await tenantOf(ctx, auth);
      const { record, key } = await rotateApiKey(
        ctx.storage.db,
        old,
        tenant,
        request.body?.overlap_seconds ?? 3600,
        requestSource(request),
      );
      ctx.keyCache.forget(old.hash);
      ctx.announceKeyChange(old.hash);
      return reply.code(201).send(ok({ ...view(record), key }));
    },
  );

  app.delete<{ Params: { key_id: string } }>(
    '/api/v1/api-keys/:key_id',
    {
      config: { scope: 'api_keys.write' },
      schema: {
        tags,
        security,
        operationId: 'revokeApiKey',
        summary: 'Revoke a key at once.',
        params: keyParams,
        response: {
          200: reply('ApiKeyReply', 'The key, with revoked_at set.'),
          ...failures([...tenantFailures, 404], noSuchKey),
        },
      },
    },
    async (request) => {
      const revoked = await revokeApiKey(ctx.storage.db, request.params.key_id, requestSource(request), caller(request).tenantId);
      ctx.keyCache.forget(revoked.hash);
      ctx.announceKeyChange(revoked.hash);
      return ok(view(revoked));
    },
  );

  app.get(
    '/api/v1/me',
    {
      config: { scope: 'any' },
      schema: {
        tags: ['Me'],
        security,
        operationId: 'getMe',
        summary: 'The caller and its tenant: the calling key, or the signed-in person and their role.',
        response: {
          200: reply('MeReply', '`{key, tenant}` for a key; `{user, tenant, role}` for a person.'),
          ...failures([400, 401, 429, 500, 503]),
        },
      },
    },
    async (request) => {
      const auth = caller(request);
      const tenant = await tenantOf(ctx, auth);
      const shownTenant = { id: tenant.id, name: tenant.name, type: tenant.type };
      if (!auth.key) return ok({ user: auth.user, tenant: shownTenant, role: auth.role });
      // The authenticated record may come from the key cache, older than the last usage flush.
      const key = (await findKey(ctx.storage.db, auth.key.id)) ?? auth.key;
      return ok({ key: view(key), tenant: shownTenant });
    },
  );
}
