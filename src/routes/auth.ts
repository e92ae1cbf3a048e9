import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { personSource } from '../audit/audit-log.ts';
import { looksLikeJwt } from '../auth/access-tokens.ts';
import { refuseBlockedAddress } from '../auth/authenticate.ts';
import { maxPasswordLength } from '../auth/passwords.ts';
import { refreshTokenTtlSeconds, type SessionTokens } from '../auth/sessions.ts';
import type { AppContext } from '../context.ts';
import { ApiError } from '../core/errors.ts';
import { addressedToLoopback, readCookie, serializeCookie } from '../http/cookies.ts';
import { ok } from '../http/envelope.ts';
import { bodyFailures, failures, reply } from './schemas.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** What a sign-in leaves to do once its answer has gone: the audit write of a known person's failure. */
    afterAnswer: (() => Promise<void>) | null;
  }
}

/** The cookie that carries the refresh token for the console; only the auth routes ever receive it. */
export const refreshCookie = 'ix_refresh';
const cookiePath = '/api/v1/auth';
const tags = ['People'];
const bearer = [{ Bearer: [] }];

const signInBody = {
  type: 'object',
  required: ['email', 'password'],
  additionalProperties: false,
  properties: {
    email: { type: 'string', minLength: 1, maxLength: 320 },
    password: { type: 'string', minLength: 1, maxLength: maxPasswordLength },
  },
  examples: [{ email: 'ada@example.com', password: 'correct horse battery staple' }],
} as const;

const refreshBody = {
  type: ['object', 'null'],
  additionalProperties: false,
  properties: { refresh_token: { type: 'string', minLength: 1, maxLength: 256 } },
  examples: [{ refresh_token: 'ixr_…' }, {}],
} as const;

const sessionFailures = {
  401: '`invalid_credentials` (wrong email or password, the same answer for both) or `missing_credentials`; with WWW-Authenticate.',
  429: '`rate_limited` with Retry-After; `details.reason` says which limit: `auth_failures` (failed authentications from this address) and, for sign-in, `account_lockout` (failed sign-ins for this account, 15 minutes) or `sign_in_busy` (too many sign-ins waiting for their password check, from this address or in all).',
} as const;

function setRefreshCookie(request: FastifyRequest, reply: FastifyReply, value: string, maxAgeSeconds: number): void {
  const secure = !addressedToLoopback(request);
  reply.header('set-cookie', serializeCookie(refreshCookie, value, { path: cookiePath, maxAgeSeconds, secure }));
}

/** Tokens are answered once and never kept by a cache; the refresh token also goes into the console's cookie. */
function sendSession(request: FastifyRequest, reply: FastifyReply, tokens: SessionTokens) {
  setRefreshCookie(request, reply, tokens.refresh_token, refreshTokenTtlSeconds);
  reply.header('cache-control', 'no-store');
  return ok(tokens);
}

/** A JSON body, told by its Content-Type (the media type before any parameters). */
function isJson(request: FastifyRequest): boolean {
  const type = request.headers['content-type'];
  return typeof type === 'string' && type.split(';')[0].trim().toLowerCase() === 'application/json';
}

/**
 * Sign-in, refresh and sign-out for people, and the JWKS that verifies their access tokens (docs/people-and-console.md).
 * These routes declare no scope: they take a password, a refresh token or an access token without a tenant. The
 * brute-force guard is checked here, and each 401 they answer counts toward it (the auth hook's onSend), except that
 * sign-in counts each attempt before its password is checked, with every other limit on it (src/auth/sign-in-limits.ts).
 */
