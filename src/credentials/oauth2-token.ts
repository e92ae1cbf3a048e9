import { ApiError } from '../core/errors.ts';
import { isJsonObject } from '../core/json-object.ts';
import { redactUrl } from '../transport/upstream.ts';

/** How a client proves itself to the token endpoint (RFC 6749 §2.3.1). */
export type ClientAuthentication = 'client_secret_basic' | 'client_secret_post';

export interface ClientCredentialsGrant {
  tokenUrl: string;
  clientId: string;
  clientSecret: string;
  /** Space-separated scopes, sent as they are. */
  scope?: string;
  /** Not in RFC 6749, but what Auth0 and others ask for to pick the API the token is for. */
  audience?: string;
  clientAuthentication: ClientAuthentication;
}

export interface TokenRequest {
  url: string;
  method: 'POST';
  headers: Record<string, string>;
  body: string;
}

export interface TokenAnswer {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
}

export interface IssuedToken {
  accessToken: string;
  /** Seconds, as the server gave them; undefined when it did not say. */
  expiresIn: number | undefined;
}

/** One value as application/x-www-form-urlencoded writes it (space as `+`), the encoding RFC 6749 Appendix B asks for. */
function formEncode(value: string): string {
  return new URLSearchParams([['', value]]).toString().slice(1);
}

/**
 * The RFC 6749 §4.4.2 token request. With `client_secret_basic`, id and secret are form-encoded before Base64
 * (§2.3.1): a secret holding `:` or non-ASCII characters would otherwise be split or garbled by the server.
 *
 * @example buildTokenRequest({ tokenUrl: 'https://auth.example/token', clientId: 'a', clientSecret: 'b c', clientAuthentication: 'client_secret_basic' }).headers.authorization
 * // 'Basic YTpiK2M='
 */
export function buildTokenRequest(grant: ClientCredentialsGrant): TokenRequest {
  const form = new URLSearchParams({ grant_type: 'client_credentials' });
  if (grant.scope !== undefined && grant.scope !== '') form.set('scope', grant.scope);
  if (grant.audience !== undefined && grant.audience !== '') form.set('audience', grant.audience);
  const headers: Record<string, string> = {
    'content-type': 'application/x-www-form-urlencoded',
    accept: 'application/json',
  };
  if (grant.clientAuthentication === 'client_secret_post') {
    form.set('client_id', grant.clientId);
    form.set('client_secret', grant.clientSecret);
  } else {
    const pair = `${formEncode(grant.clientId)}:${formEncode(grant.clientSecret)}`;
    headers.authorization = `Basic ${Buffer.from(pair).toString('base64')}`;
  }
  return { url: grant.tokenUrl, method: 'POST', headers, body: form.toString() };
}

/** RFC 6749 §5.2's fields are short ASCII; a longer description is cut so an answer cannot flood an error. */
const maxFieldLength = 1024;

/** What an access token may hold to go in a header as `Bearer <token>`: visible ASCII, no spaces (RFC 6750 §2.1). */
const tokenChars = /^[\x21-\x7e]+$/;

function parseJsonObject(body: Buffer): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(body.toString('utf8'));
    return isJsonObject(value) ? value : undefined;
  } catch {
    return undefined;
  }
}

function shortString(value: unknown): string | undefined {
  return typeof value === 'string' ? value.slice(0, maxFieldLength) : undefined;
}

/** The failure of a token request, with the fields docs/errors.md#upstream_auth_failed lists. */
export function authFailed(
  tokenUrl: string,
  message: string,
  fields: { status: number; error?: string; errorDescription?: string },
): ApiError {
  return new ApiError('upstream_auth_failed', message, {
    token_url: redactUrl(tokenUrl),
    upstream_status: fields.status,
    ...(fields.error !== undefined && { error: fields.error }),
    ...(fields.errorDescription !== undefined && { error_description: fields.errorDescription }),
  });
}

/**
 * The token of a token endpoint's answer, read strictly (RFC 6749 §5.1): a JSON object with a string `access_token`,
 * `token_type` Bearer in any case and `expires_in` a number or a numeric string when present. Anything else, and
 * every error answer (§5.2, also one sent with a 2xx), throws `upstream_auth_failed`. Messages never quote the answer:
 * a success answer holds the token.
 */
export function parseTokenAnswer(tokenUrl: string, answer: TokenAnswer): IssuedToken {
  const status = answer.status;
  const json = parseJsonObject(answer.body);
  const error = shortString(json?.error);
  if (status < 200 || status > 299 || error !== undefined) {
    const errorDescription = shortString(json?.error_description);
    const said = error === undefined ? `HTTP ${status}` : `${error}${errorDescription ? ` (${errorDescription})` : ''}`;
    return fail(`The OAuth2 token endpoint refused the client credentials: ${said}.`, { error, errorDescription });
  }
  if (json === undefined) return fail("The OAuth2 token endpoint's answer is not a JSON object.");
  const accessToken = json.access_token;
  if (typeof accessToken !== 'string' || !tokenChars.test(accessToken)) {
    return fail("The OAuth2 token endpoint's answer has no access_token a Bearer header can carry.");
  }
  if (typeof json.token_type !== 'string' || json.token_type.toLowerCase() !== 'bearer') {
    return fail("The OAuth2 token endpoint's answer has a token_type other than Bearer.");
  }
  const expiresIn = readExpiresIn(json.expires_in);
  if (expiresIn === null) return fail("The OAuth2 token endpoint's answer has an expires_in that is not a number of seconds.");
  return { accessToken, expiresIn };

  function fail(message: string, fields: { error?: string; errorDescription?: string } = {}): never {
    throw authFailed(tokenUrl, message, { status, ...fields });
  }
}

/** Seconds, undefined when absent, null when not a non-negative number (some servers send a numeric string). */
function readExpiresIn(value: unknown): number | undefined | null {
  if (value === undefined || value === null) return undefined;
  const seconds = typeof value === 'string' && /^\d+(\.\d+)?$/.test(value.trim()) ? Number(value) : value;
  return typeof seconds === 'number' && Number.isFinite(seconds) && seconds >= 0 ? seconds : null;
}
