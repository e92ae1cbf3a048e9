import { ApiError } from '../core/errors.ts';
import { redactUrl } from '../transport/upstream.ts';
import {
  buildTokenRequest,
  type ClientAuthentication,
  type ClientCredentialsGrant,
  type IssuedToken,
  parseTokenAnswer,
  type TokenAnswer,
  type TokenRequest,
} from './oauth2-token.ts';

export type { ClientAuthentication, TokenAnswer, TokenRequest };

/**
 * Sends the token request. The caller binds it to the integration's dispatcher (egress policy, TLS settings), its
 * timeout and the execute's budget, as for every upstream request: `(request) => sendUpstream(dispatcher, {...})`.
 */
export type SendTokenRequest = (request: TokenRequest) => Promise<TokenAnswer>;

/** Where a request gets its `Authorization` value, and where it says that value was refused. */
export interface BearerSource {
  /** `Bearer <access token>`. */
  authorization(): Promise<string>;
  /** The upstream answered 401 to `authorization`: do not hand it out again. */
  refused(authorization: string): void;
}

export interface OAuth2ClientCredentialsOptions extends ClientCredentialsGrant {
  /** Milliseconds on a monotonic clock; `performance.now` unless a test injects one. */
  now?: () => number;
}

interface CachedToken {
  authorization: string;
  /** On the `now()` clock: from then on the token is fetched anew. */
  renewAt: number;
}

/** How long a token whose answer has no `expires_in` is used (RFC 6749 leaves it to documentation we cannot read). */
export const defaultTokenLifetimeMs = 5 * 60_000;
/** A token is fetched anew this long before it expires, so a request never leaves with one about to lapse. */
export const renewBeforeExpiryMs = 60_000;

/**
 * When to fetch anew, measured from when the request was sent (the token was issued later, never earlier): 60 s before
 * it expires, whatever its lifetime, so no request leaves with a token in its last minute (a token living a minute or
 * less is fetched for every call). A token without `expires_in` lives its assumed 5 minutes whole: there is no known
 * expiry to keep a margin from, and a 401 before then is handled by `withFreshTokenOnce`.
 */
function renewAt(sentAt: number, expiresIn: number | undefined): number {
  if (expiresIn === undefined) return sentAt + defaultTokenLifetimeMs;
  return sentAt + expiresIn * 1000 - renewBeforeExpiryMs;
}

/** An error the execute's own budget raised (its deadline, its bytes): about that execute, not the token endpoint. */
function isExecuteScoped(err: unknown): boolean {
  return err instanceof ApiError && err.details?.scope === 'execute';
}

/**
 * A transport failure of the token request keeps its code (`upstream_unreachable`, `upstream_timeout`, `egress_denied`,
 * …): the code tells what happened and what to do (a 504 may be retried, a 422 needs the policy or config changed),
 * which `upstream_auth_failed`, meaning the endpoint answered and said no, would hide. The message says it was the
 * token endpoint and `details.token_url` names it. A failure of the whole execute's budget is left as it is.
 */
function fromTokenEndpoint(err: unknown, tokenUrl: string): unknown {
  if (!(err instanceof ApiError) || isExecuteScoped(err) || err.code === 'upstream_auth_failed') return err;
  return new ApiError(err.code, `Getting an OAuth2 access token failed: ${err.message}`, {
    ...err.details,
    token_url: redactUrl(tokenUrl),
  });
}

/**
 * OAuth2 client credentials (RFC 6749 §4.4) for one version of one integration: the access token is fetched on first
 * use, shared by concurrent callers (one token request), and reused until 60 s before it expires. The token lives only
 * in a private field: never logged, never in an error.
 *
 * @example
 * const oauth2 = new OAuth2ClientCredentials({ tokenUrl, clientId, clientSecret, clientAuthentication: 'client_secret_basic' });
 * const send = (request) => sendUpstream(dispatcher, { ...request, timeoutMs, maxBodyBytes, budget });
 * const answer = await withFreshTokenOnce(oauth2.boundTo(send), (authorization) =>
 *   sendUpstream(dispatcher, { url, method: 'POST', headers: { authorization, ...headers }, body, timeoutMs, maxBodyBytes, budget }),
 * );
 */
