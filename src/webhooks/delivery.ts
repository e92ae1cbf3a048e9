import type { FastifyBaseLogger } from 'fastify';
import { type Dispatcher, request } from 'undici';
import { recordChange, systemSource } from '../audit/audit-log.ts';
import { ApiError } from '../core/errors.ts';
import { newId } from '../core/ids.ts';
import type { JobQueue, QueueJob } from '../queue/job-queue.ts';
import type { QueueMetrics } from '../queue/metrics.ts';
import { decryptSecret } from '../secrets/cipher.ts';
import type { Db } from '../storage/database.ts';
import {
  deliveryRecorded,
  disableWebhook,
  findEvent,
  findWebhook,
  insertDelivery,
  lastAttemptNumber,
  markAnswering,
  markFailing,
  type WebhookDeliveryDetail,
  type WebhookRecord,
} from '../storage/webhooks.ts';
import { bodyExcerpt } from '../transport/excerpt.ts';
import { upstreamFailure } from '../transport/failures.ts';
import { signatureHeader } from './signature.ts';

/** The job of one delivery attempt: which event, to which endpoint, the how-manieth try. */
export interface DeliveryJob {
  tenant_id: string;
  webhook_id: string;
  event_id: string;
  /** 1 for the first attempt; a resend's (0 in its job) is the one after the last made, decided when it is made. */
  attempt: number;
  /** A resend (POST …/deliveries/{id}/resend): the id its attempt is recorded with, given in the answer. */
  resend_id?: string;
}

/** How deliveries are paced; production's are the defaults, tests set shorter ones. */
export interface DeliverySettings {
  /** The delay before attempt n + 1 after attempt n failed; when the list is used up, the delivery is given up. */
  retryDelaysMs: readonly number[];
  /** How long the receiver has to answer a 2xx. */
  timeoutMs: number;
  /** An endpoint whose attempts have all failed for this long is disabled. */
  disableAfterMs: number;
  /**
   * What time it is for the records: attempts' times and `failing_since`, which decides when an endpoint is disabled
   * (tests move it forward). The `webhook-timestamp` header is always the wall clock's: receivers check it against theirs.
   */
  now: () => Date;
}

const minute = 60_000;
const hour = 60 * minute;

export const defaultDeliverySettings: DeliverySettings = {
  retryDelaysMs: [5000, 5 * minute, 30 * minute, 2 * hour, 5 * hour, 10 * hour, 10 * hour],
  timeoutMs: 10_000,
  disableAfterMs: 5 * 24 * hour,
  now: () => new Date(),
};

/**
 * The most of a receiver's answer that is kept with the attempt, in bytes of UTF-8 (docs/limits.md#webhooks); no
 * more than a few bytes past it are read.
 */
export const responseBodyBytes = 4096;

/** C0 controls but tab, line feed and carriage return, and DEL: kept as U+FFFD (PostgreSQL's text refuses NUL). */
// biome-ignore lint/suspicious/noControlCharactersInRegex: replacing control characters is the point.
const controlCharacters = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/g;

/** The start of a receiver's answer as it is kept: UTF-8 text of at most `responseBodyBytes`, no control characters. */
export function responseExcerpt(start: Buffer): string {
  const text = bodyExcerpt(start, responseBodyBytes).replace(controlCharacters, '\ufffd');
  // A replaced character takes 3 bytes for 1: cut again.
  return bodyExcerpt(Buffer.from(text), responseBodyBytes);
}

/** The context a webhook's secrets are sealed with: a ciphertext moved to another endpoint does not open. */
export const secretContext = (tenantId: string, webhookId: string) => `webhook-secret:${tenantId}:${webhookId}`;

/** The secrets that sign now: the current one, and the one before a rotation while its overlap lasts. */
export function signingSecrets(masterKey: Buffer, webhook: WebhookRecord, now: Date): string[] {
  const context = secretContext(webhook.tenant_id, webhook.id);
  const secrets = [decryptSecret(masterKey, webhook.secret, context)];
  const overlap = webhook.previous_secret_expires_at;
  if (webhook.previous_secret && overlap && overlap > now.toISOString()) {
    secrets.push(decryptSecret(masterKey, webhook.previous_secret, context));
  }
  return secrets;
}

interface Answer {
  status: number | null;
  error: string | null;
  /** The start of the receiver's body; null when no answer came. */
  body: string | null;
}

/**
 * The execution an event is about, read off the start of its stored body: `{"type":"execution.…","timestamp":"…",
 * "data":{"id":"exe_…"` (writeEvent and executionEventData, src/webhooks/webhooks.ts). Not parsed whole: an async
 * execution's event holds its answer, which can be megabytes.
 */
