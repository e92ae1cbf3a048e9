import { ApiError } from '../core/errors.ts';
import { EgressDeniedError } from '../egress/dispatcher.ts';
import { ProxyTunnelError } from '../egress/tunnel.ts';
import { tlsFailureMessage } from './tls-failures.ts';

export type UnreachableCause = 'dns' | 'refused' | 'reset' | 'tls' | 'network' | 'proxy';

interface FailureContext {
  /** The URL's host, for messages (never the URL: it may carry credentials). */
  host: string;
  timeoutMs: number;
  /** The request's own deadline fired. */
  timedOut: boolean;
}

const DNS_CODES = new Set(['ENOTFOUND', 'EAI_AGAIN', 'EAI_FAIL', 'EAI_NODATA', 'EAI_NONAME']);
const RESET_CODES = new Set(['ECONNRESET', 'EPIPE', 'ECONNABORTED', 'UND_ERR_SOCKET', 'ERR_STREAM_PREMATURE_CLOSE']);
const TIMEOUT_CODES = new Set(['UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT']);
/** Failures of the HTTP framing itself: the upstream answered, but not readable HTTP. */
const INVALID_RESPONSE_CODES = new Set(['UND_ERR_HEADERS_OVERFLOW', 'UND_ERR_RES_CONTENT_LENGTH_MISMATCH']);
const TLS_CODE =
  /^(ERR_TLS_|ERR_SSL_|ERR_OSSL_|CERT_|UNABLE_TO_|DEPTH_ZERO_SELF_SIGNED_CERT|SELF_SIGNED_CERT_IN_CHAIN|HOSTNAME_MISMATCH|EPROTO$)/;
/** Network-level failures not named above: system errors (`EHOSTUNREACH`, …) and undici's (`UND_ERR_CONNECT_TIMEOUT`, …). */
const NETWORK_CODE = /^(E[A-Z]+|UND_ERR_CONNECT_TIMEOUT)$/;

/** The error and its causes, outermost first (undici and AggregateError nest the real failure). */
function* chain(err: unknown): Generator<unknown> {
  const seen = new Set<unknown>();
  let current = err;
  while (current instanceof Error && !seen.has(current)) {
    seen.add(current);
    yield current;
    current = current.cause ?? (current instanceof AggregateError ? current.errors[0] : undefined);
  }
}

function firstCode(err: unknown): string | undefined {
  for (const link of chain(err)) {
    const code = (link as { code?: unknown }).code;
    if (typeof code === 'string') return code;
  }
  return undefined;
}

function unreachableCause(code: string): Exclude<UnreachableCause, 'proxy'> | undefined {
  if (DNS_CODES.has(code)) return 'dns';
  if (code === 'ECONNREFUSED') return 'refused';
  if (RESET_CODES.has(code)) return 'reset';
  if (TLS_CODE.test(code)) return 'tls';
  if (NETWORK_CODE.test(code)) return 'network';
  return undefined;
}

/** `proxy` is not named by an error code: it comes from a ProxyTunnelError, with its own message. */
const UNREACHABLE_MESSAGES: Record<Exclude<UnreachableCause, 'proxy'>, (host: string, code: string) => string> = {
  dns: (host) => `The host ${host} could not be resolved.`,
  refused: (host) => `${host} refused the connection.`,
  reset: (host) => `${host} closed the connection before the response was complete.`,
  tls: tlsFailureMessage,
  network: (host, code) => `${host} could not be reached (${code}).`,
};

/** A TLS failure's own code: undici may wrap it in an error of its own with another code (UND_ERR_SOCKET). */
function firstTlsCode(err: unknown): string | undefined {
  for (const link of chain(err)) {
    const code = (link as { code?: unknown }).code;
    if (typeof code === 'string' && TLS_CODE.test(code) && code !== 'EPROTO') return code;
  }
  return undefined;
}

/**
 * The catalogue error for a failed upstream exchange, or the error itself when it is not an
 * upstream failure (a bug, an invalid argument): the caller rethrows it as a 500.
 */
export function upstreamFailure(err: unknown, context: FailureContext): unknown {
  for (const link of chain(err)) {
    if (link instanceof EgressDeniedError) {
      return new ApiError('egress_denied', `Connecting to ${link.host} is refused by the egress policy: ${link.reason}.`, {
        host: link.host,
        address: link.address,
      });
    }
    if (link instanceof ProxyTunnelError) {
      // The proxy is the operator's infrastructure: its address stays out of answers a tenant reads.
      return new ApiError('upstream_unreachable', `${link.message} ${context.host} was not reached.`, {
        cause: 'proxy',
        ...(link.status === undefined ? {} : { proxy_status: link.status }),
      });
    }
  }
  const code = firstCode(err);
  if (context.timedOut || (code !== undefined && TIMEOUT_CODES.has(code))) {
    const seconds = context.timeoutMs / 1000;
    return new ApiError('upstream_timeout', `${context.host} did not answer within ${seconds} s.`, { timeout_seconds: seconds });
  }
  // Matched by name: undici's HTTPParserError carries an `HPE_` code only for some parser failures.
  const parserError = [...chain(err)].some((link) => (link as Error).name === 'HTTPParserError');
  if (parserError || (code !== undefined && INVALID_RESPONSE_CODES.has(code))) {
    return new ApiError('upstream_invalid_response', `${context.host} answered with a response that is not valid HTTP.`);
  }
  const tlsCode = firstTlsCode(err);
  if (tlsCode !== undefined) {
    return new ApiError('upstream_unreachable', tlsFailureMessage(context.host, tlsCode), { cause: 'tls', tls_error: tlsCode });
  }
  if (code === undefined) return err;
  const cause = unreachableCause(code);
  if (cause === undefined) return err;
  const details = cause === 'tls' ? { cause, tls_error: code } : { cause };
  return new ApiError('upstream_unreachable', UNREACHABLE_MESSAGES[cause](context.host, code), details);
}
