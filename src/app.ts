import { randomUUID } from 'node:crypto';
import { SerializerSelector } from '@fastify/fast-json-stringify-compiler';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import Fastify, { type FastifyInstance, type FastifyServerOptions, LogController } from 'fastify';
import { registerAuth } from './auth/authenticate.ts';
import { KeyCache } from './auth/key-cache.ts';
import { publishKeyChange, subscribeToKeyChanges } from './auth/key-events.ts';
import { PasswordCheckQueue } from './auth/password-queue.ts';
import { People } from './auth/people.ts';
import { AuthFailureGuard, KeyRateLimiter, memoryStores, redisStores } from './auth/rate-limit.ts';
import { UsageRecorder } from './auth/usage-recorder.ts';
import type { Config } from './config/config.ts';
import type { ConnectorDefinition } from './connectors/connector.ts';
import { builtInConnectors, ConnectorRegistry } from './connectors/registry.ts';
import { registerConsole } from './console/plugin.ts';
import type { AppContext } from './context.ts';
import { ApiError } from './core/errors.ts';
import { validatorCompiler } from './core/validation.ts';
import { OAuth2Sources } from './credentials/oauth2-sources.ts';
import { createEgressDispatcher } from './egress/dispatcher.ts';
import { IntegrationDispatchers } from './egress/integration-dispatchers.ts';
import { createEgressPolicy } from './egress/policy.ts';
import { type ExecutionJob, ExecutionService } from './execution/service.ts';
import {
  answerConnect,
  clientErrorHandler,
  frameworkErrors,
  maxParamLength,
  registerErrorHandling,
} from './http/error-handler.ts';
import { registerIdempotency } from './http/idempotency.ts';
import { parseJsonBody } from './http/json-body.ts';
import { registerMetrics } from './http/metrics.ts';
import { registerRequestLog } from './http/request-log.ts';
import { RequestLogger } from './http/request-logger.ts';
import { IntegrationCache } from './integrations/cache.ts';
import { EmbeddedQueue } from './queue/embedded-queue.ts';
import type { JobQueue } from './queue/job-queue.ts';
import { registerQueueMetrics } from './queue/metrics.ts';
import { type BreakerOptions, MemoryBreakers } from './resilience/breaker.ts';
import { RedisBreakers } from './resilience/breaker-redis.ts';
import { FairTurns } from './resilience/fair-turns.ts';
import { IntegrationConcurrency } from './resilience/integration-concurrency.ts';
import { registerResilienceMetrics } from './resilience/metrics.ts';
import { registerApiKeyRoutes } from './routes/api-keys.ts';
import { registerAuthRoutes } from './routes/auth.ts';
import { registerEntityRoutes } from './routes/entities.ts';
import { registerExecuteRoute } from './routes/execute.ts';
import { registerExecutionRoutes } from './routes/executions.ts';
import { registerHealthRoutes } from './routes/health.ts';
import { registerIntegrationSchemaRoute } from './routes/integration-schema.ts';
import { registerIntegrationRoutes } from './routes/integrations.ts';
import { refResolver, registerSharedSchemas } from './routes/openapi.ts';
import { registerRootRoute } from './routes/root.ts';
import { registerWebhookRoutes } from './routes/webhooks.ts';
import { loadMasterKey, type MasterKeySource } from './secrets/master-key.ts';
import { StorageHealth } from './storage/availability.ts';
import { migrate, openStorage, type Storage } from './storage/database.ts';
import { ExecutionLog } from './storage/execution-log.ts';
import { dropExpiredResults, unfinishedExecutions } from './storage/executions.ts';
import { HeldAnswers } from './storage/held-answers.ts';
import { registerTracing } from './telemetry/http.ts';
import { AnswerWorkers } from './transport/answer-workers.ts';
import { type DeliveryJob, type DeliverySettings, defaultDeliverySettings, WebhookDeliverer } from './webhooks/delivery.ts';
import { Webhooks } from './webhooks/webhooks.ts';