export function registerAuthRoutes(app: FastifyInstance, ctx: AppContext): void {
  const { people, guard } = ctx;
  app.decorateRequest('afterAnswer', null);

  app.post<{ Body: { email: string; password: string } }>(
    '/api/v1/auth/sign-in',
    {
      // After the answer has gone, so that its time cannot tell a known email from an unknown one.
      onResponse: async (request) => {
        await request.afterAnswer?.().catch((error) => request.log.error({ err: error }, 'a failed sign-in was not audited'));
      },
      schema: {
        tags,
        operationId: 'signIn',
        summary: 'Sign in with email and password: an access token and a refresh token (also set as the ix_refresh cookie).',
        body: signInBody,
        response: {
          200: reply('SessionReply', 'Signed in; the `Set-Cookie` header carries the refresh token for the console.'),
          ...failures([400, 401, ...bodyFailures, 429, 500, 503], sessionFailures),
        },
      },
    },
    async (request, reply) => {
      // Sign-in counts each attempt toward the IP guard before checking the password (SignInLimits): its 401 is
      // counted already.
      request.failureCounted = true;
      const tokens = await people.sessions.signIn(request.body.email, request.body.password, {
        address: request.ip,
        source: (user) => personSource(request, user),
        afterAnswer: (write) => {
          request.afterAnswer = write;
        },
      });
      return sendSession(request, reply, tokens);
    },
  );

  app.post<{ Body: { refresh_token?: string } | null | undefined }>(
    '/api/v1/auth/refresh',
    {
      schema: {
        tags,
        operationId: 'refreshSession',
        summary: 'Spend a refresh token (the body’s, or the ix_refresh cookie) for new tokens; a spent one ends the session.',
        body: refreshBody,
        response: {
          200: reply('SessionReply', 'New tokens; the one presented is spent.'),
          ...failures([400, 401, ...bodyFailures, 429, 500, 503], {
            ...sessionFailures,
            401: '`invalid_credentials` (unknown, revoked or spent: a spent token ends its whole session), `expired_credentials` or `missing_credentials`.',
            415: '`unsupported_media_type`: a body that is not JSON, or a refresh by cookie without `Content-Type: application/json`.',
          }),
        },
      },
    },
    async (request, reply) => {
      await refuseBlockedAddress(guard, request);
      let token = request.body?.refresh_token;
      if (token === undefined) {
        token = readCookie(request, refreshCookie);
        if (token === undefined || token === '') {
          throw new ApiError('missing_credentials', 'Send the refresh token as refresh_token in the body, or its cookie.');
        }
        // CSRF: the browser attaches the cookie to any request to this path, a cross-site form post's included
        // (SameSite=Strict aside). A form cannot send application/json, and a cross-site script cannot either without
        // a CORS preflight, which this service never grants; other body types are refused by the parser anyway.
        if (!isJson(request)) {
          throw new ApiError(
            'unsupported_media_type',
            'A refresh with the cookie must be sent with Content-Type: application/json.',
          );
        }
      }
      return sendSession(request, reply, await people.sessions.refresh(token));
    },
  );

  app.post(
    '/api/v1/auth/sign-out',
    {
      schema: {
        tags,
        security: bearer,
        operationId: 'signOut',
        summary: 'End the session of the access token: its refresh tokens and access tokens stop working; the cookie is cleared.',
        response: {
          200: reply('SignedOutReply', 'The session is ended.'),
          ...failures([400, 401, 429, 500, 503], {
            401: '`missing_credentials` (no Bearer access token), `invalid_credentials` or `expired_credentials`.',
          }),
        },
      },
    },
    async (request, reply) => {
      await refuseBlockedAddress(guard, request);
      const token = /^Bearer\s+(\S+)\s*$/i.exec(request.headers.authorization ?? '')?.[1];
      if (token === undefined) throw new ApiError('missing_credentials', 'Send the access token as Authorization: Bearer.');
      if (!looksLikeJwt(token)) throw new ApiError('invalid_credentials', 'The access token is not valid.');
      const { sessionId } = await people.tokens.verify(token);
      await people.sessions.signOut(sessionId);
      setRefreshCookie(request, reply, '', 0);
      return ok({ signed_out: true as const });
    },
  );

  app.get(
    '/.well-known/jwks.json',
    {
      schema: {
        tags,
        operationId: 'getJwks',
        summary: 'The public keys that verify access tokens (JWKS): the current signing key and recently retired ones.',
        response: { 200: { description: 'The key set.', $ref: 'JwkSet#' }, ...failures([500, 503]) },
      },
    },
    async (_request, reply) => {
      // Short, so that a verifier sees a rotation's new key soon; one that meets an unknown kid fetches again anyway.
      reply.header('cache-control', 'public, max-age=60');
      await people.keys.signing(); // the first key is made on first need: a verifier may ask before anyone signed in
      return people.keys.jwks();
    },
  );
}
