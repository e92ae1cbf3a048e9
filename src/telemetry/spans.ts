import type { Attributes, Span } from '@opentelemetry/api';
import { ApiError } from '../core/errors.ts';
import { type RunningTracing, runningTracing } from './tracing.ts';

/**
 * Whether spans are being recorded. Traced paths check it before building anything for a span, so that with tracing
 * off they cost this call and nothing more.
 *
 * @example
 * return tracingOn() ? traceExecute(call, () => run(call)) : run(call);
 */
export function tracingOn(): boolean {
  return runningTracing() !== undefined;
}

/** The catalogue code of a failure, or the thrown value's name for anything else (a bug). */
function errorCode(thrown: unknown): string {
  if (thrown instanceof ApiError) return thrown.code;
  return thrown instanceof Error ? thrown.name : 'unknown';
}

/** Marks a span failed with `code` (a catalogue code, or an HTTP status for an upstream's answer). */
function markFailed(tracing: RunningTracing, span: Span, code: string): void {
  span.setAttribute('error.type', code);
  span.setAttribute('interchange.error_code', code);
  span.setStatus({ code: tracing.api.SpanStatusCode.ERROR, message: code });
}

/** Runs `run` in a new active INTERNAL span that ends when it settles; a throw marks the span failed with its code. */
function inActiveSpan<T>(
  tracing: RunningTracing,
  name: string,
  attributes: Attributes,
  run: (span: Span) => Promise<T>,
): Promise<T> {
  return tracing.tracer.startActiveSpan(name, { kind: tracing.api.SpanKind.INTERNAL, attributes }, async (span) => {
    try {
      return await run(span);
    } catch (thrown) {
      markFailed(tracing, span, errorCode(thrown));
      throw thrown;
    } finally {
      span.end();
    }
  });
}

/** What an execute's answer may tell its span: the connector that ran it and the error code it answered. */
interface ExecuteOutcome {
  connector?: string;
  errorCode?: string | null;
}

/**
 * Runs one execute in an INTERNAL span `execute <operation>`, child of the request's span; `run` runs inside it, so
 * the upstream and WSDL spans are its children. The answer's connector and error code (a failed execute is answered,
 * not thrown) go on the span, as does the code of a refusal thrown before an execution exists.
 */
export function traceExecute<T extends ExecuteOutcome>(
  call: { tenantId: string; integrationId: string; operation: string },
  run: () => Promise<T>,
): Promise<T> {
  const tracing = runningTracing();
  if (!tracing) return run();
  const attributes = {
    'interchange.tenant_id': call.tenantId,
    'interchange.integration_id': call.integrationId,
    'interchange.operation': call.operation,
  };
  return inActiveSpan(tracing, `execute ${call.operation}`, attributes, async (span) => {
    const answer = await run();
    if (answer.connector !== undefined) span.setAttribute('interchange.connector', answer.connector);
    if (answer.errorCode) markFailed(tracing, span, answer.errorCode);
    return answer;
  });
}

/** The URL as a span shows it: no credentials, no query or fragment (either may hold a secret). */
function spanUrl(url: URL): string {
  return `${url.protocol}//${url.host}${url.pathname}`;
}

/**
 * Sends one upstream request in a CLIENT span, child of the active span, with its W3C trace context (`traceparent`,
 * `tracestate`) added to a copy of the headers; the span carries the method, the URL, the answer's status and, on
 * failure, the error code (an HTTP status of 400 or more counts as a failure).
 */
export async function traceUpstream<R extends { status: number }>(
  request: { url: string; method: string; headers: Record<string, string> },
  send: (headers: Record<string, string>) => Promise<R>,
): Promise<R> {
  const tracing = runningTracing();
  if (!tracing) return send(request.headers);
  const { api, tracer } = tracing;
  const url = URL.parse(request.url);
  const attributes: Attributes = { 'http.request.method': request.method };
  if (url) {
    attributes['url.full'] = spanUrl(url);
    attributes['server.address'] = url.hostname;
  }
  const span = tracer.startSpan(request.method, { kind: api.SpanKind.CLIENT, attributes });
  const headers = { ...request.headers };
  api.propagation.inject(api.trace.setSpan(api.context.active(), span), headers);
  try {
    const response = await send(headers);
    span.setAttribute('http.response.status_code', response.status);
    if (response.status >= 400) markFailed(tracing, span, String(response.status));
    return response;
  } catch (thrown) {
    markFailed(tracing, span, errorCode(thrown));
    throw thrown;
  } finally {
    span.end();
  }
}

/**
 * Gets a WSDL in an INTERNAL span `wsdl load` with its URL (no credentials, query values dropped) and whether the
 * cache had it (`cache.loads` counts the loads it starts); the fetches of a miss are the span's children.
 */
export function traceWsdlLoad<T>(url: string, cache: { readonly loads: number }, load: () => Promise<T>): Promise<T> {
  const tracing = runningTracing();
  if (!tracing) return load();
  return inActiveSpan(tracing, 'wsdl load', { 'interchange.wsdl.url': wsdlUrl(url) }, (span) => {
    const loadsBefore = cache.loads;
    const loaded = load();
    span.setAttribute('interchange.wsdl.cache', cache.loads > loadsBefore ? 'miss' : 'hit');
    return loaded;
  });
}

/** A WSDL URL without credentials and with its query's values dropped (`?wsdl` stays, `?token=…` loses the token). */
function wsdlUrl(url: string): string {
  const parsed = URL.parse(url);
  if (!parsed) return '(not a URL)';
  const keys = [...parsed.searchParams.keys()];
  return spanUrl(parsed) + (keys.length > 0 ? `?${keys.map(encodeURIComponent).join('&')}` : '');
}
