import { randomUUID } from 'node:crypto';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import Fastify, { type FastifyInstance } from 'fastify';
import { Redis } from 'ioredis';
import secureJson from 'secure-json-parse';
import { registerAuth } from './auth/authenticate.ts';
import { KeyCache } from './auth/key-cache.ts';
import { publishKeyChange, subscribeToKeyChanges } from './auth/key-events.ts';
import { AuthFailureGuard, KeyRateLimiter, memoryStores, redisStores } from './auth/rate-limit.ts';
import { UsageRecorder } from './auth/usage-recorder.ts';
import type { Config } from './config.ts';
import { WsdlCache } from './connectors/soap/wsdl-cache.ts';
import type { AppContext } from './context.ts';
import { createEgressDispatcher } from './egress/dispatcher.ts';
import { createEgressPolicy } from './egress/policy.ts';
import { ApiError } from './errors.ts';
import { clientErrorHandler, frameworkErrors, registerErrorHandling } from './http/error-handler.ts';
import { registerMetrics } from './http/metrics.ts';
import { validatorCompiler } from './http/validation.ts';
import { registerApiKeyRoutes } from './routes/api-keys.ts';
import { registerEntityRoutes } from './routes/entities.ts';
import { registerExecuteRoute } from './routes/execute.ts';
import { registerExecutionRoutes } from './routes/executions.ts';
import { registerHealthRoutes } from './routes/health.ts';
import { registerIntegrationRoutes } from './routes/integrations.ts';
import { loadMasterKey } from './secrets/master-key.ts';
import { migrate, openStorage, type Storage } from './storage/database.ts';

export interface BuildOptions {
  /** Storage opened by the caller (tests share one); otherwise opened from config.databaseUrl and closed with the app. */
  storage?: Storage;
}

const saneRequestId = /^[A-Za-z0-9._:-]{1,128}$/;

/** Paths whose values are secrets: never logged. */
const redact = [
  'req.headers["x-api-key"]',
  'req.headers.authorization',
  '*.key',
  '*.token',
  '*.auth_value',
  '*.config.token',
  '*.config.auth_value',
];

/**
 * Builds the app without listening: storage migrated, every route registered explicitly.
 * Tests drive it through `app.inject()`; `server.ts` listens.
 */
export async function build(config: Config, options: BuildOptions = {}): Promise<FastifyInstance> {
  const storage = options.storage ?? openStorage(config.databaseUrl, { pgPoolMax: config.pgPoolMax });
  try {
    // The master key first: without it (PostgreSQL) the server refuses to start and touches nothing.
    const masterKey = loadMasterKey(config, storage);
    await migrate(storage);
    return await assemble(config, storage, masterKey, options.storage === undefined);
  } catch (error) {
    // An open pool would keep a failed start's process alive.
    if (!options.storage) await storage.close().catch(() => {});
    throw error;
  }
}

async function assemble(config: Config, storage: Storage, masterKey: Buffer, ownsStorage: boolean): Promise<FastifyInstance> {
  const app = Fastify({
    logger: { level: config.logLevel, redact: { paths: redact, censor: '[redacted]' } },
    bodyLimit: config.bodyLimit,
    trustProxy: config.trustProxy,
    requestIdHeader: false,
    genReqId: (req) => {
      const given = req.headers['x-request-id'];
      return typeof given === 'string' && saneRequestId.test(given) ? given : randomUUID();
    },
    routerOptions: { maxParamLength: 2048 },
    clientErrorHandler,
    frameworkErrors,
  });

  app.setValidatorCompiler(validatorCompiler);
  app.addHook('onRequest', async (request, reply) => {
    reply.header('x-request-id', request.id);
  });

  // JSON is the only body type; an empty body is no body, and __proto__ tricks are refused.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) => {
    if (body === '') return done(null, undefined);
    try {
      done(null, secureJson.parse(body as string, undefined, { protoAction: 'error', constructorAction: 'error' }));
    } catch {
      done(new ApiError('invalid_json'), undefined);
    }
  });

  registerErrorHandling(app);
  const metrics = registerMetrics(app);

  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: { title: 'Interchange', version: '1', description: 'Integration execution service (API.md v1).' },
      components: {
        securitySchemes: {
          ApiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key' },
          TenantId: { type: 'apiKey', in: 'header', name: 'X-Tenant-ID' },
        },
      },
    },
  });
  await app.register(swaggerUi, { routePrefix: '/docs' });

  const dispatcher = createEgressDispatcher(
    createEgressPolicy({ allowPrivate: config.egressAllowPrivate, allow: config.egressAllow, deny: config.egressDeny }),
  );
  // Without REDIS_URL each instance keeps its own counters (README: Scale out).
  const redis = config.redisUrl
    ? new Redis(config.redisUrl, { enableOfflineQueue: false, maxRetriesPerRequest: 1, connectTimeout: 2000 })
    : undefined;
  const stores = redis ? redisStores(redis, config.redisPrefix, app.log) : memoryStores;
  const ctx: AppContext = {
    config,
    storage,
    keyCache: new KeyCache(config.keyCacheMs),
    limiter: new KeyRateLimiter(stores),
    guard: new AuthFailureGuard(config.authFailureLimit, stores),
    usage: new UsageRecorder(storage.db, app.log, config.usageFlushMs),
    announceKeyChange: (hash) => {
      if (redis) void publishKeyChange(redis, config.redisPrefix, hash);
    },
    masterKey,
    connectors: {
      dispatcher,
      upstreamMaxBytes: config.upstreamMaxBytes,
      log: app.log,
      wsdlCache: new WsdlCache(config.wsdlCacheSize, config.wsdlCacheTtlSeconds * 1000),
    },
  };
  const keyChanges = redis
    ? subscribeToKeyChanges(redis, config.redisPrefix, (hash) => ctx.keyCache.forget(hash), app.log)
    : undefined;
  registerAuth(app, { db: storage.db, cache: ctx.keyCache, limiter: ctx.limiter, guard: ctx.guard, usage: ctx.usage });
  registerHealthRoutes(app, ctx, metrics);
  registerApiKeyRoutes(app, ctx);
  registerEntityRoutes(app, ctx);
  registerIntegrationRoutes(app, ctx);
  registerExecuteRoute(app, ctx);
  registerExecutionRoutes(app, ctx);

  // Usage first (it writes to storage), then storage itself if this app opened it.
  app.addHook('onClose', async () => {
    await ctx.usage.close();
    await dispatcher.close();
    keyChanges?.close();
    redis?.disconnect();
    if (ownsStorage) await storage.close();
  });
  return app;
}
