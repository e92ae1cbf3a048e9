import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { caller } from '../auth/authenticate.ts';
import { type ConnectorResult, type Operation, operations } from '../connectors/connector.ts';
import { connectors } from '../connectors/registry.ts';
import type { AppContext } from '../context.ts';
import { ApiError, errorBody } from '../errors.ts';
import { checkExecuteRequest, runExecute } from '../execution/executor.ts';
import { requestFingerprint } from '../execution/fingerprint.ts';
import { toApiError } from '../http/error-handler.ts';
import { nowIso } from '../ids.ts';
import { resolveIntegration } from '../integrations/config.ts';
import { insertExecution, newExecutionId } from '../storage/executions.ts';
import { claimIdempotencyKey, completeIdempotencyKey, releaseIdempotencyKey } from '../storage/idempotency.ts';
import { findIntegration } from '../storage/integrations.ts';
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

/**
 * POST /integrations/{id}/execute: checks, claims the Idempotency-Key, runs through the executor,
 * records the execution, and answers in the one shape. The route knows nothing of GraphQL or SOAP.
 */
export function registerExecuteRoute(app: FastifyInstance, ctx: AppContext): void {
  const db = ctx.storage.db;

  async function respond(request: ExecuteRequest, reply: FastifyReply) {
    const auth = caller(request);
    const { operation, ...fields } = request.body;
    const stored = await findIntegration(db, auth.tenantId, request.params.id);
    if (!stored) throw new ApiError('not_found', `No integration ${request.params.id}.`);
    // Taken at the start, so that the log's newest-first order is the order the calls began in.
    const executionId = newExecutionId();
    const startedAt = nowIso();
    const started = performance.now();

    const record = (httpStatus: number, code: string | null, count: number) =>
      insertExecution(db, auth.tenantId, {
        id: executionId,
        integration_id: stored.id,
        connector: stored.connector,
        operation,
        status: httpStatus < 300 ? 'succeeded' : 'failed',
        http_status: httpStatus,
        error_code: code,
        message_count: count,
        duration_ms: Math.round(performance.now() - started),
        api_key_id: auth.key.id,
        request_id: request.id,
        started_at: startedAt,
      });

    let status = 200;
    let body: object;
    let messageCount = 0;
    let errorCode: string | null = null;
    const idempotencyKey = idempotencyKeyOf(request);
    let claimed = false;
    try {
      const definition = connectors.get(stored.connector);
      if (!definition) {
        throw new ApiError('integration_misconfigured', `Connector ${stored.connector} is no longer offered.`);
      }
      checkExecuteRequest(definition, operation, fields);
      const connection = definition.connect(resolveIntegration(definition, stored, ctx.masterKey), ctx.connectors);

      if (idempotencyKey !== undefined) {
        const claim = await claimIdempotencyKey(db, auth.tenantId, idempotencyKey, requestFingerprint(stored.id, request.body));
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

      const result = await runExecute(definition, connection, operation, fields);
      messageCount = result.messageCount;
      body = successBody(result);
    } catch (thrown) {
      const error = toApiError(thrown);
      if (!error) {
        if (claimed && idempotencyKey !== undefined) await releaseIdempotencyKey(db, auth.tenantId, idempotencyKey);
        // A bug: the error handler answers 500 internal_error (and logs it); the call is in the log all the same.
        await record(500, 'internal_error', 0);
        throw thrown;
      }
      // Refused before anything was written upstream: the key is given back so a corrected retry may use it.
      if (claimed && idempotencyKey !== undefined && refusedBeforeWriting(error)) {
        await releaseIdempotencyKey(db, auth.tenantId, idempotencyKey);
        claimed = false;
      }
      status = error.status;
      errorCode = error.code;
      body = errorBody(error.code, error.message, request.id, error.details, error.upstreamErrors);
    }

    if (claimed && idempotencyKey !== undefined) {
      await completeIdempotencyKey(db, auth.tenantId, idempotencyKey, status, JSON.stringify(body));
    }
    await record(status, errorCode, messageCount);
    return reply.code(status).send(body);
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

/** Codes that mean a request was refused rather than run (a receive's records_path is checked against the answer). */
const refusals = [
  'validation_failed',
  'unsupported_operation',
  'integration_misconfigured',
  'egress_denied',
  'unknown_soap_method',
  'invalid_soap_params',
];

/**
 * Whether a failed request changed nothing upstream, so that its Idempotency-Key may be given back: a refusal,
 * unless a sync's outbound mutation had already run (`details.stage: "inbound"`, its result in
 * `details.outbound`): a retry must then be a replay, never a second mutation.
 */
function refusedBeforeWriting(error: ApiError): boolean {
  const outboundRan =
    error.details?.stage === 'inbound' && error.details.outbound !== null && error.details.outbound !== undefined;
  return refusals.includes(error.code) && !outboundRan;
}