const executionIdAtStart = /^\{"type":"execution\.[a-z]+","timestamp":"[^"]*","data":\{"id":"(exe_[^"]+)"/;

function executionIdOf(payload: string): string | null {
  return executionIdAtStart.exec(payload)?.[1] ?? null;
}

const attemptMessages = {
  delivered: 'webhook delivered',
  failed: 'webhook delivery failed: it will be retried',
  gave_up: 'webhook delivery given up: its last attempt failed',
  disabled: 'webhook delivery given up: the endpoint has failed for too long and is disabled',
} as const;

/**
 * One line per attempt (docs/async.md#webhooks): a failure to be retried at `warn`, with when (`next_attempt_at`); a
 * delivery given up for good (its last attempt, or its endpoint disabled) at `error`; a delivered one at `debug` (the
 * deliveries' history and `ix_webhook_deliveries_total` count those). Never the endpoint's URL: it can hold a token.
 */
function logAttempt(
  log: FastifyBaseLogger,
  tenantId: string,
  delivery: WebhookDeliveryDetail,
  executionId: string | null,
  outcome: keyof typeof attemptMessages,
): void {
  const level = outcome === 'delivered' ? 'debug' : outcome === 'failed' ? 'warn' : 'error';
  const line = {
    webhook_id: delivery.webhook_id,
    tenant_id: tenantId,
    delivery_id: delivery.id,
    event_id: delivery.event_id,
    event_type: delivery.event_type,
    execution_id: executionId,
    attempt: delivery.attempt,
    http_status: delivery.http_status,
    error: delivery.error,
    duration_ms: delivery.duration_ms,
    retry: delivery.next_attempt_at !== null,
    next_attempt_at: delivery.next_attempt_at,
  };
  log[level](line, attemptMessages[outcome]);
}

export interface DelivererOptions {
  db: Db;
  queue: JobQueue;
  masterKey: Buffer;
  /** The egress-checked dispatcher built with IX_WEBHOOK_ALLOW_PRIVATE. */
  dispatcher: Dispatcher;
  metrics: QueueMetrics;
  log: FastifyBaseLogger;
  settings: DeliverySettings;
  /** An endpoint was disabled: the set of tenants that want events is read again. */
  onDisabled(): void;
}

/**
 * Delivers events (docs/async.md#webhooks): each attempt is a job on the `webhook-deliveries` queue, so a delivery
 * pending when a process stops is made by whichever instance runs next. An attempt POSTs the event's stored body,
 * signed, through the egress-checked dispatcher, without following redirects; a 2xx within the timeout delivers it.
 * Anything else is recorded and, while the schedule lasts, the next attempt is added as a new job `startAfter` its
 * delay, in the transaction that records this one: a job run twice (its process died after the attempt) finds its
 * attempt recorded and does nothing more.
 */
export class WebhookDeliverer {
  readonly #options: DelivererOptions;

  constructor(options: DelivererOptions) {
    this.#options = options;
  }

  /** The queue's handler. Throws only when storage fails (the queue runs the job again). */
  async run(job: QueueJob<DeliveryJob>): Promise<void> {
    await this.attempt(job.data);
  }

  /** Whether the job's attempt was made already: a job run twice (its process died after the attempt) does nothing. */
  async #made(job: DeliveryJob): Promise<boolean> {
    const { db } = this.#options;
    if (job.resend_id !== undefined) return deliveryRecorded(db, job.resend_id);
    const made = await db
      .selectFrom('webhook_deliveries')
      .select('id')
      .where('webhook_id', '=', job.webhook_id)
      .where('event_id', '=', job.event_id)
      .where('attempt', '=', job.attempt)
      .executeTakeFirst();
    return made !== undefined;
  }

  /**
   * One attempt: made, recorded and, when it failed, followed by the next one's job. Returns the attempt's record, or
   * undefined when there is nothing to do (the endpoint was deleted or disabled, or this attempt was made already).
   *
   * A resend is the event's next attempt, numbered after the last one made: it takes the place of a retry that was
   * waiting (that job then finds its attempt made), and when it fails, the retries go on from its number.
   */
  async attempt(job: DeliveryJob): Promise<WebhookDeliveryDetail | undefined> {
    const { db, masterKey, settings, queue, metrics, log } = this.#options;
    const webhook = await findWebhook(db, job.tenant_id, job.webhook_id);
    if (!webhook || webhook.disabled) return undefined;
    const event = await findEvent(db, job.tenant_id, job.event_id);
    if (!event) return undefined;
    if (await this.#made(job)) return undefined;
    const attempt = job.resend_id === undefined ? job.attempt : (await lastAttemptNumber(db, webhook.id, event.id)) + 1;

    const started = performance.now();
    const secrets = signingSecrets(masterKey, webhook, settings.now());
    const answer = await this.#post(webhook.url, event.id, event.payload, secrets);
    const durationMs = Math.round(performance.now() - started);
    const at = settings.now();
    const delivered = answer.error === null;

    let nextDelayMs: number | undefined;
    let outcome: 'delivered' | 'failed' | 'gave_up' | 'disabled' = 'delivered';
    if (delivered) {
      await markAnswering(db, webhook.id);
    } else {
      const failingSince = await markFailing(db, webhook.id, at.toISOString());
      if (at.getTime() - Date.parse(failingSince) >= settings.disableAfterMs) outcome = 'disabled';
      else if (attempt <= settings.retryDelaysMs.length) {
        outcome = 'failed';
        nextDelayMs = settings.retryDelaysMs[attempt - 1];
      } else outcome = 'gave_up';
    }
    const delivery: WebhookDeliveryDetail = {
      id: job.resend_id ?? newId('dlv'),
      webhook_id: webhook.id,
      event_id: event.id,
      event_type: event.type,
      attempt,
      http_status: answer.status,
      duration_ms: durationMs,
      error: answer.error,
      next_attempt_at: nextDelayMs === undefined ? null : new Date(at.getTime() + nextDelayMs).toISOString(),
      created_at: at.toISOString(),
      response_body: answer.body,
    };
    await db.transaction().execute(async (trx) => {
      await insertDelivery(trx, webhook.tenant_id, delivery);
      // The service changes the endpoint on its own: its event says so (actor system), as a person's change would.
      if (outcome === 'disabled' && (await disableWebhook(trx, webhook.id, at.toISOString()))) {
        await recordChange(trx, webhook.tenant_id, systemSource('webhook-delivery'), {
          action: 'webhook.updated',
          target: { type: 'webhook', id: webhook.id },
          changes: ['disabled'],
        });
      }
      if (nextDelayMs !== undefined) {
        const next: DeliveryJob = {
          tenant_id: job.tenant_id,
          webhook_id: job.webhook_id,
          event_id: job.event_id,
          attempt: attempt + 1,
        };
        await queue.send('webhook-deliveries', next, { db: trx, startAfter: new Date(Date.now() + nextDelayMs) });
      }
    });
    if (nextDelayMs !== undefined) queue.committed('webhook-deliveries');
    metrics.delivery(outcome);
    logAttempt(log, webhook.tenant_id, delivery, executionIdOf(event.payload), outcome);
    if (outcome === 'disabled') this.#options.onDisabled();
    return delivery;
  }

  /** POSTs the body; an answer other than a 2xx within the timeout is an error, in words a tenant can act on. */
  async #post(url: string, id: string, body: string, secrets: string[]): Promise<Answer> {
    const { dispatcher, settings } = this.#options;
    const timestamp = Math.floor(Date.now() / 1000);
    const deadline = new AbortController();
    const timer = setTimeout(() => deadline.abort(), settings.timeoutMs);
    const host = URL.parse(url)?.hostname ?? url;
    try {
      const response = await request(url, {
        dispatcher,
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'user-agent': 'Interchange-Webhooks/1',
          'webhook-id': id,
          'webhook-timestamp': String(timestamp),
          'webhook-signature': signatureHeader(secrets, id, timestamp, body),
        },
        body,
        signal: deadline.signal,
        headersTimeout: settings.timeoutMs,
        bodyTimeout: settings.timeoutMs,
      });
      const answered = responseExcerpt(await readStart(response.body, responseBodyBytes + 4));
      const status = response.statusCode;
      if (status >= 200 && status < 300) return { status, error: null, body: answered };
      const redirect = status >= 300 && status < 400 ? ' (redirects are not followed)' : '';
      return { status, error: `The receiver answered HTTP ${status}${redirect}.`, body: answered };
    } catch (error) {
      const failure = upstreamFailure(error, { host, timeoutMs: settings.timeoutMs, timedOut: deadline.signal.aborted });
      if (failure instanceof ApiError) return { status: null, error: failure.message, body: null };
      return { status: null, error: `The delivery failed: ${(error as Error)?.message ?? String(error)}`, body: null };
    } finally {
      clearTimeout(timer);
    }
  }
}

/**
 * At most the first `maxBytes` of a body: reading stops there (the rest is not waited for, and the stream is
 * destroyed), so an answer of any size costs at most that much memory. A few bytes more than are kept let a character
 * cut at the bound be dropped whole (bodyExcerpt).
 */
async function readStart(body: AsyncIterable<Buffer>, maxBytes: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let kept = 0;
  for await (const chunk of body) {
    const part = chunk.subarray(0, maxBytes - kept);
    chunks.push(part);
    kept += part.length;
    if (kept >= maxBytes) break;
  }
  return Buffer.concat(chunks, kept);
}
