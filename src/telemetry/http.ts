import type { Context, Span } from '@opentelemetry/api';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { runningTracing, startTracing, stopTracing } from './tracing.ts';

/**
 * Traces when the environment asks for them (src/telemetry/tracing.ts): starts the SDK, shuts it down (exporting
 * what is queued) when the app closes, and gives every request a SERVER span `<METHOD> <route>` that continues an
 * incoming `traceparent`. The handler runs with the span active, so the execute's span is its child. Without
 * OTEL_EXPORTER_OTLP_ENDPOINT, no hook is added and nothing is loaded.
 *
 * @example
 * await registerTracing(app); // before the routes
 */
export async function registerTracing(app: FastifyInstance): Promise<void> {
  if (!(await startTracing())) return;
  const { api, tracer } = runningTracing()!;
  app.addHook('onClose', () => stopTracing());

  /** Each request's span, and the context its handler runs in (the incoming trace context with the span set). */
  const spans = new WeakMap<FastifyRequest, { span: Span; context: Context }>();
  const end = (request: FastifyRequest, status: number | undefined) => {
    const span = spans.get(request)?.span;
    if (!span) return;
    spans.delete(request);
    if (status !== undefined) {
      span.setAttribute('http.response.status_code', status);
      if (status >= 500) span.setStatus({ code: api.SpanStatusCode.ERROR });
    }
    if (request.auth) span.setAttribute('interchange.tenant_id', request.auth.tenantId);
    span.end();
  };

  // Hooks run in the order added: this file's before the auth, idempotency and route hooks (registered later).
  app.addHook('onRequest', (request, _reply, done) => {
    const route = request.routeOptions.url;
    const parent = api.propagation.extract(api.ROOT_CONTEXT, request.headers);
    const span = tracer.startSpan(
      route ? `${request.method} ${route}` : request.method,
      { kind: api.SpanKind.SERVER, attributes: { 'http.request.method': request.method, ...(route && { 'http.route': route }) } },
      parent,
    );
    spans.set(request, { span, context: api.trace.setSpan(parent, span) });
    done();
  });
  // The body has been read by now (its stream events carry no context): the handler, and the hooks after this one,
  // run inside the request's span.
  app.addHook('preHandler', (request, _reply, done) => {
    const traced = spans.get(request);
    if (!traced) return done();
    api.context.with(traced.context, done);
  });
  app.addHook('onResponse', (request, reply, done) => {
    end(request, reply.statusCode);
    done();
  });
  app.addHook('onRequestAbort', (request, done) => {
    end(request, undefined);
    done();
  });
}
