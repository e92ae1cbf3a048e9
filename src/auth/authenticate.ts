import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../errors.ts';
import { type ApiKeyRecord, findKeyByHash } from '../storage/api-keys.ts';
import type { Db } from '../storage/database.ts';
import type { KeyCache } from './key-cache.ts';
import { hashKey, keyShape, looksLikeApiKey } from './key-format.ts';
import type { AuthFailureGuard, KeyRateLimiter, LimitDecision } from './rate-limit.ts';
import { hasScope } from './scopes.ts';
import type { UsageRecorder } from './usage-recorder.ts';

/** What a route declares: the scope it needs, or `any` for any valid key. Routes without it are public. */
export type RouteScope = string;

declare module 'fastify' {
  interface FastifyContextConfig {
    scope?: RouteScope;
  }
  interface FastifyRequest {
    auth: AuthContext | null;
  }
}

export interface AuthContext {
  key: ApiKeyRecord;
  tenantId: string;
}

export interface AuthDeps {
  db: Db;
  cache: KeyCache;
  limiter: KeyRateLimiter;
  guard: AuthFailureGuard;
  usage: UsageRecorder;
}

/** The authenticated caller of a route that declares a scope. */
export function caller(request: FastifyRequest): AuthContext {
  if (!request.auth) throw new Error(`${request.routeOptions.url} declares no scope`);
  return request.auth;
}

function header(request: FastifyRequest, name: string): string | undefined {
  const value = request.headers[name];
  return typeof value === 'string' && value !== '' ? value : undefined;
}

async function lookUp(deps: AuthDeps, hash: string): Promise<ApiKeyRecord | undefined> {
  const cached = deps.cache.get(hash);
  if (cached) return cached.key;
  const readAt = deps.cache.generation();
  const key = await findKeyByHash(deps.db, hash);
  deps.cache.set(hash, key, readAt);
  return key;
}

/** Who is calling, or the 401/400 that says exactly why not. Malformed keys never reach storage. */
async function identify(request: FastifyRequest, deps: AuthDeps): Promise<AuthContext> {
  const bearer = /^Bearer\s+(\S+)\s*$/i.exec(header(request, 'authorization') ?? '')?.[1];
  if (bearer && looksLikeApiKey(bearer)) throw new ApiError('api_key_in_bearer');
  const presented = header(request, 'x-api-key');
  if (presented === undefined) throw new ApiError('missing_credentials');
  const tenantId = header(request, 'x-tenant-id');
  if (tenantId === undefined) throw new ApiError('missing_tenant');
  if (keyShape(presented) === 'malformed') throw new ApiError('invalid_credentials');

  const key = await lookUp(deps, hashKey(presented));
  // Another tenant's key, an unknown tenant and a revoked key all look like an unknown key.
  if (!key || key.tenant_id !== tenantId || key.revoked_at !== null) throw new ApiError('invalid_credentials');
  if (key.expires_at !== null && Date.parse(key.expires_at) <= Date.now()) {
    throw new ApiError(
      'expired_credentials',
      key.rotated_to
        ? `The API key was rotated and its overlap ended at ${key.expires_at}; use its successor.`
        : `The API key expired at ${key.expires_at}.`,
    );
  }
  return { key, tenantId };
}

function setLimitHeaders(reply: FastifyReply, d: LimitDecision): void {
  reply.header('ratelimit-limit', d.limit);
  reply.header('ratelimit-remaining', d.remaining);
  reply.header('ratelimit-reset', d.resetSeconds);
  reply.header('ratelimit-policy', `"default";q=${d.limit};w=60`);
  reply.header('ratelimit', `"default";r=${d.remaining};t=${d.resetSeconds}`);
}

/**
 * Auth as a declaration on the route (`config.scope`), checked before the body is read:
 * IP guard → key → tenant → rate limit → scope. Usage is counted for every authenticated response.
 */
export function registerAuth(app: FastifyInstance, deps: AuthDeps): void {
  app.decorateRequest('auth', null);

  app.addHook('onRequest', async (request, reply) => {
    const scope = request.routeOptions.config.scope;
    if (scope === undefined) return;

    const wait = await deps.guard.blockedFor(request.ip);
    if (wait > 0) {
      request.refusal = 'auth_failures';
      reply.header('retry-after', wait);
      throw new ApiError('rate_limited', `Too many failed authentications from this address; retry in ${wait} seconds.`);
    }

    const auth = await identify(request, deps);
    request.auth = auth;

    const decision = await deps.limiter.hit(auth.key.lineage_id, auth.key.rate_limit_per_minute);
    setLimitHeaders(reply, decision);
    if (!decision.allowed) {
      reply.header('retry-after', decision.resetSeconds);
      throw new ApiError(
        'rate_limited',
        `This key's limit of ${decision.limit} requests per minute is used up; retry in ${decision.resetSeconds} seconds.`,
      );
    }

    if (scope !== 'any' && !hasScope(auth.key.scopes, scope)) {
      throw new ApiError('insufficient_scope', `This endpoint needs the ${scope} scope.`, {
        required_scope: scope,
        granted_scopes: auth.key.scopes,
      });
    }
  });

  // A failed authentication is counted before its 401 leaves: the caller's next attempt, on any instance, then
  // already sees it (counted after sending, the 31st attempt could race the 30th's count and get a 401).
  app.addHook('onSend', (request, reply, payload, done) => {
    if (request.auth || reply.statusCode !== 401) return done(null, payload);
    deps.guard.fail(request.ip).then(() => done(null, payload), done);
  });
  app.addHook('onResponse', (request, reply, done) => {
    if (request.auth) deps.usage.record(request.auth.key.id, request.ip, reply.statusCode);
    done();
  });
}
