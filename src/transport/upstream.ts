import type { IncomingHttpHeaders } from 'node:http';
import { type Dispatcher, request } from 'undici';
import { ApiError } from '../core/errors.ts';
import { type FailureKind, failureKind, retryAfterMs, retryDecision, statusFailureKind } from '../resilience/retry.ts';
import { watchSending } from '../resilience/sent-tracking.ts';
import { traceUpstream, tracingOn } from '../telemetry/spans.ts';
import { type ReadBody, readUpstreamBody } from './body.ts';
import type { ExecuteBudget } from './budget.ts';
import { upstreamFailure } from './failures.ts';

export interface UpstreamRequest {
  url: string;
  method: 'GET' | 'POST';
  headers: Record<string, string>;
  /** A function is called for each attempt (a WS-Security header is made fresh for each: its nonce may not repeat). */
  body?: string | Buffer | (() => string | Buffer);
  /** One deadline from connect to the last byte of the body. */
  timeoutMs: number;
  /**
   * `performance.now()` after which no try of this request runs, retries included (a WSDL's documents, all within
   * the integration's timeout_seconds); the execute's own deadline applies anyway.
   */
  endsAt?: number;
  /**
   * Whether the request may change something upstream; by default a POST does and a GET does not. `false` for a POST
   * that changes nothing (a GraphQL query, a SOAP receive, an OAuth2 token request): it does not count as a write that
   * may have reached the upstream, and is retried after timeouts, resets, 502 and 504 too (docs/resilience.md). Any
   * other POST counts once it may have been sent, and is tried again only when it surely never left.
   */
  write?: boolean;
  /** Largest body, compressed and decompressed. */
  maxBodyBytes: number;
  /** The execute's budget: the request gets no more time or bytes than the whole call has left, and spends them. */
  budget?: ExecuteBudget;
}

export interface UpstreamResponse {
  status: number;
  /** As received (lower-case names; repeated headers joined with `, `). */
  headers: Record<string, string>;
  /** Decompressed, in one buffer: a large body's segments are joined when this is first read (on the main thread). */
  readonly body: Buffer;
  /** The body's length in bytes, known without joining it. */
  readonly size: number;
  /**
   * The body as read, unjoined: a reader that hands a large body to a worker thread moves its segments there
   * (answer-workers.ts readOffThread) instead of joining them here.
   */
  readonly read: ReadBody;
}

/** The request headers with `accept-encoding: gzip` in place of whatever the caller asked for: gzip is all we decode. */
function withGzip(headers: Record<string, string>): Record<string, string> {
  const result: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (name.toLowerCase() !== 'accept-encoding') result[name] = value;
  }
  result['accept-encoding'] = 'gzip';
  return result;
}

/** What an HTTP field value may hold (RFC 9110: visible ASCII, space, tab, obs-text); undici refuses anything else. */
const fieldValue = /^[\t\x20-\x7e\x80-\xff]*$/;

/**
 * Refuses a header value HTTP cannot carry (a stored token with a control character or a character beyond
 * Latin-1) as the integration's fault, naming the header but never showing the value; undici would throw an
 * uncatalogued InvalidArgumentError, a 500.
 */
function checkHeaderValues(headers: Record<string, string>): void {
  for (const [name, value] of Object.entries(headers)) {
    if (!fieldValue.test(value)) {
      throw new ApiError(
        'integration_misconfigured',
        `The ${name} header cannot be sent: its value holds characters an HTTP header cannot carry; check the integration's configuration.`,
        { header: name.toLowerCase() },
      );
    }
  }
}

/** Headers already checked and given `accept-encoding: gzip`, per frozen header set (a connector's per integration). */
const preparedHeaders = new WeakMap<Readonly<Record<string, string>>, Record<string, string>>();

/**
 * The headers to send: checked (checkHeaderValues) and with gzip asked for (withGzip). A frozen set cannot change
 * after it was checked, so it is prepared once; any other set on every request.
 */
function sendableHeaders(headers: Record<string, string>): Record<string, string> {
  const prepared = preparedHeaders.get(headers);
  if (prepared) return prepared;
  checkHeaderValues(headers);
  const sendable = withGzip(headers);
  if (Object.isFrozen(headers)) preparedHeaders.set(headers, sendable);
  return sendable;
}

function flattenHeaders(headers: IncomingHttpHeaders): Record<string, string> {
  const result: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined) result[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  return result;
}

