import type { FastifyBaseLogger } from 'fastify';
import { type AuditSource, inTransaction, recordChange } from '../audit/audit-log.ts';
import { newId } from '../core/ids.ts';
import { type ExecutionEvents, eventTypeOf } from '../execution/events.ts';
import type { JobQueue } from '../queue/job-queue.ts';
import { type HeldWrites, isStorageUnavailable, type StorageHealth } from '../storage/availability.ts';
import type { Db } from '../storage/database.ts';
import type { Execution } from '../storage/execution-rows.ts';
import {
  enabledWebhooks,
  insertEvent,
  pruneWebhookHistory,
  tenantsWithWebhooks,
  type WebhookDelivery,
  type WebhookDeliveryDetail,
  type WebhookRecord,
} from '../storage/webhooks.ts';
import type { DeliveryJob, WebhookDeliverer } from './delivery.ts';

/** The event sent by `POST /webhooks/{id}/test`. */
export const testEventType = 'webhook.test';

/** Events and attempts are kept this long (the retries of an event end within about 33 hours). */
const historyDays = 30;

export interface WebhooksOptions {
  db: Db;
  queue: JobQueue;
  deliverer: WebhookDeliverer;
  log: FastifyBaseLogger;
  /** How often the tenants with endpoints are read again (changes made on another instance are seen within it). */
  refreshMs: number;
  now: () => Date;
  /** Where an event storage could not take is told, to be written when it answers again. */
  health: StorageHealth;
}

/** An event of a synchronous execution, not stored yet (it carries no answer). */
interface PendingEvent {
  tenantId: string;
  execution: Execution;
  at: string;
}

/** Events held while storage is unavailable, per instance (docs/limits.md); past it, new ones are dropped. */
export const maxHeldEvents = 10_000;

/** Whether an endpoint wants events of this type. */
export function wants(webhook: Pick<WebhookRecord, 'events'>, type: string): boolean {
  return webhook.events.includes('*') || webhook.events.includes(type);
}

/**
 * The webhooks (docs/async.md#webhooks) as the execution service sees them: `wanted` is an in-memory look-up of the
 * tenants with an endpoint that is not disabled (read again every `refreshMs`, and at once when this instance
 * changes an endpoint); `finished` stores the event, its body fixed now, and one delivery job per endpoint that wants
 * its type, in one transaction. What `finished` starts is waited for when the app closes.
 */
export class Webhooks implements ExecutionEvents, HeldWrites {
  readonly #options: WebhooksOptions;
  #tenants = new Set<string>();
  readonly #pending = new Set<Promise<unknown>>();
  readonly #timers: NodeJS.Timeout[] = [];
  /** Events storage refused while unavailable, oldest first. */
  #held: PendingEvent[] = [];

  constructor(options: WebhooksOptions) {
    this.#options = options;
    options.health.holds(this);
  }

  get held(): number {
    return this.#held.length;
  }

