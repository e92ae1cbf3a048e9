import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { levelValues } from './request-logger.ts';

/** What an execute adds to its request's log line and metrics (the execute route fills it in). */
export interface ExecutionFacts {
  integration_id: string;
  operation: string;
  execution_id?: string;
  connector?: string;
  /** Milliseconds spent on upstream requests. */
  upstream_ms?: number;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** The catalogue code this request was answered with, when it failed (set where errors are sent). */
    errorCode: string | null;
    /**
     * Why a 429 refused it: `rate_limit` (the key's limit), `auth_failures` (the IP guard), `concurrency`, or for a
     * sign-in `account_lockout` or `sign_in_busy` (the password queue).
     */
    refusal: string | null;
    /** Set on execute requests. */
    execution: ExecutionFacts | null;
  }
  interface FastifyContextConfig {
    /**
     * The level of the route's request line when its answer is no failure (below 400): `debug` for what a browser
     * fetches by the dozen and nobody reads, the console's static files. A failure's level is levelOf's, as anywhere.
     */
    requestLogLevel?: 'debug';
  }
}

/** Upstream failures: the gateway worked, someone else's system did not. Logged at `warn`, not as our `error`. */
const upstreamCodes = new Set([
  'graphql_errors',
  'soap_fault',
  'upstream_http_error',
  'upstream_invalid_response',
  'upstream_response_too_large',
  'upstream_unreachable',
  'upstream_timeout',
  'upstream_auth_failed',
]);

/** 5xx answers that are no failure of ours: the instance says it is shutting down or not ready, as designed. */
const expectedUnavailable = new Set(['service_unavailable']);

/**
 * `error` for our own failures (a 500, or any other 5xx we did not mean), `warn` for an upstream's, `info` for a 4xx
 * and a 503 while the instance shuts down; an answer below 400 at `succeeded` (`info` unless the route says `debug`).
 */
export function levelOf(
  status: number,
  errorCode: string | null,
  succeeded: 'info' | 'debug' = 'info',
): 'error' | 'warn' | 'info' | 'debug' {
  if (errorCode !== null && upstreamCodes.has(errorCode)) return 'warn';
  if (errorCode !== null && expectedUnavailable.has(errorCode)) return 'info';
  if (status >= 500) return 'error';
  if (status >= 400) return 'info';
  return succeeded;
}

function lineOf(request: FastifyRequest, reply: FastifyReply, route: string | undefined): Record<string, unknown> {
  const auth = request.auth;
  // No request_id here: the request's logger has it bound (logController's requestIdLogLabel, app.ts), on this line
  // and on every other line written under the request.
  return {
    method: request.method,
    // The route pattern, never the URL: a query string can hold what a caller should not find in logs.
    route: route ?? null,
    status: reply.statusCode,
    duration_ms: Math.round(reply.elapsedTime * 10) / 10,
    tenant_id: auth?.tenantId ?? null,
    key_id: auth?.key?.id ?? null,
    user_id: auth?.user?.id ?? null,
    error_code: request.errorCode,
    ...(request.refusal !== null && { refusal: request.refusal }),
    ...(request.execution && {
      ...request.execution,
      ...(request.execution.upstream_ms !== undefined && { upstream_ms: Math.round(request.execution.upstream_ms * 10) / 10 }),
    }),
  };
}

/**
 * One log line per request, when its answer has gone: request id, method, route, status, time, tenant and key, the
 * error code; for an execute also integration, connector, operation, execution id and upstream time. In place of
 * Fastify's two lines (incoming, completed), which named none of these (`disableRequestLogging` in app.ts). A route
 * whose config has `requestLogLevel: 'debug'` (the console's static files) writes its successes at `debug`.
 *
 * @example
 * {"level":40,"request_id":"…","method":"POST","route":"/api/v1/integrations/:id/execute","status":502,
 *  "duration_ms":12.3,"tenant_id":"acme","key_id":"key_…","error_code":"upstream_http_error","integration_id":"crm",
 *  "operation":"receive","execution_id":"exe_…","connector":"graphql-1.0.0","upstream_ms":10.9,
 *  "msg":"POST /api/v1/integrations/:id/execute 502 upstream_http_error"}
 */
export function registerRequestLog(app: FastifyInstance): void {
  app.decorateRequest('errorCode', null);
  app.decorateRequest('refusal', null);
  app.decorateRequest('execution', null);
  // The level is the app's for its whole life: a logger that writes nothing (silent) gets no hook at all.
  if ((levelValues[app.log.level] ?? 0) > levelValues.error) return;
  app.addHook('onResponse', (request, reply, done) => {
    const writes = levelValues[request.log.level] ?? 0;
    // A route's requestLogLevel can only lower a line's level: its options are read only for a line written otherwise.
    if (writes <= levelValues[levelOf(reply.statusCode, request.errorCode)]) {
      const options = request.routeOptions;
      const level = levelOf(reply.statusCode, request.errorCode, options.config?.requestLogLevel);
      if (writes <= levelValues[level]) {
        const route = options.url ?? request.url.split('?')[0];
        const message = `${request.method} ${route} ${reply.statusCode}${request.errorCode ? ` ${request.errorCode}` : ''}`;
        request.log[level](lineOf(request, reply, options.url), message);
      }
    }
    done();
  });
}