/**
 * Sends one HTTP request through `dispatcher` (the egress dispatcher) and reads the whole
 * response, gunzipped and capped. Non-2xx statuses are returned, not thrown: the connector
 * decides what they mean. Transport failures are thrown as `ApiError`s with catalogue codes
 * (`egress_denied`, `upstream_timeout`, `upstream_unreachable`, `upstream_invalid_response`,
 * `upstream_response_too_large`).
 *
 * @example
 * const res = await sendUpstream(dispatcher, {
 *   url: 'https://crm.example.com/graphql', method: 'POST',
 *   headers: { 'content-type': 'application/json' }, body: '{"query":"{ ping }"}',
 *   timeoutMs: 30_000, maxBodyBytes: 10 * 1024 * 1024,
 * });
 */
export function sendUpstream(dispatcher: Dispatcher, upstream: UpstreamRequest): Promise<UpstreamResponse> {
  // The integration's circuit breaker is asked before the execute's first request, not before anything it refuses.
  const gate = upstream.budget?.admit();
  return gate ? gate.then(() => attempt(dispatcher, upstream, 1)) : attempt(dispatcher, upstream, 1);
}

/** Whether the request may change something upstream: a POST unless its sender says it does not (`write: false`). */
function isWrite(upstream: UpstreamRequest): boolean {
  return upstream.write ?? upstream.method === 'POST';
}

/** The statuses docs/resilience.md retries (429 and 503 for every request, 502 and 504 for reads). */
function retriedStatus(status: number): boolean {
  return status === 429 || status === 503 || status === 502 || status === 504;
}

/**
 * Try `n` of the request, and the next one when the execute's retry settings say so (docs/resilience.md). Traced, each
 * try is a client span whose context travels in the request's headers (traceparent). The answer is read when this
 * tenant's turn of the event loop comes (FairTurns): thousands landing at once are read in slices, with other
 * callers served in between. Chained callbacks, not an async function: a suspended async function keeps its frame
 * (registers, context) for the whole upstream wait, ~250 bytes per call in flight.
 */
function attempt(dispatcher: Dispatcher, upstream: UpstreamRequest, n: number): Promise<UpstreamResponse> {
  const budget = upstream.budget;
  const retry = budget?.policy.retry;
  const retrying = retry !== undefined && n < retry.maxAttempts;
  // Whether a write's bytes may have left is asked of the transport only when a retry could turn on it.
  const watch = retrying && isWrite(upstream) ? watchSending(dispatcher) : undefined;
  const via = watch?.dispatcher ?? dispatcher;
  const sent = tracingOn() ? traceUpstream(upstream, (headers) => send(via, { ...upstream, headers })) : send(via, upstream);
  return sent.then(
    (response) => {
      if (retrying && retriedStatus(response.status)) {
        const wait = retryAfterMs(response.headers['retry-after'], Date.now());
        const again = retried(dispatcher, upstream, n, statusFailureKind(response.status), false, wait);
        if (again) return again;
      }
      const turn = budget?.takeTurn();
      return turn ? turn.then(() => response) : response;
    },
    (failure: unknown) => {
      const again = retrying ? retried(dispatcher, upstream, n, failureKind(failure), watch?.surelyNotSent ?? false) : undefined;
      if (again) return again;
      throw failure;
    },
  );
}

/** The next try after a failed one, once its wait is over; undefined when retryDecision says it is not tried again. */
function retried(
  dispatcher: Dispatcher,
  upstream: UpstreamRequest,
  n: number,
  kind: FailureKind,
  surelyNotSent: boolean,
  retryAfter?: number,
): Promise<UpstreamResponse> | undefined {
  const budget = upstream.budget;
  const settings = budget?.policy.retry;
  if (budget === undefined || settings === undefined) return undefined;
  const decision = retryDecision({
    kind,
    operationChangesNothing: !isWrite(upstream),
    surelyNotSent,
    attempt: n,
    settings,
    remainingMs: Math.min(budget.remainingMs(), (upstream.endsAt ?? Number.POSITIVE_INFINITY) - performance.now()),
    retryAfterMs: retryAfter,
    random: () => budget.random(),
  });
  if (!decision.retry) return undefined;
  budget.countRetry(kind);
  return budget.sleep(decision.delayMs).then(() => attempt(dispatcher, upstream, n + 1));
}

/**
 * The URL undici is given, without `user:password@` (undici does not turn URL credentials into Basic auth; kept out
 * of what it sees: errors, diagnostics), and its host. Read here, outside `send`, so that the parsed URL is not held
 * in `send`'s suspended frame while the upstream answers.
 */
