import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { caller } from '../auth/authenticate.ts';
import { ApiError } from '../errors.ts';
import { requestFingerprint } from '../execution/fingerprint.ts';
import type { Db } from '../storage/database.ts';
import { claimIdempotencyKey, completeIdempotencyKey, releaseIdempotencyKey } from '../storage/idempotency.ts';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route takes an `Idempotency-Key` header (API.md section 4): see registerIdempotency. */
    idempotent?: boolean;
  }
  interface FastifyRequest {
    /** The key this request claimed, to complete or give back when its answer is sent. */
    idempotencyClaim: { tenantId: string; key: string } | null;
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
 * - when the answer is sent, it is kept for 24 h, unless it is a refusal the caller can correct (4xx) or our own bug
 *   (500) and no write reached the upstream: then the key is given back, so that a retry runs.
 * A claim left by a killed process is free again after `leaseMs` (the execute deadline).
 */
export function registerIdempotency(app: FastifyInstance, options: { db: Db; leaseMs: number }): void {
  const { db, leaseMs } = options;
  app.decorateRequest('idempotencyClaim', null);
  app.decorateRequest('reachedUpstream', false);

  app.addHook('preHandler', async (request: FastifyRequest, reply: FastifyReply) => {
    if (request.routeOptions.config.idempotent !== true) return;
    const key = request.headers['idempotency-key'];
    if (key === undefined) return;
    if (typeof key !== 'string' || key.length === 0 || key.length > 255) {
      throw new ApiError('validation_failed', 'Idempotency-Key must be 1 to 255 characters.', {
        issues: [{ path: 'Idempotency-Key', message: 'must be 1 to 255 characters' }],
      });
    }
    const { tenantId } = caller(request);
    const id = (request.params as { id?: string }).id ?? '';
    const claim = await claimIdempotencyKey(db, tenantId, key, requestFingerprint(id, request.body), leaseMs);
    if (claim.kind === 'mismatch') throw new ApiError('idempotency_key_reused');
    if (claim.kind === 'in_progress') {
      throw new ApiError('conflict', 'A request with this Idempotency-Key is still running; retry when it has finished.');
    }
    if (claim.kind === 'replay') {
      // The first answer, with this request's id (an error body's request_id equals X-Request-Id).
      const replayed = JSON.parse(claim.response);
      if ('request_id' in replayed) replayed.request_id = request.id;
      return reply.code(claim.status).header('idempotent-replayed', 'true').send(replayed);
    }
    request.idempotencyClaim = { tenantId, key };
  });

  app.addHook('onSend', async (request, reply, payload) => {
    const claim = request.idempotencyClaim;
    if (!claim) return payload;
    request.idempotencyClaim = null;
    const status = reply.statusCode;
    const giveBack = status >= 400 && status <= 500 && !request.reachedUpstream;
    if (giveBack) await releaseIdempotencyKey(db, claim.tenantId, claim.key);
    else await completeIdempotencyKey(db, claim.tenantId, claim.key, status, String(payload));
    return payload;
  });
}
