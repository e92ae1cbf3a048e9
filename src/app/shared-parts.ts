import type { FastifyInstance } from 'fastify';
import type { Registry } from 'prom-client';
import { AuthFailureGuard, memoryStores, redisStores } from '../auth/rate-limit.ts';
import type { Config } from '../config/config.ts';
import { createEgressDispatcher } from '../egress/dispatcher.ts';
import { IntegrationDispatchers } from '../egress/integration-dispatchers.ts';
import { createEgressPolicy } from '../egress/policy.ts';
import { registerQueueMetrics } from '../queue/metrics.ts';
import { unfinishedExecutions } from '../storage/async-executions.ts';
import type { StorageHealth } from '../storage/availability.ts';
import type { Storage } from '../storage/database.ts';
import { type DeliverySettings, defaultDeliverySettings, WebhookDeliverer } from '../webhooks/delivery.ts';
import { Webhooks } from '../webhooks/webhooks.ts';
import type { BuildOptions } from './build-options.ts';
import { openQueue } from './queue-wiring.ts';

/** What the shared parts are built from: the app's config, storage and key, and its storage health and metrics. */
export interface PartsSources {
  config: Config;
  storage: Storage;
  masterKey: Buffer;
  options: BuildOptions;
  health: StorageHealth;
  metrics: Registry;
}

/**
 * The infrastructure an app's context, routes and workers share, built once: the egress policies and dispatchers
 * (the connectors' and the webhook receivers'), Redis and the counters' stores, the queue and webhooks (both started).
 */
export async function buildSharedParts(app: FastifyInstance, sources: PartsSources) {
  const { config, storage, masterKey, options, health, metrics } = sources;
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
  const queue = await openQueue(config, storage, app.log);
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
  const queueMetrics = registerQueueMetrics(metrics, async () => ({
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
  return {
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
  };
}
