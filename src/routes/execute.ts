import { Readable } from 'node:stream';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { caller } from '../auth/authenticate.ts';
import { type Operation, operations } from '../connectors/connector.ts';
import type { AppContext } from '../context.ts';
import type { ReplyChunks } from '../core/raw-json.ts';
import type { ExecuteAnswer, ExecutionService } from '../execution/service.ts';
import { executeBody } from './openapi-execute-body.ts';
import { bodyFailures, documentedBody, failures, idParams, reply, security, tenantFailures } from './schemas.ts';

interface ExecuteBody {
  operation: Operation;
  [field: string]: unknown;
}

const answerHeaders = {
  'X-Execution-Id': {
    type: 'string',
    description: 'The execution this call was recorded as (`GET /api/v1/executions/{id}`); not on a replayed answer.',
  },
  'Server-Timing': { type: 'string', description: '`upstream;dur=…, interchange;dur=…, total;dur=…` in milliseconds.' },
  'Idempotent-Replayed': {
    type: 'string',
    enum: ['true'],
    description: 'The kept answer to an earlier request with this Idempotency-Key.',
  },
};

const failureMeanings = {
  400:
    'The request is invalid: `validation_failed` (the fields do not fit the connector’s operation: `details.issues`), ' +
    '`unsupported_operation`, `unknown_soap_method`, `ambiguous_soap_method`, `invalid_soap_params`, `invalid_json` or `missing_tenant`.',
  404: 'No such integration in this tenant.',
  409: '`conflict`: a request with this Idempotency-Key is still running.',
  422:
    '`integration_misconfigured` (the stored config cannot run), `egress_denied` (the upstream address is refused) or ' +
    '`idempotency_key_reused` (the key came with another request).',
  429:
    '`rate_limited`: over the key’s limit, this tenant’s executes running at once (`details.reason: "concurrency"`) or ' +
    'this integration’s `max_concurrency` (`details.reason: "integration_concurrency"`); with Retry-After.',
  502:
    'The upstream failed: `graphql_errors` (with top-level `errors`), `soap_fault`, `upstream_http_error`, ' +
    '`upstream_invalid_response`, `upstream_response_too_large`, `upstream_unreachable` or `upstream_auth_failed` ' +
    '(the OAuth2 token endpoint refused).',
  503:
    '`upstream_circuit_open`: the integration’s circuit breaker is open after failed calls one after another; with ' +
    'Retry-After. Also `service_unavailable` while the instance shuts down.',
  504: '`upstream_timeout`: the upstream, or the whole execute (`details.scope: "execute"`), ran out of time.',
} as const;

/**
 * A reply of chunks (a large answer read off the main thread) goes out as they are, one after the other, without being
 * copied into one buffer; joined only when the idempotency layer keeps it for replay.
 */
function replyBody(request: FastifyRequest, reply: FastifyReply, body: ReplyChunks): Buffer | Readable {
  if (request.idempotencyClaim) return Buffer.concat(body.chunks, body.byteLength);
  reply.header('content-length', body.byteLength);
  return Readable.from(body.chunks, { objectMode: false });
}

/** `Server-Timing` (W3C): the time spent on upstream requests and in Interchange, so a caller sees what the gateway costs. */
/** Sends an execute's answer (synchronous, or an async call's refusal), with what the request's log line tells of it. */
function answered(
  request: FastifyRequest<{ Params: { id: string } }>,
  reply: FastifyReply,
  operation: Operation,
  answer: ExecuteAnswer,
) {
  request.reachedUpstream = answer.reachedUpstream;
  request.errorCode = answer.errorCode;
  request.execution = {
    integration_id: request.params.id,
    operation,
    execution_id: answer.executionId,
    connector: answer.connector,
    upstream_ms: answer.upstreamMs,
  };
  reply
    .code(answer.status)
    .header('server-timing', serverTiming(answer))
    .header('x-execution-id', answer.executionId)
    .type('application/json; charset=utf-8');
  if (answer.retryAfterSeconds !== undefined) reply.header('retry-after', String(answer.retryAfterSeconds));
  return reply.send(typeof answer.body === 'string' ? answer.body : replyBody(request, reply, answer.body));
}

