import { randomUUID } from 'node:crypto';
import { type IncomingMessage, STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError, type ErrorCode, errorBody, errorCatalogue, validationFailed } from '../core/errors.ts';
import { toIssues } from '../core/validation.ts';
import { isStorageUnavailable, storageUnavailable } from '../storage/availability.ts';

export const wwwAuthenticate = 'ApiKey realm="interchange", header="X-API-Key"';

/** Longest path parameter the router reads (ids are at most 128 characters; longer ones get a proper issue). */
export const maxParamLength = 2048;

// Fastify's own errors that callers can cause, mapped to the catalogue.
const fastifyCodes: Record<string, ErrorCode> = {
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 'unsupported_media_type',
  FST_ERR_CTP_BODY_TOO_LARGE: 'payload_too_large',
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: 'bad_request',
  FST_ERR_CTP_EMPTY_JSON_BODY: 'invalid_json',
  FST_ERR_CTP_INVALID_JSON_BODY: 'invalid_json',
  FST_ERR_BAD_URL: 'bad_request',
  FST_ERR_ASYNC_CONSTRAINT: 'bad_request',
};

/**
 * Turns any thrown value into a catalogue error: storage that cannot be used now is `503 service_unavailable` (reason
 * `storage`, with Retry-After); undefined for an unknown error, which the caller answers as a bare internal_error.
 */
export function toApiError(error: unknown): ApiError | undefined {
  if (error instanceof ApiError) return error;
  if (isStorageUnavailable(error)) return storageUnavailable();
  const e = error as FastifyError;
  if (e?.validation) return validationFailed(toIssues(e.validation as never));
  if (e?.code === 'FST_ERR_MAX_PARAM_LENGTH') {
    return validationFailed([{ path: '(path)', message: `a path segment is longer than ${maxParamLength} characters` }]);
  }
  const code = e?.code ? fastifyCodes[e.code] : undefined;
  if (code) return new ApiError(code);
  if (typeof e?.statusCode === 'number' && e.statusCode >= 400 && e.statusCode < 500) {
    return new ApiError(e.statusCode === 404 ? 'not_found' : 'bad_request');
  }
  return undefined;
}

/** Errors Fastify raises before routing (a malformed percent-encoding, an over-long path segment). */
export function frameworkErrors(error: unknown, request: FastifyRequest, reply: FastifyReply): void {
  reply.header('x-request-id', request.id);
  sendError(reply, toApiError(error) ?? new ApiError('bad_request'));
}

/** Sends a catalogue error in the contract's shape, and notes its code (and a 429's reason) for the request's log line. */
export function sendError(reply: FastifyReply, error: ApiError): FastifyReply {
  const request = reply.request;
  request.errorCode = error.code;
  if (error.code === 'rate_limited' && request.refusal === null) {
    request.refusal = typeof error.details?.reason === 'string' ? error.details.reason : 'rate_limit';
  }
  if (error.status === 401) reply.header('www-authenticate', wwwAuthenticate);
  if (error.retryAfterSeconds !== undefined) reply.header('retry-after', String(error.retryAfterSeconds));
  return reply
    .code(error.status)
    .send(errorBody(error.code, error.message, reply.request.id, error.details, error.upstreamErrors));
}

/**
 * One error handler: our errors as they are, framework errors mapped, unknown errors never shown. A storage error is
 * told to `storageFailed` (the instance's StorageHealth) before it is answered 503.
 */
export function registerErrorHandling(app: FastifyInstance, options: { storageFailed?: (error: unknown) => void } = {}): void {
  app.setErrorHandler((error: unknown, request: FastifyRequest, reply: FastifyReply) => {
    // Logged once by the health when storage goes away, not for each request it refuses (their log lines say 503).
    if (isStorageUnavailable(error)) options.storageFailed?.(error);
    const known = toApiError(error);
    if (known) return sendError(reply, known);
    request.log.error({ err: error }, 'unhandled error');
    return sendError(reply, new ApiError('internal_error'));
  });

  app.setNotFoundHandler((request, reply) =>
    sendError(reply, new ApiError('not_found', `No route ${request.method} ${request.url.split('?')[0]}.`)),
  );
}

/**
 * What Node's HTTP parser refuses never reaches Fastify: answer it here in the contract's shape
 * (431 for oversized headers, 408 for a request that did not arrive whole in time, 400 otherwise)
 * rather than Node's bare status line, and close the connection.
 */
export function clientErrorHandler(this: unknown, error: NodeJS.ErrnoException, socket: Socket): void {
  if (error.code === 'ECONNRESET' || socket.destroyed || !socket.writable) {
    socket.destroy();
    return;
  }
  const code: ErrorCode =
    error.code === 'HPE_HEADER_OVERFLOW'
      ? 'headers_too_large'
      : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? 'request_timeout'
        : 'bad_request';
  writeRawError(socket, code);
}

/**
 * CONNECT asks for a tunnel; Node hands it to a 'connect' listener, or drops the connection without a word when
 * there is none. This is no proxy: answer 404 in the contract's shape, as for any route that does not exist.
 */
export function answerConnect(request: IncomingMessage, socket: Duplex): void {
  socket.on('error', () => socket.destroy());
  writeRawError(socket, 'not_found', `No route CONNECT ${String(request.url).split('?')[0]}.`);
}

/** An error answer written straight to a socket Fastify never saw, then the connection closed. */
function writeRawError(socket: Duplex, code: ErrorCode, message?: string): void {
  const [status, defaultMessage] = errorCatalogue[code];
  const requestId = randomUUID();
  const body = JSON.stringify(errorBody(code, message ?? defaultMessage, requestId));
  const reason = STATUS_CODES[status] ?? 'Error';
  socket.end(
    `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json; charset=utf-8\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\nX-Request-Id: ${requestId}\r\nConnection: close\r\n\r\n${body}`,
  );
}
