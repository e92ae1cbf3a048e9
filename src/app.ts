import type { FastifyInstance } from 'fastify';
import { registerApiDocument } from './app/api-document.ts';
import type { BuildOptions } from './app/build-options.ts';
import { createFastify } from './app/fastify-instance.ts';
import { startResultSweep, workQueue } from './app/queue-wiring.ts';
import { buildSharedParts } from './app/shared-parts.ts';
import { startAuditRetention } from './audit/retention.ts';
import { registerAuth } from './auth/authenticate.ts';
import { KeyCache } from './auth/key-cache.ts';
import { publishKeyChange, subscribeToKeyChanges } from './auth/key-events.ts';
import { PasswordCheckQueue } from './auth/password-queue.ts';
import { People } from './auth/people.ts';
import { KeyRateLimiter } from './auth/rate-limit.ts';
import { UsageRecorder } from './auth/usage-recorder.ts';
import type { Config } from './config/config.ts';
import { builtInConnectors, ConnectorRegistry } from './connectors/registry.ts';
import { registerConsole } from './console/plugin.ts';
import type { AppContext } from './context.ts';
import { OAuth2Sources } from './credentials/oauth2-sources.ts';
import { CatalogService } from './execution/catalog-service.ts';
import { ExecutionService } from './execution/service.ts';
import { registerErrorHandling } from './http/error-handler.ts';
import { registerIdempotency } from './http/idempotency.ts';
import { registerMetrics } from './http/metrics.ts';
import { registerRequestLog } from './http/request-log.ts';
import { IntegrationCache } from './integrations/cache.ts';
import { MemoryBreakers } from './resilience/breaker.ts';
import { RedisBreakers } from './resilience/breaker-redis.ts';
import { FairTurns } from './resilience/fair-turns.ts';
import { IntegrationConcurrency } from './resilience/integration-concurrency.ts';
import { registerResilienceMetrics } from './resilience/metrics.ts';
import { registerApiKeyRoutes } from './routes/api-keys.ts';
import { registerAuditRoutes } from './routes/audit-events.ts';
import { registerAuthRoutes } from './routes/auth.ts';
import { registerEntityRoutes } from './routes/entities.ts';
import { registerExecuteRoute } from './routes/execute.ts';
import { registerExecutionRoutes } from './routes/executions.ts';
import { registerHealthRoutes } from './routes/health.ts';
import { registerIntegrationOperationsRoute } from './routes/integration-operations.ts';
import { registerIntegrationSchemaRoute } from './routes/integration-schema.ts';
import { registerIntegrationRoutes } from './routes/integrations.ts';
import { registerMcpRoute } from './routes/mcp.ts';
import { registerMemberRoutes } from './routes/members.ts';
import { registerRootRoute } from './routes/root.ts';
import { registerWebhookDeliveryRoutes } from './routes/webhook-deliveries.ts';
import { registerWebhookRoutes } from './routes/webhooks.ts';
import { loadMasterKey, type MasterKeySource } from './secrets/master-key.ts';
import { StorageHealth } from './storage/availability.ts';
import { migrate, openStorage, type Storage } from './storage/database.ts';
import { ExecutionLog } from './storage/execution-log.ts';
import { HeldAnswers } from './storage/held-answers.ts';
import { registerTracing } from './telemetry/http.ts';
import { AnswerWorkers } from './transport/answer-workers.ts';

// Tests build apps with these options, from where they were first.
export type { BuildOptions } from './app/build-options.ts';

declare module 'fastify' {
  interface FastifyInstance {
    /** The executions log written behind: `flush()` writes what is pending (tests read storage after it). */
    executionLog: ExecutionLog;
  }
}

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
    const registry = new ConnectorRegistry(options.connectors ?? builtInConnectors(config));
    const app = await assemble(config, storage, masterKey.key, registry, options);
    // For the start-up summary (server.ts): whether the key came from IX_MASTER_KEY or master.key, read or created.
    app.decorate<MasterKeySource>('masterKeySource', masterKey.source);
    return app;
  } catch (error) {
    // An open pool would keep a failed start's process alive.
    if (!options.storage) await storage.close().catch(() => {});
    throw error;
  }
}