function serverTiming(answer: ExecuteAnswer): string {
  const ms = (value: number) => value.toFixed(1);
  return `upstream;dur=${ms(answer.upstreamMs)}, interchange;dur=${ms(Math.max(0, answer.totalMs - answer.upstreamMs))}, total;dur=${ms(answer.totalMs)}`;
}

/**
 * Whether the request prefers an asynchronous answer: `Prefer: respond-async` (RFC 7240), among other preferences
 * (comma-separated, case-insensitive, with or without parameters), in one header or several.
 */
export function prefersAsync(prefer: string | string[] | undefined): boolean {
  if (prefer === undefined) return false;
  return [prefer]
    .flat()
    .flatMap((header) => header.split(','))
    .some((preference) => preference.split(/[=;]/, 1)[0].trim().toLowerCase() === 'respond-async');
}

/** The answer to an accepted async call (docs/async.md): 202 with where to find the execution. */
export function acceptedHeaders(executionId: string): Record<string, string> {
  return { 'preference-applied': 'respond-async', location: `/api/v1/executions/${executionId}` };
}

/**
 * POST /integrations/{id}/execute: the execution service runs it (ExecutionService), now or, with
 * `Prefer: respond-async`, on the queue; Idempotency-Key is the idempotency hooks' (`config.idempotent`), told by
 * `request.reachedUpstream` whether a write got out.
 */
export function registerExecuteRoute(app: FastifyInstance, ctx: AppContext, service: ExecutionService): void {
  app.post<{ Params: { id: string }; Body: ExecuteBody }>(
    '/api/v1/integrations/:id/execute',
    {
      config: { scope: 'integrations.execute', idempotent: true, swaggerTransform: documentedBody(executeBody(ctx.registry)) },
      schema: {
        tags: ['Execute'],
        security,
        operationId: 'executeIntegration',
        summary: 'Run send, receive, sync, batch or test through the integration’s connector.',
        params: idParams('id'),
        headers: {
          type: 'object',
          properties: {
            'idempotency-key': { type: 'string', minLength: 1, maxLength: 255 },
            prefer: {
              type: 'string',
              description: '`respond-async`: answer `202` at once and run the call on the queue (docs/async.md).',
            },
          },
        },
        body: {
          type: 'object',
          required: ['operation'],
          properties: { operation: { type: 'string', enum: operations } },
          additionalProperties: true,
        },
        // Documents the replies: the handler sends them as text already, and a replayed Idempotency-Key answer is
        // serialized with them.
        response: {
          200: {
            ...reply('ExecuteReply', 'The operation ran; `errors` when GraphQL data came with errors.'),
            headers: answerHeaders,
          },
          202: {
            ...reply('ExecutionAcceptedReply', 'Accepted (`Prefer: respond-async`): the execution is queued.'),
            headers: {
              Location: { type: 'string', description: '`/api/v1/executions/{execution_id}`' },
              'Preference-Applied': { type: 'string', enum: ['respond-async'] },
            },
          },
          ...failures([...tenantFailures, ...bodyFailures, 404, 409, 422, 502, 503, 504], failureMeanings),
        },
      },
    },
    // Not an async function: a synchronous call's frame would be held, suspended, for the whole upstream wait; the
    // callback that answers holds only the request, the reply and the operation.
    (request, reply) => {
      const { tenantId, key, user } = caller(request);
      const { operation, ...fields } = request.body;
      // Known before the execute runs: a refusal before there is an execution (404, 429) is still logged with them.
      request.execution = { integration_id: request.params.id, operation };
      const call = {
        tenantId,
        keyId: key?.id ?? null,
        userId: user?.id ?? null,
        integrationId: request.params.id,
        operation,
        fields,
        requestId: request.id,
        log: request.log,
      };
      if (prefersAsync(request.headers.prefer)) {
        return service.accept(call).then((accepted) => {
          if (!accepted.accepted) return answered(request, reply, operation, accepted.answer);
          request.execution = { integration_id: request.params.id, operation, execution_id: accepted.executionId };
          reply.code(202).headers(acceptedHeaders(accepted.executionId));
          return { success: true, data: { execution_id: accepted.executionId, status: 'queued' } };
        });
      }
      return service.execute(call).then((answer) => answered(request, reply, operation, answer));
    },
  );
}