export class OAuth2ClientCredentials {
  readonly #grant: ClientCredentialsGrant;
  readonly #now: () => number;
  #token: CachedToken | undefined;
  #flight: Promise<CachedToken> | undefined;

  constructor(options: OAuth2ClientCredentialsOptions) {
    const url = URL.parse(options.tokenUrl);
    if (url === null || (url.protocol !== 'http:' && url.protocol !== 'https:')) {
      throw new ApiError('integration_misconfigured', 'The OAuth2 token_url is not a valid http or https URL.');
    }
    if (options.clientAuthentication !== 'client_secret_basic' && options.clientAuthentication !== 'client_secret_post') {
      throw new ApiError('integration_misconfigured', 'The OAuth2 client_authentication is not one this service offers.');
    }
    const { now, ...grant } = options;
    this.#grant = Object.freeze(grant);
    this.#now = now ?? (() => performance.now());
  }

  /**
   * `Bearer <access token>`: the cached one while it is fresh, else the one the request in flight will bring, else one
   * fetched now with `send`. A failed request is not remembered: the next call tries again.
   */
  async authorization(send: SendTokenRequest): Promise<string> {
    const cached = this.#token;
    if (cached !== undefined && this.#now() < cached.renewAt) return cached.authorization;
    const joined = this.#flight;
    try {
      return (await (joined ?? this.#fetch(send))).authorization;
    } catch (err) {
      // The request joined was bound to another execute, whose deadline or bytes ran out: that says nothing of this
      // one, which tries once with its own budget.
      if (joined === undefined || !isExecuteScoped(err)) throw err;
      return (await (this.#flight ?? this.#fetch(send))).authorization;
    }
  }

  /** After an upstream 401: the refused value is fetched anew, unless another caller already replaced it. */
  refused(authorization: string): void {
    if (this.#token?.authorization === authorization) this.#token = undefined;
  }

  /** This source with `send` bound: what one execute hands to its requests and to `withFreshTokenOnce`. */
  boundTo(send: SendTokenRequest): BearerSource {
    return {
      authorization: () => this.authorization(send),
      refused: (authorization) => this.refused(authorization),
    };
  }

  #fetch(send: SendTokenRequest): Promise<CachedToken> {
    const flight = this.#request(send);
    this.#flight = flight;
    // Cleared once settled, whether it brought a token or failed; callers see the outcome through `flight` itself.
    flight.then(
      () => this.#settled(flight),
      () => this.#settled(flight),
    );
    return flight;
  }

  #settled(flight: Promise<CachedToken>): void {
    if (this.#flight === flight) this.#flight = undefined;
  }

  async #request(send: SendTokenRequest): Promise<CachedToken> {
    const grant = this.#grant;
    const sentAt = this.#now();
    let issued: IssuedToken;
    try {
      issued = parseTokenAnswer(grant.tokenUrl, await send(buildTokenRequest(grant)));
    } catch (err) {
      throw fromTokenEndpoint(err, grant.tokenUrl);
    }
    const token = { authorization: `Bearer ${issued.accessToken}`, renewAt: renewAt(sentAt, issued.expiresIn) };
    this.#token = token;
    return token;
  }
}

/**
 * Runs `call` with the source's authorization; when the upstream answers 401, tells the source the value was refused
 * and runs `call` once more with a fresh one. A 401 means the request was refused, so nothing ran and resending cannot
 * do anything twice. Never more than two calls: a second 401 goes back to the caller. When the fresh value is the
 * refused one (a token endpoint that hands out the same token until it expires), the first 401 is returned at once.
 *
 * @example const answer = await withFreshTokenOnce(oauth2.boundTo(send), (authorization) => sendUpstream(dispatcher, { ...request, headers: { ...headers, authorization } }));
 */
export async function withFreshTokenOnce<R extends { status: number }>(
  source: BearerSource,
  call: (authorization: string) => Promise<R>,
): Promise<R> {
  const first = await source.authorization();
  const answer = await call(first);
  if (answer.status !== 401) return answer;
  source.refused(first);
  const fresh = await source.authorization();
  return fresh === first ? answer : call(fresh);
}
