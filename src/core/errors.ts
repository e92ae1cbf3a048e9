/** The closed catalogue of error codes of docs/errors.md, each with its status and default message. */
export const errorCatalogue = {
  missing_credentials: [401, 'Send your API key in the X-API-Key header.'],
  invalid_credentials: [401, 'The API key is not valid for this tenant.'],
  expired_credentials: [401, 'The API key has expired.'],
  api_key_in_bearer: [401, 'API keys go in the X-API-Key header, not in Authorization: Bearer.'],
  missing_tenant: [400, 'Send the tenant id in the X-Tenant-ID header.'],
  insufficient_scope: [403, 'The API key lacks the scope this endpoint requires.'],
  scope_escalation: [403, 'A key cannot grant more than it has: scopes, expiry and rate limit.'],
  rate_limited: [429, 'Too many requests; retry after the time in Retry-After.'],
  validation_failed: [400, 'The request is invalid.'],
  invalid_json: [400, 'The request body is not valid JSON.'],
  unsupported_operation: [400, 'This connector does not offer that operation.'],
  not_found: [404, 'Not found.'],
  conflict: [409, 'The request conflicts with the current state.'],
  precondition_failed: [412, 'A precondition (If-Match, If-None-Match) does not hold; nothing was changed.'],
  integration_misconfigured: [422, 'The integration configuration cannot run.'],
  egress_denied: [422, 'The upstream address is refused by the egress policy.'],
  unknown_soap_method: [400, 'The method is not in the WSDL.'],
  ambiguous_soap_method: [400, 'Several overloads of the method fit the params; choose one with `input`.'],
  request_timeout: [408, 'The request did not arrive whole in time.'],
  service_unavailable: [503, 'The service is unavailable; retry after the time in Retry-After.'],
  invalid_soap_params: [400, 'The parameters do not fit the method.'],
  graphql_errors: [502, 'The upstream GraphQL service answered with errors.'],
  graphql_validation_failed: [400, "The GraphQL document does not fit the upstream's schema; nothing was sent."],
  soap_fault: [502, 'The upstream SOAP service answered with a fault.'],
  upstream_http_error: [502, 'The upstream service answered with an HTTP error.'],
  upstream_invalid_response: [502, 'The upstream service answered with an unreadable response.'],
  upstream_response_too_large: [502, 'The upstream response is larger than the limit.'],
  upstream_unreachable: [502, 'The upstream service could not be reached.'],
  upstream_timeout: [504, 'The upstream service did not answer in time.'],
  upstream_outcome_unknown: [
    502,
    'The run was cut short after its request may have reached the upstream; whether the upstream applied it is unknown, and it was not sent again.',
  ],
  upstream_circuit_open: [
    503,
    'Recent calls to this integration failed one after another, so calls fail at once for a while; retry after the time in Retry-After.',
  ],
  upstream_auth_failed: [502, "The upstream's OAuth2 token endpoint refused the client credentials or gave no usable token."],
  idempotency_key_reused: [422, 'This Idempotency-Key was used with a different request.'],
  payload_too_large: [413, 'The request body is too large.'],
  unsupported_media_type: [415, 'Send the request body as application/json.'],
  headers_too_large: [431, 'The request headers are too large.'],
  bad_request: [400, 'The request could not be read.'],
  internal_error: [500, 'Something went wrong on our side.'],
} as const satisfies Record<string, readonly [number, string]>;

export type ErrorCode = keyof typeof errorCatalogue;

export interface ValidationIssue {
  path: string;
  message: string;
}

/** An expected failure: a catalogue code, a human sentence and optional code-specific details. */
/** What a failure may carry beside its details: the upstream's GraphQL errors, and how long to wait before a retry. */
export interface ApiErrorExtra {
  upstreamErrors?: unknown[];
  retryAfterSeconds?: number;
}

export class ApiError extends Error {
  override name = 'ApiError';
  readonly code: ErrorCode;
  readonly status: number;
  readonly details: Record<string, unknown> | undefined;
  /** GraphQL `errors` from upstream: shown at the top level of the failure body (docs/execute.md#graphql-errors). */
  readonly upstreamErrors: unknown[] | undefined;
  /** Sent as the Retry-After header with the failure. */
  readonly retryAfterSeconds: number | undefined;

  constructor(code: ErrorCode, message?: string, details?: Record<string, unknown>, extra: ApiErrorExtra = {}) {
    super(message ?? errorCatalogue[code][1]);
    this.code = code;
    this.status = errorCatalogue[code][0];
    this.details = details;
    this.upstreamErrors = extra.upstreamErrors;
    this.retryAfterSeconds = extra.retryAfterSeconds;
  }

  /**
   * The same failure with `extra` added to its details: the one way a failure is given more to say (a sync's stage,
   * a breaker's state, issue paths under a part). Everything else it carries stays, `Retry-After` and the upstream's
   * GraphQL errors included; `this` is left as it was.
   *
   * @example failure.withDetails({ stage: 'inbound' })
   */
  withDetails(extra: Record<string, unknown>): ApiError {
    const { upstreamErrors, retryAfterSeconds } = this;
    return new ApiError(this.code, this.message, { ...this.details, ...extra }, { upstreamErrors, retryAfterSeconds });
  }
}

/** At most this many issues are listed in one failure (docs/api.md#validation); `details.truncated` says when more were found. */
export const maxListedIssues = 100;

/** The issues to list, and `truncated: true` when there were more than `maxListedIssues`. */
export function listedIssues(issues: ValidationIssue[]): { issues: ValidationIssue[]; truncated?: true } {
  return issues.length > maxListedIssues ? { issues: issues.slice(0, maxListedIssues), truncated: true } : { issues };
}

/** A validation failure that lists every problem found (the first 100 of them). */
export function validationFailed(issues: ValidationIssue[], message?: string): ApiError {
  return new ApiError(
    'validation_failed',
    message ?? (issues.length === 1 ? `${issues[0].path}: ${issues[0].message}` : `${issues.length} fields are invalid.`),
    listedIssues(issues),
  );
}

/** The failure body of docs/api.md#answers (plus top-level `errors` for GraphQL failures). */
export function errorBody(
  code: ErrorCode,
  message: string,
  requestId: string,
  details?: Record<string, unknown>,
  upstreamErrors?: unknown[],
) {
  return {
    success: false as const,
    error: details === undefined ? { code, message } : { code, message, details },
    ...(upstreamErrors && { errors: upstreamErrors }),
    request_id: requestId,
  };
}