declare module 'fastify' {
  interface FastifyInstance {
    /** The executions log written behind: `flush()` writes what is pending (tests read storage after it). */
    executionLog: ExecutionLog;
  }
}

export interface BuildOptions {
  /** Storage opened by the caller (tests share one); otherwise opened from config.databaseUrl and closed with the app. */
  storage?: Storage;
  /** The connectors offered; the built-in ones (GraphQL, SOAP) by default. */
  connectors?: readonly ConnectorDefinition[];
  /** Where the logs go; standard output by default. */
  logStream?: NodeJS.WritableStream;
  /** Webhook delivery pacing (retry schedule, timeout, clock) other than production's: tests set short ones. */
  webhooks?: Partial<DeliverySettings> & { refreshMs?: number };
  /** Circuit breaker timings and clock other than the documented (tests step a clock through them). */
  breakers?: BreakerOptions;
  /** The clock people's memberships and sessions are cached by (tests step one through the 1 s bound). */
  people?: { now?: () => number };
}

const saneRequestId = /^[A-Za-z0-9._:-]{1,128}$/;

type SerializerFactory = NonNullable<
  NonNullable<NonNullable<FastifyServerOptions['schemaController']>['compilersFactory']>['buildSerializer']
>;

/**
 * Replies are serialized with their route's response schema (fast-json-stringify), each compiled when its route first
 * answers with that status rather than at start-up: the ~60 success serializers (those with a `oneOf` build an Ajv
 * instance each) held 19 MiB from start. Failures are not compiled at all: every failure is `errorBody`'s one shape
 * (tested against the documented `Error` schema), and ~180 failure serializers held 7 MiB more.
 */
const successSerializers: SerializerFactory = (externalSchemas, options) => {
  const compile = SerializerSelector()(externalSchemas, options);
  return (route) => {
    if (/^[45]/.test(String(route.httpStatus))) return (value: unknown) => JSON.stringify(value);
    let serialize: ((value: unknown) => string) | undefined;
    return (value: unknown) => {
      serialize ??= compile(route) as (value: unknown) => string;
      return serialize(value);
    };
  };
};

/**
 * Paths whose values are secrets, never logged: the caller's credentials, and every connector's secret config fields
 * wherever a logged object holds them (`*.token`, `*.config.token`).
 */
