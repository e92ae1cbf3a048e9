import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { caller } from '../auth/authenticate.ts';
import {
  type ConnectorDefinition,
  type ConnectorResult,
  type Operation,
  operations,
  type ResolvedIntegration,
} from '../connectors/connector.ts';
import { connectors } from '../connectors/registry.ts';
import type { AppContext } from '../context.ts';
import { ApiError, errorBody } from '../errors.ts';
import { TenantConcurrency } from '../execution/concurrency.ts';
import { checkExecuteRequest, runExecute } from '../execution/executor.ts';
import { requestFingerprint } from '../execution/fingerprint.ts';
import { toApiError } from '../http/error-handler.ts';
import { nowIso } from '../ids.ts';
import { resolveIntegration } from '../integrations/config.ts';
import { redactReply } from '../secrets/redact.ts';
import { insertExecution, newExecutionId } from '../storage/executions.ts';
import { claimIdempotencyKey, completeIdempotencyKey, releaseIdempotencyKey } from '../storage/idempotency.ts';
import { findIntegration } from '../storage/integrations.ts';
import { ExecuteBudget } from '../transport/budget.ts';
import { idParams, security } from './schemas.ts';

interface ExecuteBody {
  operation: Operation;
  [field: string]: unknown;
}

type ExecuteRequest = FastifyRequest<{ Params: { id: string }; Body: ExecuteBody }>;

function idempotencyKeyOf(request: FastifyRequest): string | undefined {
  const value = request.headers['idempotency-key'];
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || value.length === 0 || value.length > 255) {
    throw new ApiError('validation_failed', 'Idempotency-Key must be 1 to 255 characters.', {
      issues: [{ path: 'Idempotency-Key', message: 'must be 1 to 255 characters' }],
    });
  }
  return value;
}

function successBody(result: ConnectorResult) {
  return { success: true as const, data: result.data, ...(result.errors && { errors: result.errors }) };
}

/** The secret values of the integration (decrypted), which no reply or record may show. */
function secretValues(definition: ConnectorDefinition, integration: ResolvedIntegration): string[] {
  return definition.secretFields.flatMap((field) => {
    const value = integration.config[field];
    return typeof value === 'string' && value !== '' ? [value] : [];
  });
}

interface Answer {
  status: number;
  /** The reply as sent, secrets redacted. */
  text: string;
  messageCount: number;
  errorCode: string | null;
  errorMessage: string | null;
}

/** The failure reply; a bug becomes internal_error (logged), never its own message. */
function failureAnswer(request: FastifyRequest, thrown: unknown, secrets: readonly string[]): Answer {
  let error = toApiError(thrown);
  if (!error) {
    request.log.error({ err: thrown }, 'execute failed with an unexpected error');
    error = new ApiError('internal_error');
  }
  const body = errorBody(error.code, error.message, request.id, error.details, error.upstreamErrors);
  const { value, text } = redactReply(body, secrets);
  return { status: error.status, text, messageCount: 0, errorCode: error.code, errorMessage: value.error.message };
}

/**
 * POST /integrations/{id}/execute: checks, claims the Idempotency-Key, runs through the executor within one budget
 * (bytes and deadline), records the execution, and answers in the one shape. The route knows nothing of GraphQL or
 * SOAP: whether a failed call may give its key back is whether a write reached the upstream, which the budget tells.
 */
