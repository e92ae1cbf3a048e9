import { randomUUID } from 'node:crypto';
import { ApiError } from '../core/errors.ts';
import { type SigningKeys, signingAlgorithm } from './signing-keys.ts';

/** `iss` of every access token. */
export const tokenIssuer = 'interchange';
/** `aud` of every access token (docs/people-and-console.md#access-tokens). */
export const tokenAudience = 'interchange';

/** What a verified access token says: who (`sub`) and which sign-in (`sid`, the refresh-token family). */
export interface AccessClaims {
  userId: string;
  sessionId: string;
}

const jwtShape = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/;

/** True when `token` has the three dot-separated base64url parts of a compact JWS. */
export function looksLikeJwt(token: string): boolean {
  return jwtShape.test(token);
}

type Jose = typeof import('jose');
let jose: Promise<Jose> | undefined;

/**
 * jose, loaded on the first token issued or checked: an instance only machines call never holds it (the idle
 * footprint is a measured target, issue 10).
 */
function loadJose(): Promise<Jose> {
  jose ??= import('jose');
  return jose;
}

const invalid = () => new ApiError('invalid_credentials', 'The access token is not valid; sign in again.');

/** Seconds of clock difference between instances tolerated when judging `iat` and a token's lifetime. */
export const clockSkewSeconds = 60;

/**
 * Short-lived JWT access tokens (EdDSA, `kid` header), signed with the current key of `SigningKeys`.
 *
 * @example
 * const tokens = new AccessTokens(keys, 900);
 * const token = await tokens.issue({ userId: 'usr_…', sessionId: 'ses_…' });
 * (await tokens.verify(token)).userId; // 'usr_…'
 */
export class AccessTokens {
  readonly #keys: SigningKeys;
  /** Seconds an access token lives (IX_ACCESS_TOKEN_TTL_SECONDS). */
  readonly ttlSeconds: number;

  constructor(keys: SigningKeys, ttlSeconds: number) {
    this.#keys = keys;
    this.ttlSeconds = ttlSeconds;
  }

  async issue(claims: AccessClaims): Promise<string> {
    const { kid, key } = await this.#keys.signing();
    const { SignJWT } = await loadJose();
    return new SignJWT({ sid: claims.sessionId })
      .setProtectedHeader({ alg: signingAlgorithm, kid, typ: 'JWT' })
      .setIssuer(tokenIssuer)
      .setAudience(tokenAudience)
      .setSubject(claims.userId)
      .setIssuedAt()
      .setExpirationTime(`${this.ttlSeconds}s`)
      .setJti(randomUUID())
      .sign(key);
  }

  /**
   * The claims of a token this service signed, or the 401 that says why not. Only EdDSA with a known `kid` and
   * `typ: JWT` is accepted (so neither `none` nor an HMAC keyed with a public key gets through); `iss` and `aud` must
   * be ours. A token must also be one this service could have issued: `iat` not ahead of now and a lifetime
   * (`exp - iat`) no longer than IX_ACCESS_TOKEN_TTL_SECONDS, each give or take `clockSkewSeconds`; a correctly
   * signed token that claims ten years (a leaked signing key, a bug) is refused rather than trusted that long.
   */
  async verify(token: string): Promise<AccessClaims> {
    if (!looksLikeJwt(token)) throw invalid();
    const { errors, jwtVerify } = await loadJose();
    try {
      const { payload } = await jwtVerify(
        token,
        async (header) => {
          const key = header.kid === undefined ? undefined : await this.#keys.verifying(header.kid);
          if (!key) throw invalid();
          return key;
        },
        {
          algorithms: [signingAlgorithm],
          typ: 'JWT',
          issuer: tokenIssuer,
          audience: tokenAudience,
          requiredClaims: ['sub', 'exp', 'iat'],
        },
      );
      if (typeof payload.sub !== 'string' || typeof payload.sid !== 'string') throw invalid();
      const { iat = 0, exp = 0 } = payload;
      if (iat > Date.now() / 1000 + clockSkewSeconds || exp - iat > this.ttlSeconds + clockSkewSeconds) throw invalid();
      return { userId: payload.sub, sessionId: payload.sid };
    } catch (error) {
      if (error instanceof errors.JWTExpired) {
        throw new ApiError('expired_credentials', 'The access token has expired; refresh it or sign in again.');
      }
      if (error instanceof ApiError) throw error;
      throw invalid();
    }
  }
}