async function assemble(
  config: Config,
  storage: Storage,
  masterKey: Buffer,
  registry: ConnectorRegistry,
  options: BuildOptions,
): Promise<FastifyInstance> {
  const ownsStorage = options.storage === undefined;
  const app = await createFastify(config, registry, options.logStream);

  // Whether storage takes writes now; what it refuses meanwhile is held and written when it answers again.
  const health = new StorageHealth({ db: storage.db, log: app.log });
  registerErrorHandling(app, { storageFailed: (error) => health.failed(error) });
  // Traces when OTEL_EXPORTER_OTLP_ENDPOINT is set (nothing is loaded otherwise); before the routes, so their requests get spans.
  await registerTracing(app);
  registerRequestLog(app);
  const metrics = registerMetrics(app);
  await registerApiDocument(app, registry);

  const {
    dispatcher,
    dispatchers,
    redis,
    stores,
    queue,
    guard,
    webhookPolicy,
    webhookDispatcher,
    queueMetrics,
    deliverer,
    webhooks,
  } = await buildSharedParts(app, { config, storage, masterKey, options, health, metrics: metrics.registry });
  const ctx: AppContext = {
    config,
    storage,
    keyCache: new KeyCache(config.keyCacheMs),
    limiter: new KeyRateLimiter(stores),
    guard,
    usage: new UsageRecorder(storage.db, app.log, config.usageFlushMs),
    announceKeyChange: (hash) => {
      if (redis) void publishKeyChange(redis, config.redisPrefix, hash);
    },
    masterKey,
    connectors: {
      dispatcher,
      upstreamMaxBytes: config.upstreamMaxBytes,
      log: app.log,
      workers: new AnswerWorkers(),
      oauth2: new OAuth2Sources(),
      dispatchers,
    },
    registry,
    integrations: new IntegrationCache(),
    turns: new FairTurns(),
    people: new People({
      db: storage.db,
      masterKey,
      stores,
      guard,
      passwordQueue: new PasswordCheckQueue({
        concurrency: config.signInHashConcurrency,
        perAddress: config.signInPerAddress,
        maxWaiting: config.signInQueueLimit,
      }),
      accessTokenTtlSeconds: config.accessTokenTtlSeconds,
      cacheMs: config.keyCacheMs,
      now: options.people?.now,
    }),
    executions: new ExecutionLog(storage.db, app.log, { health }),
    storageHealth: health,
    queue,
    events: webhooks,
    queueMetrics,
    breakers: redis
      ? new RedisBreakers(redis, config.redisPrefix, app.log, options.breakers)
      : new MemoryBreakers(options.breakers),
    integrationSlots: new IntegrationConcurrency(),
    resilience: registerResilienceMetrics(metrics.registry),
  };
  // The execution core gets what it uses, by name: no AppContext below the routes.
  const executionService = new ExecutionService({
    config: {
      tenantConcurrency: config.tenantConcurrency,
      tenantQueuedMax: config.tenantQueuedMax,
      executeDeadlineSeconds: config.executeDeadlineSeconds,
      executeMaxBytes: config.executeMaxBytes,
      asyncDeadlineSeconds: config.asyncDeadlineSeconds,
      resultRetentionHours: config.resultRetentionHours,
    },
    db: storage.db,
    masterKey,
    registry,
    shared: ctx.connectors,
    integrations: ctx.integrations,
    storageHealth: health,
    turns: ctx.turns,
    breakers: ctx.breakers,
    integrationSlots: ctx.integrationSlots,
    resilience: ctx.resilience,
    executions: ctx.executions,
    events: ctx.events,
    queue,
    queueMetrics: ctx.queueMetrics,
  });
  app.decorate('executionLog', ctx.executions);
  const keyChanges = redis
    ? subscribeToKeyChanges(redis, config.redisPrefix, (hash) => ctx.keyCache.forget(hash), app.log)
    : undefined;
  registerAuth(app, { ...ctx, db: storage.db, cache: ctx.keyCache });
  // Idempotency answers a stopped process left in the spool are written before this one takes keys.
  if (config.spoolDir) await HeldAnswers.reconcile(storage.db, config.spoolDir, app.log);
  const answers = new HeldAnswers({ db: storage.db, health, log: app.log, spoolDir: config.spoolDir });
  registerIdempotency(app, { db: storage.db, leaseMs: config.executeDeadlineSeconds * 1000, answers });
  metrics.watch({
    storage: health,
    connectorStats: () => registry.stats(),
    usageFlushLagSeconds: () => ctx.usage.lagSeconds(),
    turnsWaiting: () => ctx.turns.waiting,
  });
  registerRootRoute(app, config);
  registerHealthRoutes(app, ctx, metrics.registry);
  registerApiKeyRoutes(app, ctx);
  registerEntityRoutes(app, ctx);
  registerIntegrationRoutes(app, ctx, (stored, documents) => executionService.catalogDocumentIssues(stored, documents));
  registerIntegrationSchemaRoute(app, executionService);
  // The operation catalogue, shown by the API and offered to AI agents (docs/catalog.md).
  const catalog = new CatalogService({
    db: storage.db,
    integration: (tenantId, id) => executionService.integration(tenantId, id),
    catalog: (stored) => executionService.catalog(stored),
    execute: (call) => executionService.execute(call),
  });
  registerIntegrationOperationsRoute(app, catalog);
  registerMcpRoute(app, catalog, { progressIntervalMs: config.mcpProgressSeconds * 1000 });
  registerExecuteRoute(app, ctx, executionService);
  registerExecutionRoutes(app, ctx, executionService);
  registerWebhookRoutes(app, ctx, webhooks, webhookPolicy);
  registerWebhookDeliveryRoutes(app, storage.db, webhooks);
  registerAuditRoutes(app, ctx);
  registerMemberRoutes(app, ctx);
  registerAuthRoutes(app, ctx);
  registerConsole(app);

  // Every instance works the queue unless IX_WORKER=false; a job left by a dead process is run again after its
  // heartbeat stops (docs/async.md#exactly-once).
  if (config.worker) await workQueue(config, queue, executionService, deliverer, app.log);
  const resultSweep = startResultSweep(storage.db, app.log);
  const auditSweep = startAuditRetention(storage.db, config.auditRetentionDays, app.log);

  // The queue first (its running jobs may finish and write), then the executions log and usage (they write to
  // storage), then storage itself if this app opened it.
  app.addHook('onClose', async () => {
    clearInterval(resultSweep);
    clearInterval(auditSweep);
    // Events being stored are written before the queue stops; deliveries still pending stay queued for the next start.
    await webhooks.close();
    // Runs waiting for storage to take their ends give up now (their jobs run again on the next start).
    health.close();
    await queue.stop(5000);
    await ctx.executions.close();
    await answers.close();
    await ctx.usage.close();
    await dispatchers.close();
    await dispatcher.close();
    await webhookDispatcher.close();
    await ctx.connectors.workers.close();
    keyChanges?.close();
    redis?.disconnect();
    if (ownsStorage) await storage.close();
  });
  return app;
}
