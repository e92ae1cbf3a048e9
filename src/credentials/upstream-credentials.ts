import type { Dispatcher } from 'undici';
import type { ResolvedIntegration } from '../integrations/resolved-integration.ts';
import type { ExecuteBudget } from '../transport/budget.ts';
import { sendUpstream, type UpstreamRequest, type UpstreamResponse } from '../transport/upstream.ts';
import { credentialsMayGoTo } from './destinations.ts';
import { type BearerSource, OAuth2ClientCredentials, withFreshTokenOnce } from './oauth2.ts';
import { oauth2Scheme } from './oauth2-scheme.ts';
import type { OAuth2Sources } from './oauth2-sources.ts';
import { authHeaders } from './schemes.ts';

/**
 * An integration's credentials for one execute, as every request it makes applies them: only to the origins its owner
 * configured (destinations.ts), static headers as they are, an OAuth2 access token fetched (or reused) per request,
 * fetched anew once after the upstream refused it with a 401, and the request sent once more.
 */
export interface UpstreamCredentials {
  /** Whether the integration has any credential at all. */
  readonly any: boolean;
  /**
   * Sends `request` through `dispatcher`, with the credentials when they may go to its URL. The request's own headers
   * win over the credentials' (a SOAPAction or Content-Type stays the transport's).
   */
  send(dispatcher: Dispatcher, request: UpstreamRequest): Promise<UpstreamResponse>;
  /** Values sent that no stored secret holds (access tokens): what a reply must be redacted of besides the secrets. */
  readonly issued: readonly string[];
}

export interface CredentialsContext {
  /** The connector's shorthand as an `auth` object (GraphQL's `token`, SOAP's `auth_header`), when `auth` is unset. */
  shorthand: Readonly<Record<string, unknown>> | undefined;
  /** This instance's OAuth2 token sources (the composition root's). */
  oauth2: OAuth2Sources;
  /** The bounds of a token request: the integration's timeout and size cap (the execute's budget comes per execute). */
  tokenRequest: Pick<UpstreamRequest, 'timeoutMs' | 'maxBodyBytes'>;
}

/** The credentials of one execute, given its budget (which a token request spends too). */
export type CredentialsForExecute = (budget: ExecuteBudget | undefined) => UpstreamCredentials;

/**
 * How `integration`'s credentials are had for each execute; made once per integration version. Static headers are one
 * object every execute shares: nothing is ever issued to them. OAuth2's are made per execute, since they note the
 * access tokens issued in it, which that execute's reply must be redacted of.
 */
export function upstreamCredentials(integration: ResolvedIntegration, context: CredentialsContext): CredentialsForExecute {
  const auth = (integration.config.auth as Record<string, unknown> | undefined) ?? context.shorthand;
  if (auth?.type === oauth2Scheme.type) {
    const { oauth2, tokenRequest } = context;
    const key = { tenantId: integration.tenantId, integrationId: integration.id, version: integration.version };
    const settings = {
      tokenUrl: String(auth.token_url),
      clientId: String(auth.client_id),
      clientSecret: String(auth.client_secret),
      ...(typeof auth.scope === 'string' && { scope: auth.scope }),
      ...(typeof auth.audience === 'string' && { audience: auth.audience }),
      clientAuthentication:
        auth.client_authentication === 'client_secret_post' ? ('client_secret_post' as const) : ('client_secret_basic' as const),
    };
    return (budget) =>
      new OAuth2Credentials(
        integration,
        oauth2.get(key, () => new OAuth2ClientCredentials(settings)),
        { ...tokenRequest, budget },
      );
  }
  const shared = new HeaderCredentials(integration, authHeaders(auth));
  return () => shared;
}

const nothingIssued: readonly string[] = Object.freeze([]);

/** Static headers (Basic, bearer, a named header), or none: the same for every execute. */
class HeaderCredentials implements UpstreamCredentials {
  readonly any: boolean;
  readonly issued = nothingIssued;
  readonly #integration: ResolvedIntegration;
  readonly #headers: Record<string, string>;

  constructor(integration: ResolvedIntegration, headers: Record<string, string>) {
    this.#integration = integration;
    this.#headers = headers;
    this.any = Object.keys(headers).length > 0;
  }

  send(dispatcher: Dispatcher, request: UpstreamRequest): Promise<UpstreamResponse> {
    const withHeaders = this.any && credentialsMayGoTo(this.#integration, request.url);
    return sendUpstream(dispatcher, withHeaders ? { ...request, headers: { ...this.#headers, ...request.headers } } : request);
  }
}

/** OAuth2 client credentials for one execute: the tokens it was issued are its own. */
class OAuth2Credentials implements UpstreamCredentials {
  readonly any = true;
  readonly issued: string[] = [];
  readonly #integration: ResolvedIntegration;
  readonly #source: OAuth2ClientCredentials;
  readonly #tokenRequest: Pick<UpstreamRequest, 'timeoutMs' | 'maxBodyBytes' | 'budget'>;

  constructor(
    integration: ResolvedIntegration,
    source: OAuth2ClientCredentials,
    tokenRequest: Pick<UpstreamRequest, 'timeoutMs' | 'maxBodyBytes' | 'budget'>,
  ) {
    this.#integration = integration;
    this.#source = source;
    this.#tokenRequest = tokenRequest;
  }

  send(dispatcher: Dispatcher, request: UpstreamRequest): Promise<UpstreamResponse> {
    if (!credentialsMayGoTo(this.#integration, request.url)) return sendUpstream(dispatcher, request);
    const tokenRequest = this.#tokenRequest;
    const bearer = recording(
      // The token request changes nothing upstream: it is no write, whatever its method.
      this.#source.boundTo((token) => sendUpstream(dispatcher, { ...token, ...tokenRequest, write: false })),
      this.issued,
    );
    return withFreshTokenOnce(bearer, (authorization) =>
      sendUpstream(dispatcher, { ...request, headers: { authorization, ...request.headers } }),
    );
  }
}

/** A source that notes each access token it hands out (`Bearer …` less its scheme), for redaction. */
function recording(source: BearerSource, issued: string[]): BearerSource {
  return {
    async authorization() {
      const authorization = await source.authorization();
      const token = authorization.replace(/^Bearer /, '');
      if (!issued.includes(token)) issued.push(token);
      return authorization;
    },
    refused: (authorization) => source.refused(authorization),
  };
}