export function registerExecuteRoute(app: FastifyInstance, ctx: AppContext): void {
  const db = ctx.storage.db;
  const { config } = ctx;
  const slots = new TenantConcurrency(config.tenantConcurrency);
  const deadlineMs = config.executeDeadlineSeconds * 1000;

  async function respond(request: ExecuteRequest, reply: FastifyReply) {
    const auth = caller(request);
    const idempotencyKey = idempotencyKeyOf(request);
    const release = slots.tryAcquire(auth.tenantId);
    if (!release) {
      reply.header('retry-after', '1');
      throw new ApiError(
        'rate_limited',
        `This tenant already has ${slots.limit} executes running on this instance; retry when one has finished.`,
        { reason: 'concurrency', limit: slots.limit },
      );
    }
    try {
      return await run(request, reply, auth.tenantId, auth.key.id, idempotencyKey);
    } finally {
      release();
    }
  }

  async function run(request: ExecuteRequest, reply: FastifyReply, tenantId: string, keyId: string, idempotencyKey?: string) {
    const { operation, ...fields } = request.body;
    const stored = await findIntegration(db, tenantId, request.params.id);
    if (!stored) throw new ApiError('not_found', `No integration ${request.params.id}.`);
    // Taken at the start, so that the log's newest-first order is the order the calls began in.
    const executionId = newExecutionId();
    const startedAt = nowIso();
    const started = performance.now();
    const budget = new ExecuteBudget({ maxBytes: config.executeMaxBytes, deadlineMs }, started);

    let secrets: string[] = [];
    let claimed = false;
    let answer: Answer;
    try {
      const definition = connectors.get(stored.connector);
      if (!definition) {
        throw new ApiError('integration_misconfigured', `Connector ${stored.connector} is no longer offered.`);
      }
      checkExecuteRequest(definition, operation, fields);
      const integration = resolveIntegration(definition, stored, ctx.masterKey);
      secrets = secretValues(definition, integration);
      const connection = definition.connect(integration, { ...ctx.connectors, budget });

      if (idempotencyKey !== undefined) {
        const fingerprint = requestFingerprint(stored.id, request.body);
        const claim = await claimIdempotencyKey(db, tenantId, idempotencyKey, fingerprint, deadlineMs);
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
        claimed = true;
      }

      const result = await runExecute(definition, connection, operation, fields, budget);
      // Serialized here, inside the guard: an answer that cannot be written is this call's failure, recorded as such.
      const { text } = redactReply(successBody(result), secrets);
      answer = { status: 200, text, messageCount: result.messageCount, errorCode: null, errorMessage: null };
    } catch (thrown) {
      answer = failureAnswer(request, thrown, secrets);
    }

    if (claimed && idempotencyKey !== undefined) {
      // A refusal the caller can correct (4xx), or our own bug, gives the key back so that a retry runs, unless a
      // write reached the upstream: then, as for any upstream failure (5xx), the answer is kept and replayed.
      const giveBack = (answer.status < 500 || answer.errorCode === 'internal_error') && !budget.wroteUpstream;
      if (answer.status >= 400 && giveBack) await releaseIdempotencyKey(db, tenantId, idempotencyKey);
      else await completeIdempotencyKey(db, tenantId, idempotencyKey, answer.status, answer.text);
    }
    await insertExecution(db, tenantId, {
      id: executionId,
      integration_id: stored.id,
      connector: stored.connector,
      operation,
      status: answer.status < 300 ? 'succeeded' : 'failed',
      http_status: answer.status,
      error_code: answer.errorCode,
      error_message: answer.errorMessage,
      message_count: answer.messageCount,
      duration_ms: Math.round(performance.now() - started),
      api_key_id: keyId,
      request_id: request.id,
      started_at: startedAt,
    });
    return reply.code(answer.status).type('application/json; charset=utf-8').send(answer.text);
  }

  app.post<{ Params: { id: string }; Body: ExecuteBody }>(
    '/api/v1/integrations/:id/execute',
    {
      config: { scope: 'integrations.execute' },
      schema: {
        tags: ['Execute'],
        security,
        summary: 'Run send, receive, sync, batch or test through the integration’s connector.',
        params: idParams('id'),
        headers: { type: 'object', properties: { 'idempotency-key': { type: 'string', minLength: 1, maxLength: 255 } } },
        body: {
          type: 'object',
          required: ['operation'],
          properties: { operation: { type: 'string', enum: operations } },
          additionalProperties: true,
        },
      },
    },
    respond,
  );
}