  async start(): Promise<void> {
    await this.refresh();
    const { log, refreshMs, db, now } = this.#options;
    this.#timers.push(
      setInterval(() => void this.refresh().catch((e) => log.warn({ err: e }, 'webhooks refresh failed')), refreshMs).unref(),
    );
    const prune = () =>
      pruneWebhookHistory(db, new Date(now().getTime() - historyDays * 86_400_000).toISOString()).catch((e) =>
        log.warn({ err: e }, 'webhook history sweep failed'),
      );
    this.#timers.push(setInterval(() => void prune(), 10 * 60_000).unref());
  }

  /** Reads again which tenants have an endpoint that is not disabled. */
  async refresh(): Promise<void> {
    this.#tenants = new Set(await tenantsWithWebhooks(this.#options.db));
  }

  /** The time the webhooks go by (the deliveries' clock): rotations' overlaps are measured with it. */
  now(): Date {
    return this.#options.now();
  }

  wanted(tenantId: string): boolean {
    return this.#tenants.has(tenantId);
  }

  finished(tenantId: string, execution: Execution): void {
    const event = { tenantId, execution, at: this.#options.now().toISOString() };
    const emitting = this.#emit(event).catch((error) => {
      const { health, log } = this.#options;
      if (!isStorageUnavailable(error)) {
        log.error({ err: error, tenant_id: tenantId, execution_id: execution.id }, 'webhook event not stored');
      } else if (this.#held.length >= maxHeldEvents) {
        health.dropped('webhook events', 1, error);
      } else {
        this.#held.push(event);
        health.failed(error);
      }
    });
    this.#pending.add(emitting);
    void emitting.finally(() => this.#pending.delete(emitting));
  }

  #emit(event: PendingEvent): Promise<void> {
    const { db, queue } = this.#options;
    return emitExecutionEvent(db, queue, event.tenantId, event.execution, null, event.at);
  }

  /** Stores the held events, oldest first, until storage fails again (docs/async.md#when-storage-fails). */
  async retry(): Promise<void> {
    while (this.#held.length > 0) {
      const event = this.#held[0];
      try {
        await this.#emit(event);
      } catch (error) {
        if (isStorageUnavailable(error)) return this.#options.health.failed(error);
        this.#options.log.error({ err: error, execution_id: event.execution.id }, 'a held webhook event could not be stored');
      }
      this.#held.shift();
    }
  }

  storeWithin(trx: Db, tenantId: string, execution: Execution, result: unknown): Promise<boolean> {
    const { queue, now } = this.#options;
    return writeExecutionEvent(trx, queue, tenantId, execution, result, now().toISOString());
  }

  /**
   * Sends an attempt's event again to its endpoint (POST …/deliveries/{id}/resend): a job on the delivery queue, the
   * same event (its `webhook-id` and body), stored with its `webhook.delivery_resent` event in one transaction. Returns
   * the id the new attempt is recorded with once it is made.
   */
  async resend(webhook: WebhookRecord, delivery: Pick<WebhookDelivery, 'event_id'>, source: AuditSource): Promise<string> {
    const { db, queue } = this.#options;
    const id = newId('dlv');
    const job: DeliveryJob = {
      tenant_id: webhook.tenant_id,
      webhook_id: webhook.id,
      event_id: delivery.event_id,
      attempt: 0,
      resend_id: id,
    };
    await inTransaction(db, async (tx) => {
      await queue.send('webhook-deliveries', job, { db: tx });
      await recordChange(tx, webhook.tenant_id, source, {
        action: 'webhook.delivery_resent',
        target: { type: 'webhook', id: webhook.id },
        changes: [],
      });
    });
    queue.committed('webhook-deliveries');
    return id;
  }

  /** Sends `webhook.test` to one endpoint: its first attempt is made now (the answer tells how it went), retries as any. */
  async test(webhook: WebhookRecord): Promise<WebhookDeliveryDetail | undefined> {
    const { db, queue, now } = this.#options;
    const data = {
      webhook_id: webhook.id,
      message: 'A test event from Interchange: your endpoint receives and verifies events.',
    };
    // Its first attempt is made here, not by a job: it is stored without one.
    const event = await storeEvent(db, queue, webhook.tenant_id, { type: testEventType, data, at: now().toISOString() }, []);
    return this.#options.deliverer.attempt({ tenant_id: webhook.tenant_id, webhook_id: webhook.id, event_id: event, attempt: 1 });
  }

  /** Waits for the events being stored, tries the held ones once more; stops the timers. */
  async close(): Promise<void> {
    for (const timer of this.#timers) clearInterval(timer);
    await Promise.allSettled(this.#pending);
    if (this.#held.length > 0) await this.retry();
    if (this.#held.length > 0) {
      this.#options.log.error({ count: this.#held.length }, 'storage is unavailable at shutdown: webhook events lost');
    }
  }
}

/**
 * An execution's event payload `data`: the record as GET /executions/{id} shows it; an async execution's with its
 * answer (`result`), which it keeps anyway. A synchronous call's answer is never stored (docs/async.md#webhooks), so its event
 * carries none.
 */
export function executionEventData(execution: Execution, result: unknown): object {
  return execution.mode === 'async' ? { ...execution, result, result_expired: false } : { ...execution };
}

/**
 * Stores an event with its body, and the first attempt's job for each of `endpoints`, in one transaction; returns the
 * event's id. The caller tells the queue (`committed`) when there were endpoints.
 */
export async function storeEvent(
  db: Db,
  queue: JobQueue,
  tenantId: string,
  event: { type: string; data: object; at: string },
  endpoints: readonly WebhookRecord[],
): Promise<string> {
  return db.transaction().execute((trx) => writeEvent(trx, queue, tenantId, event, endpoints));
}

/** What storeEvent writes, within `trx`, a transaction of the caller's (one that also ends an execution). */
async function writeEvent(
  trx: Db,
  queue: JobQueue,
  tenantId: string,
  event: { type: string; data: object; at: string },
  endpoints: readonly WebhookRecord[],
): Promise<string> {
  const id = newId('evt');
  const payload = JSON.stringify({ type: event.type, timestamp: event.at, data: event.data });
  await insertEvent(trx, { id, tenant_id: tenantId, type: event.type, payload, created_at: event.at });
  for (const endpoint of endpoints) {
    const job: DeliveryJob = { tenant_id: tenantId, webhook_id: endpoint.id, event_id: id, attempt: 1 };
    await queue.send('webhook-deliveries', job, { db: trx });
  }
  return id;
}

/**
 * An execution's event written within `trx`, the transaction that ends the execution: the end and its event are stored
 * together or not at all, so a crash between them cannot lose the event. True when delivery jobs were added (the caller
 * tells the queue once the transaction has committed).
 */
export async function writeExecutionEvent(
  trx: Db,
  queue: JobQueue,
  tenantId: string,
  execution: Execution,
  result: unknown,
  at: string,
): Promise<boolean> {
  const type = eventTypeOf(execution);
  if (!type) return false;
  const endpoints = (await enabledWebhooks(trx, tenantId)).filter((w) => wants(w, type));
  if (endpoints.length === 0) return false;
  await writeEvent(trx, queue, tenantId, { type, data: executionEventData(execution, result), at }, endpoints);
  return true;
}

/**
 * An execution ended: its event goes to each enabled endpoint of the tenant that wants its type (none: nothing is
 * stored). What `Webhooks.finished` does, and what the CLI's `executions cancel` does without a server.
 */
export async function emitExecutionEvent(
  db: Db,
  queue: JobQueue,
  tenantId: string,
  execution: Execution,
  result: unknown,
  at: string,
): Promise<void> {
  const type = eventTypeOf(execution);
  if (!type) return;
  const endpoints = (await enabledWebhooks(db, tenantId)).filter((w) => wants(w, type));
  if (endpoints.length === 0) return;
  await storeEvent(db, queue, tenantId, { type, data: executionEventData(execution, result), at }, endpoints);
  queue.committed('webhook-deliveries');
}