function upstreamTarget(upstreamUrl: string): { href: string; host: string } {
  const url = URL.parse(upstreamUrl);
  if (url === null || (url.protocol !== 'http:' && url.protocol !== 'https:')) {
    throw new ApiError('integration_misconfigured', 'The upstream URL is not a valid http or https URL.');
  }
  // undici does not turn URL credentials into Basic auth; keep them out of what it sees (errors, diagnostics). Each
  // setter serializes the URL anew: only a URL that has credentials pays for it.
  if (url.username !== '' || url.password !== '') {
    url.username = '';
    url.password = '';
  }
  return { href: url.href, host: url.hostname };
}

async function send(dispatcher: Dispatcher, upstream: UpstreamRequest): Promise<UpstreamResponse> {
  const { href, host } = upstreamTarget(upstream.url);
  const headers = sendableHeaders(upstream.headers);
  // The execute's own deadline and byte budget bound this request when they are the tighter limit.
  const budget = upstream.budget;
  budget?.assertCanSend();
  const executeMs = budget?.remainingMs() ?? Number.POSITIVE_INFINITY;
  const requestMs =
    upstream.endsAt === undefined ? upstream.timeoutMs : Math.min(upstream.timeoutMs, upstream.endsAt - performance.now());
  const timeoutMs = Math.max(1, Math.ceil(Math.min(requestMs, executeMs)));
  const executeBytes = budget?.remainingBytes() ?? Number.POSITIVE_INFINITY;
  const maxBodyBytes = Math.min(upstream.maxBodyBytes, executeBytes);
  const deadline = new AbortController();
  const timer = setTimeout(() => deadline.abort(), timeoutMs);
  const began = performance.now();
  let connected = false;
  try {
    const response = await request(href, {
      dispatcher,
      method: upstream.method,
      headers,
      body: typeof upstream.body === 'function' ? upstream.body() : upstream.body,
      signal: deadline.signal,
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
    });
    connected = true;
    const encoding = String(response.headers['content-encoding'] ?? '').toLowerCase();
    const declaredGzip = encoding === 'gzip' || encoding === 'x-gzip';
    const read = await readUpstreamBody(response.body, declaredGzip, maxBodyBytes);
    budget?.spend(read.size);
    return {
      status: response.statusCode,
      headers: flattenHeaders(response.headers),
      size: read.size,
      read,
      get body() {
        return read.whole;
      },
    };
  } catch (err) {
    if (err instanceof ApiError) {
      if (budget && err.code === 'upstream_response_too_large' && executeBytes < upstream.maxBodyBytes) throw budget.exhaust();
      throw err;
    }
    const failure = upstreamFailure(err, { host, timeoutMs, timedOut: deadline.signal.aborted });
    connected ||= mayHaveArrived(failure);
    if (budget && executeMs < requestMs && failure instanceof ApiError && failure.code === 'upstream_timeout') {
      throw budget.timedOut();
    }
    throw failure;
  } finally {
    clearTimeout(timer);
    if (budget) budget.stats.upstreamMs += performance.now() - began;
    // A POST counts once it may have reached the upstream (it may have changed something there): not when the
    // egress policy, DNS or a refused connection stopped it before a byte left.
    if (budget && connected && upstream.method === 'POST' && upstream.write !== false) budget.stats.posts += 1;
  }
}

/** Whether a failed request may have reached the upstream: everything but what fails before a connection exists. */
function mayHaveArrived(failure: unknown): boolean {
  if (!(failure instanceof ApiError)) return true;
  if (failure.code === 'egress_denied' || failure.code === 'integration_misconfigured') return false;
  const cause = failure.details?.cause;
  return !(
    failure.code === 'upstream_unreachable' &&
    (cause === 'dns' || cause === 'refused' || cause === 'tls' || cause === 'proxy')
  );
}

/**
 * The URL without `user:password@`, for display and logs.
 *
 * @example
 * redactUrl('https://bob:s3cret@h.example/api?x=1'); // 'https://h.example/api?x=1'
 */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    parsed.username = '';
    parsed.password = '';
    return parsed.toString();
  } catch {
    // Not a URL the parser accepts: drop anything up to the last `@` of the authority.
    return url.replace(/^([a-z][a-z0-9+.-]*:\/\/)[^/?#]*@/i, '$1');
  }
}
