import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../core/errors.ts';
import type { FairTurns } from '../resilience/fair-turns.ts';
import { type ApiKeyRecord, findKeyByHash } from '../storage/api-keys.ts';
import type { Db } from '../storage/database.ts';
import type { Role, User } from '../storage/users.ts';
import type { KeyCache } from './key-cache.ts';
import { hashKey, keyShape, looksLikeApiKey } from './key-format.ts';
import { type People, userRateLimitPerMinute } from './people.ts';
import { type AuthFailureGuard, addressRefusal, type KeyRateLimiter, type LimitDecision } from './rate-limit.ts';
import { hasScope } from './scopes.ts';
import type { UsageRecorder } from './usage-recorder.ts';

/** What a route declares: the scope it needs, or `any` for any valid key or person. Routes without it are public. */
export type RouteScope = string;

declare module 'fastify' {
  interface FastifyContextConfig {
    scope?: RouteScope;
  }
  interface FastifyRequest {
    auth: AuthContext | null;
    /** Set by a route that counts its own attempts toward the IP guard (sign-in): its 401 is not counted again. */
    failureCounted: boolean;
  }
}

/** Who is calling a tenant endpoint: an API key, or a signed-in person (`user`, with the `role` given in the tenant). */
export interface AuthContext {
  tenantId: string;
  /** The calling key; null when a person calls. */
  key: ApiKeyRecord | null;
  /** The signed-in person; null when a key calls. */
  user: User | null;
  /** The person's role in the tenant; null for a key. */
  role: Role | null;
  /** What the caller may do: the key's scopes, or the role's. */
  scopes: readonly string[];
}

export interface AuthDeps {
  turns: FairTurns;
  db: Db;
  cache: KeyCache;
  limiter: KeyRateLimiter;
  guard: AuthFailureGuard;
  usage: UsageRecorder;
  people: People;
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

/**
 * Who is calling, or the 401/400 that says exactly why not: an X-API-Key, else a Bearer access token (a person).
 * Malformed keys never reach storage.
 */
async function identify(request: FastifyRequest, deps: AuthDeps): Promise<AuthContext> {
  const bearer = /^Bearer\s+(\S+)\s*$/i.exec(header(request, 'authorization') ?? '')?.[1];
  if (bearer && looksLikeApiKey(bearer)) throw new ApiError('api_key_in_bearer');
  const presented = header(request, 'x-api-key');
  if (presented === undefined && bearer === undefined) throw new ApiError('missing_credentials');
  const tenantId = header(request, 'x-tenant-id');
  if (tenantId === undefined) throw new ApiError('missing_tenant');
  if (presented === undefined) {
    const person = await deps.people.identify(bearer as string, tenantId);
    return { tenantId, key: null, user: person.user, role: person.role, scopes: person.scopes };
  }
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
  return { tenantId, key, user: null, role: null, scopes: key.scopes };
}

/**
 * The brute-force guard (docs/api.md#failed-authentications): once an address has had its failed authentications for the minute, every request
 * from it that needs credentials (a key, an access token, a password or a refresh token) is refused until the minute ends.
 */
export async function refuseBlockedAddress(guard: AuthFailureGuard, request: FastifyRequest): Promise<void> {
  const wait = await guard.blockedFor(request.ip);
  if (wait > 0) throw addressRefusal(wait);
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
 * IP guard → key or access token → tenant → rate limit → scope. Usage is counted for every response to a key.
 */
export function registerAuth(app: FastifyInstance, deps: AuthDeps): void {
  app.decorateRequest('auth', null);
  app.decorateRequest('failureCounted', false);

  app.addHook('onRequest', async (request, reply) => {
    const scope = request.routeOptions.config.scope;
    if (scope === undefined) return;

    // A tenant's burst waits its turn here, so health checks and other tenants are served in between.
    const turn = deps.turns.take(header(request, 'x-tenant-id') ?? '');
    if (turn) await turn;
    await refuseBlockedAddress(deps.guard, request);
    const auth = await identify(request, deps);
    request.auth = auth;

    // A key's counter is its lineage's (a rotated key shares it); a person's is theirs, across tenants.
    const decision = auth.key
      ? await deps.limiter.hit(auth.key.lineage_id, auth.key.rate_limit_per_minute)
      : await deps.limiter.hit((auth.user as User).id, userRateLimitPerMinute);
    setLimitHeaders(reply, decision);
    if (!decision.allowed) {
      reply.header('retry-after', decision.resetSeconds);
      const whose = auth.key ? "This key's" : 'Your';
      throw new ApiError(
        'rate_limited',
        `${whose} limit of ${decision.limit} requests per minute is used up; retry in ${decision.resetSeconds} seconds.`,
      );
    }

    if (scope !== 'any' && !hasScope(auth.scopes, scope)) {
      const role = auth.role === null ? '' : ` (your role here is ${auth.role})`;
      throw new ApiError('insufficient_scope', `This endpoint needs the ${scope} scope${role}.`, {
        required_scope: scope,
        granted_scopes: auth.scopes,
      });
    }
  });

  // A failed authentication is counted before its 401 leaves: the caller's next attempt, on any instance, then
  // already sees it (counted after sending, the 31st attempt could race the 30th's count and get a 401).
  app.addHook('onSend', (request, reply, payload, done) => {
    if (request.auth || request.failureCounted || reply.statusCode !== 401) return done(null, payload);
    deps.guard.fail(request.ip).then(() => done(null, payload), done);
  });
  app.addHook('onResponse', (request, reply, done) => {
    // Usage data is per key: a person's requests are not counted there.
    if (request.auth?.key) deps.usage.record(request.auth.key.id, request.ip, reply.statusCode);
    done();
  });
}
