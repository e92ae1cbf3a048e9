import type { Dispatcher } from 'undici';
import type { ResolvedIntegration } from '../connectors/connector.ts';
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
  /** The bounds of a token request: the integration's timeout and size cap, and the execute's budget. */
  tokenRequest: Pick<UpstreamRequest, 'timeoutMs' | 'maxBodyBytes' | 'budget'>;
}

/** The credentials of `integration` for one execute. */
export function upstreamCredentials(integration: ResolvedIntegration, context: CredentialsContext): UpstreamCredentials {
  const auth = (integration.config.auth as Record<string, unknown> | undefined) ?? context.shorthand;
  const issued: string[] = [];
  const mayGo = (url: string) => credentialsMayGoTo(integration, url);
  if (auth?.type === oauth2Scheme.type) {
    const source = context.oauth2.get(
      { tenantId: integration.tenantId, integrationId: integration.id, version: integration.version },
      () =>
        new OAuth2ClientCredentials({
          tokenUrl: String(auth.token_url),
          clientId: String(auth.client_id),
          clientSecret: String(auth.client_secret),
          ...(typeof auth.scope === 'string' && { scope: auth.scope }),
          ...(typeof auth.audience === 'string' && { audience: auth.audience }),
          clientAuthentication:
            auth.client_authentication === 'client_secret_post' ? 'client_secret_post' : 'client_secret_basic',
        }),
    );
    return {
      any: true,
      issued,
      send(dispatcher, request) {
        if (!mayGo(request.url)) return sendUpstream(dispatcher, request);
        const bearer = recording(
          // The token request changes nothing upstream: it is no write, whatever its method.
          source.boundTo((token) => sendUpstream(dispatcher, { ...token, ...context.tokenRequest, write: false })),
          issued,
        );
        return withFreshTokenOnce(bearer, (authorization) =>
          sendUpstream(dispatcher, { ...request, headers: { authorization, ...request.headers } }),
        );
      },
    };
  }
  const headers = authHeaders(auth);
  const any = Object.keys(headers).length > 0;
  return {
    any,
    issued,
    send: (dispatcher, request) =>
      sendUpstream(dispatcher, any && mayGo(request.url) ? { ...request, headers: { ...headers, ...request.headers } } : request),
  };
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