function redactedPaths(registry: ConnectorRegistry): string[] {
  // A dot path (`auth.password`) is a path in the logged object too.
  const fields = registry.secretFields.map((field) =>
    /^[A-Za-z_$][\w$]*(\.[A-Za-z_$][\w$]*)*$/.test(field) ? `.${field}` : `[${JSON.stringify(field)}]`,
  );
  return [
    'req.headers["x-api-key"]',
    'req.headers.authorization',
    '*.key',
    ...fields.flatMap((field) => [`*${field}`, `*.config${field}`]),
  ];
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
  const requestTimeoutMs = config.requestTimeoutSeconds * 1000;
  const app = Fastify({
    logger: {
      level: config.logLevel,
      redact: { paths: redactedPaths(registry), censor: '[redacted]' },
      // LOG_FORMAT=pretty: pino-pretty, loaded only then, so the JSON default pays nothing for it; it writes to the
      // caller's stream when there is one. Synchronous, so the last lines before an exit are not lost.
      ...(config.logFormat === 'pretty'
        ? {
            stream: (await import('pino-pretty')).default({
              destination: options.logStream ?? 1,
              sync: true,
              translateTime: 'SYS:HH:MM:ss.l',
              ignore: 'pid,hostname',
            }),
          }
        : options.logStream && { stream: options.logStream }),
    },
    // Each request's logger makes its pino child only when it writes (src/http/request-logger.ts).
    childLoggerFactory: (parent, bindings, childOptions) => new RequestLogger(parent, bindings, childOptions),
    bodyLimit: config.bodyLimit,
    // One line per request when it is answered, with who, what and how it ended (src/http/request-log.ts). The
    // request's id is bound to its logger as `request_id`, the name the API gives it, not Fastify's `reqId` beside it.
    logController: new LogController({ disableRequestLogging: true, requestIdLogLabel: 'request_id' }),
    // A request must arrive whole (headers and body) within IX_REQUEST_TIMEOUT_SECONDS: a client that trickles
    // bytes cannot hold a connection. Node checks its connections every `connectionsCheckingInterval` (30 s by
    // default, which would double the bound); 1 s keeps the answer near the limit. The 408 is clientErrorHandler's.
    requestTimeout: requestTimeoutMs,
    http: { headersTimeout: requestTimeoutMs, requestTimeout: requestTimeoutMs, connectionsCheckingInterval: 1000 },
    // Requests that arrive while the instance shuts down get the contract's 503 (the onRequest hook below).
    return503OnClosing: false,
    trustProxy: config.trustProxy,
    requestIdHeader: false,
    genReqId: (req) => {
      const given = req.headers['x-request-id'];
      return typeof given === 'string' && saneRequestId.test(given) ? given : randomUUID();
    },
    routerOptions: { maxParamLength },
    schemaController: { compilersFactory: { buildSerializer: successSerializers } },
    clientErrorHandler,
    frameworkErrors,
  });

  app.server.on('connect', answerConnect);
  app.setValidatorCompiler(validatorCompiler);
  let closing = false;
  app.addHook('preClose', async () => {
    closing = true;
  });
  // While closing, every answer ends its connection: a keep-alive connection busy when close() began would
  // otherwise hold the shutdown until its keep-alive timeout (72 s). Hooks on every request are synchronous
  // (callback style): an async hook costs a promise and a turn of the microtask queue per request.
  app.addHook('onSend', (_request, reply, payload, done) => {
    if (closing) reply.header('connection', 'close');
    done(null, payload);
  });
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id);
    if (!closing) return done();
    reply.header('retry-after', '5');
    done(new ApiError('service_unavailable', 'This instance is shutting down; retry on another instance.'));
  });

  // JSON is the only body type; an empty body is no body. Depth, NUL, lone surrogates and __proto__ tricks are
  // refused at parse time, before any code recurses over the value.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (_request, body, done) => {
    if ((body as Buffer).length === 0) return done(null, undefined);
    try {
      done(null, parseJsonBody(body as Buffer, config.maxJsonDepth));
    } catch (error) {
      done(error as ApiError, undefined);
    }
  });

  // Whether storage takes writes now; what it refuses meanwhile is held and written when it answers again.
  const health = new StorageHealth({ db: storage.db, log: app.log });
  registerErrorHandling(app, { storageFailed: (error) => health.failed(error) });
  // Traces when OTEL_EXPORTER_OTLP_ENDPOINT is set (nothing is loaded otherwise); before the routes, so their requests get spans.
  await registerTracing(app);
  registerRequestLog(app);
  const metrics = registerMetrics(app);

  // The shapes the replies are serialized with and the document lists under components.schemas (src/routes/openapi.ts).
  registerSharedSchemas(app, registry);
  await app.register(swagger, {
    refResolver,
    openapi: {
      openapi: '3.1.0',
      info: { title: 'Interchange', version: '1', description: 'Integration execution service, API v1 (docs/api.md).' },
      components: {
        securitySchemes: {
          ApiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key' },
          TenantId: { type: 'apiKey', in: 'header', name: 'X-Tenant-ID' },
          Bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' },
        },
      },
    },
  });
  await app.register(swaggerUi, { routePrefix: '/docs' });

  const policy = createEgressPolicy({
    allowPrivate: config.egressAllowPrivate,
    allow: config.egressAllow,
    deny: config.egressDeny,
  });
  const dispatcher = createEgressDispatcher(policy, { proxies: config.proxies });
  // An integration with config.tls gets a dispatcher of its own (its roots, client certificate, SNI), built once.
  const dispatchers = new IntegrationDispatchers({ policy, shared: dispatcher, egress: { proxies: config.proxies } });
  // Without REDIS_URL each instance keeps its own counters (README: Scale out).
  // ioredis is loaded only when there is a Redis to talk to (an instance without one stays smaller).
  const redis = config.redisUrl
    ? new (await import('ioredis')).Redis(config.redisUrl, {
        enableOfflineQueue: false,
        maxRetriesPerRequest: 1,
        connectTimeout: 2000,
      })
    : undefined;
  const stores = redis ? redisStores(redis, config.redisPrefix, app.log) : memoryStores;
  // The durable queue of async executions and webhook deliveries (docs/async.md#the-queue). pg-boss (and its cron and
  // date libraries, ~6 MiB of heap) is loaded only on PostgreSQL: an instance on SQLite never runs it.
  const queueSettings = { heartbeatSeconds: config.workerHeartbeatSeconds, retryLimit: 10 };
  const queue: JobQueue =
    storage.kind === 'postgres'
      ? // pg-boss is loaded only on PostgreSQL: the embedded default does without it (as without pg and ioredis).
        new (await import('./queue/pg-boss-queue.ts')).PgBossQueue(config.databaseUrl, storage.db, app.log, queueSettings)
      : new EmbeddedQueue(storage.db, app.log, queueSettings);
  await queue.start();
  const guard = new AuthFailureGuard(config.authFailureLimit, stores);
  // Webhook receivers are reached through a dispatcher of their own: its policy takes IX_WEBHOOK_ALLOW_PRIVATE for
  // private addresses, and the same allow and deny lists as the connectors' (docs/async.md#webhooks).
  const webhookPolicy = createEgressPolicy({
    allowPrivate: config.webhookAllowPrivate,
    allow: config.egressAllow,
    deny: config.egressDeny,
  });
  const webhookDispatcher = createEgressDispatcher(webhookPolicy, { proxies: config.proxies });
  const { refreshMs = 5000, ...deliveryOverrides } = options.webhooks ?? {};
  const deliverySettings: DeliverySettings = { ...defaultDeliverySettings, ...deliveryOverrides };
  const queueMetrics = registerQueueMetrics(metrics.registry, async () => ({
    executions: (await unfinishedExecutions(storage.db)).queued,
    'webhook-deliveries': await queue.due('webhook-deliveries'),
  }));
  let webhooks: Webhooks | undefined;
  const deliverer = new WebhookDeliverer({
    db: storage.db,
    queue,
    masterKey,
    dispatcher: webhookDispatcher,
    metrics: queueMetrics,
    log: app.log,
    settings: deliverySettings,
    onDisabled: () => void webhooks?.refresh().catch((e) => app.log.warn({ err: e }, 'webhooks refresh failed')),
  });
  webhooks = new Webhooks({ db: storage.db, queue, deliverer, log: app.log, refreshMs, now: deliverySettings.now, health });
  await webhooks.start();
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
  registerIntegrationRoutes(app, ctx);
  registerIntegrationSchemaRoute(app, executionService);
  registerExecuteRoute(app, ctx, executionService);
  registerExecutionRoutes(app, ctx, executionService);
  registerWebhookRoutes(app, ctx, webhooks, webhookPolicy);
  registerAuthRoutes(app, ctx);
  registerConsole(app);

  // Every instance works the queue unless IX_WORKER=false; a job left by a dead process is run again after its
  // heartbeat stops (docs/async.md#exactly-once).
  if (config.worker) {
    await queue.work<ExecutionJob>('executions', config.workerConcurrency, (job) => executionService.runJob(job, app.log));
    await queue.work<DeliveryJob>('webhook-deliveries', config.workerConcurrency, (job) =>
      deliverer.run(job).then(() => undefined),
    );
  }
  // Async answers kept past IX_RESULT_RETENTION_HOURS are dropped (GET /executions/{id} already hides them).
  const resultSweep = setInterval(
    () =>
      void dropExpiredResults(storage.db, new Date().toISOString()).catch((e) =>
        app.log.warn({ err: e }, 'results sweep failed'),
      ),
    10 * 60 * 1000,
  ).unref();

  // The queue first (its running jobs may finish and write), then the executions log and usage (they write to
  // storage), then storage itself if this app opened it.
  app.addHook('onClose', async () => {
    clearInterval(resultSweep);
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
