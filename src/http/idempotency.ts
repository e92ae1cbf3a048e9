import { randomUUID } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { caller } from '../auth/authenticate.ts';
import { ApiError } from '../core/errors.ts';
import { isStorageUnavailable } from '../storage/availability.ts';
import type { Db } from '../storage/database.ts';
import type { HeldAnswers } from '../storage/held-answers.ts';
import { claimIdempotencyKey } from '../storage/idempotency.ts';
import { requestFingerprint } from './fingerprint.ts';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route takes an `Idempotency-Key` header (docs/execute.md#idempotency): see registerIdempotency. */
    idempotent?: boolean;
  }
  interface FastifyRequest {
    /** The key this request claimed, to complete or give back when its answer is sent. */
    idempotencyClaim: { tenantId: string; key: string; token: string } | null;
    /**
     * Set by the route when a write may have reached the upstream: a failure is then kept for replay, never given
     * back for a second try that could write twice.
     */
    reachedUpstream: boolean;
  }
}

/**
 * Idempotency-Key for the routes that declare `config: { idempotent: true }`, as hooks, so that no route hand-codes it:
 * - before the handler, the key is claimed for the tenant with a fingerprint of the route's `id` and the body: the
 *   first answer is replayed (`Idempotent-Replayed: true`, this request's id as `request_id`), a request still
 *   running is `409 conflict`, the key used with another request `422 idempotency_key_reused`;
 * - when the answer is sent, it is kept for 24 h, unless no write reached the upstream and it is a failure other than
 *   the upstream's (anything from 400 but 502 and 504: a refusal the caller can correct, our own bug, a 503 that says
 *   to come back): then the key is given back, so that a retry runs.
 * - storage that cannot take the answer now does not change it: the answer is held (`answers`) and written when storage
 *   returns, the key staying claimed meanwhile (docs/execute.md#when-storage-fails).
 * A claim left by a killed process is free again after `leaseMs` (the execute deadline).
 */
export function registerIdempotency(app: FastifyInstance, options: { db: Db; leaseMs: number; answers: HeldAnswers }): void {
  const { db, leaseMs, answers } = options;
  app.decorateRequest('idempotencyClaim', null);
  app.decorateRequest('reachedUpstream', false);

  /** Claims the key; replays, refuses or lets the handler run. */
  async function claim(request: FastifyRequest, reply: FastifyReply, key: unknown): Promise<boolean> {
    if (typeof key !== 'string' || key.length === 0 || key.length > 255) {
      throw new ApiError('validation_failed', 'Idempotency-Key must be 1 to 255 characters.', {
        issues: [{ path: 'Idempotency-Key', message: 'must be 1 to 255 characters' }],
      });
    }
    const { tenantId } = caller(request);
    const id = (request.params as { id?: string }).id ?? '';
    const token = randomUUID();
    let claimed: Awaited<ReturnType<typeof claimIdempotencyKey>>;
    try {
      claimed = await claimIdempotencyKey(db, tenantId, key, requestFingerprint(id, request.body), leaseMs, token);
    } catch (error) {
      // Storage failed meanwhile: the claim may have been written without this request knowing. It is given back
      // (held until storage takes it) by its token, so the key does not stay taken for the whole lease; another's
      // claim is never touched. The request is answered 503 (error-handler.ts).
      if (isStorageUnavailable(error)) await answers.settle({ tenantId, key, kind: 'release', token });
      throw error;
    }
    if (claimed.kind === 'mismatch') throw new ApiError('idempotency_key_reused');
    if (claimed.kind === 'in_progress') {
      throw new ApiError('conflict', 'A request with this Idempotency-Key is still running; retry when it has finished.');
    }
    if (claimed.kind === 'replay') {
      // The first answer, with this request's id (an error body's request_id equals X-Request-Id).
      const replayed = JSON.parse(claimed.response);
      if ('request_id' in replayed) replayed.request_id = request.id;
      // An accepted async call is replayed with its headers too: where the execution is (docs/async.md).
      if (claimed.status === 202 && typeof replayed.data?.execution_id === 'string') {
        reply.headers({ 'preference-applied': 'respond-async', location: `/api/v1/executions/${replayed.data.execution_id}` });
      }
      reply.code(claimed.status).header('idempotent-replayed', 'true').send(replayed);
      return false;
    }
    request.idempotencyClaim = { tenantId, key, token };
    return true;
  }

  /** Keeps the answer, or gives the key back (see above). */
  async function settle(request: FastifyRequest, status: number, payload: unknown): Promise<void> {
    const claimed = request.idempotencyClaim;
    if (!claimed) return;
    request.idempotencyClaim = null;
    const { tenantId, key, token } = claimed;
    if (givesKeyBack(status, request.reachedUpstream)) await answers.settle({ tenantId, key, kind: 'release', token });
    else await answers.settle({ tenantId, key, kind: 'complete', status, response: String(payload) });
  }

  // Hooks only on the routes that declare it, synchronous when the request has no key (the common case).
  app.addHook('onRoute', (route) => {
    if (route.config?.idempotent !== true) return;
    route.preHandler = [
      ...[route.preHandler ?? []].flat(),
      (request: FastifyRequest, reply: FastifyReply, done: (error?: Error) => void) => {
        const key = request.headers['idempotency-key'];
        if (key === undefined) return done();
        claim(request, reply, key).then(
          (proceed) => {
            if (proceed) done();
          },
          (error: Error) => done(error),
        );
      },
    ];
    route.onSend = [
      ...[route.onSend ?? []].flat(),
      (
        request: FastifyRequest,
        reply: FastifyReply,
        payload: unknown,
        done: (error: Error | null, payload?: unknown) => void,
      ) => {
        if (!request.idempotencyClaim) return done(null, payload);
        settle(request, reply.statusCode, payload).then(
          () => done(null, payload),
          (error: Error) => done(error),
        );
      },
    ];
  });
}

/** Whether a keyed request's answer gives its key back rather than being kept for replay (see registerIdempotency). */
export function givesKeyBack(status: number, reachedUpstream: boolean): boolean {
  return !reachedUpstream && status >= 400 && status !== 502 && status !== 504;
}
