import { createHash } from 'node:crypto';
import { type AuditSource, inTransaction, recordPersonEvent } from '../audit/audit-log.ts';
import { ApiError } from '../core/errors.ts';
import { newId, nowIso, randomString } from '../core/ids.ts';
import type { Db } from '../storage/database.ts';
import {
  findRefreshToken,
  insertSession,
  type RefreshTokenRecord,
  revokeSession,
  spendRefreshToken,
} from '../storage/sessions.ts';
import {
  findUser,
  findUserByEmail,
  type Membership,
  membershipsOf,
  normalizeEmail,
  type User,
  type UserWithPassword,
} from '../storage/users.ts';
import type { AccessTokens } from './access-tokens.ts';
import { verifyDummyPassword, verifyPassword } from './passwords.ts';
import type { SignInLimits } from './sign-in-limits.ts';

/** A refresh token lives 14 days; each refresh issues a new one with a fresh 14 days (the cookie's Max-Age too). */
export const refreshTokenTtlSeconds = 14 * 86_400;

const refreshPrefix = 'ixr_';
const refreshShape = /^ixr_[0-9A-Za-z]{43}$/;

/** What sign-in and refresh answer (docs/people-and-console.md#sign-in). */
export interface SessionTokens {
  access_token: string;
  token_type: 'Bearer';
  expires_in: number;
  refresh_token: string;
  user: User;
  memberships: Membership[];
}

/** Where a sign-in comes from, and how its audit events are written (docs/people-and-console.md#the-audit-trail-of-people). */
export interface SignInAttempt {
  /** The client's address: its places in the password queue and its count in the IP guard. */
  address: string;
  /** Who an event is from, and where: the person themself, with the request's address and id. */
  source: (user: User) => AuditSource;
  /**
   * Takes the write of a known person's `user.sign_in_failed`, to run once the 401 or 429 has gone. An unknown email
   * writes nothing; run before the answer, the write's time would tell the two apart.
   */
  afterAnswer: (write: () => Promise<void>) => void;
}

export interface SessionServiceOptions {
  db: Db;
  tokens: AccessTokens;
  /** The password queue, the IP guard and the account lockout, taken before each password check. */
  limits: SignInLimits;
  /** Told when a session ends (sign-out, a reused refresh token), so this instance stops trusting it at once. */
  onSessionEnded?: (sessionId: string) => void;
}

const hashToken = (token: string) => createHash('sha256').update(token).digest('hex');
const wrongCredentials = () => new ApiError('invalid_credentials', 'The email or password is not right.');
const invalidRefresh = () => new ApiError('invalid_credentials', 'The refresh token is not valid; sign in again.');

/** A new refresh token (256 bits from a CSPRNG) and the record that stores only its hash. */
function newRefreshToken(
  userId: string,
  familyId: string,
  parentId: string | null,
): { token: string; record: RefreshTokenRecord } {
  const token = `${refreshPrefix}${randomString(43)}`;
  const now = Date.now();
  return {
    token,
    record: {
      id: newId('rft'),
      hash: hashToken(token),
      family_id: familyId,
      parent_id: parentId,
      user_id: userId,
      created_at: new Date(now).toISOString(),
      expires_at: new Date(now + refreshTokenTtlSeconds * 1000).toISOString(),
      spent_at: null,
      revoked_at: null,
    },
  };
}

/**
 * Sign-in, refresh and sign-out for people. A sign-in starts a session (a refresh-token family); each refresh spends
 * its token and issues the next; a spent token presented again revokes the whole family (it was stolen, or the
 * thief has used it already), as does sign-out.
 */
export class SessionService {
  readonly #db: Db;
  readonly #tokens: AccessTokens;
  readonly #limits: SignInLimits;
  readonly #ended: (sessionId: string) => void;

  constructor(options: SessionServiceOptions) {
    this.#db = options.db;
    this.#tokens = options.tokens;
    this.#limits = options.limits;
    this.#ended = options.onSessionEnded ?? (() => {});
  }

  /**
   * Checks the password of a sign-in and starts a session, with `user.signed_in` in every tenant of the person. A wrong
   * password and an unknown email get the same answer after the same work, in the same queue (an unknown email is
   * checked against a dummy hash); both count toward the address's guard and the account's lockout. A known person's
   * wrong password is `user.sign_in_failed`, written after the answer (SignInAttempt.afterAnswer). Attempts refused
   * while the account is locked are not recorded one by one: the ten failures that locked it are, and whoever keeps
   * knocking cannot grow the audit log past that (docs/limits.md#audit-log).
   */
  async signIn(email: string, password: string, attempt: SignInAttempt): Promise<SessionTokens> {
    const account = normalizeEmail(email);
    let found: UserWithPassword | undefined;
    const user = await this.#limits.check(attempt.address, account, async () => {
      found = await findUserByEmail(this.#db, account);
      const ok = found ? await verifyPassword(password, found.password_hash) : await verifyDummyPassword(password);
      return ok ? found : undefined;
    });
    if (!user) {
      if (found) this.#failed(found, attempt);
      throw wrongCredentials();
    }
    const { password_hash: _hash, ...shown } = user;
    const sessionId = newId('ses');
    const first = newRefreshToken(user.id, sessionId, null);
    await inTransaction(this.#db, async (tx) => {
      await insertSession(tx, { id: sessionId, user_id: shown.id, created_at: nowIso() }, first.record);
      await recordPersonEvent(tx, shown.id, attempt.source(shown), {
        action: 'user.signed_in',
        target: { type: 'user', id: shown.id },
        changes: [],
      });
    });
    return this.#answer(shown, sessionId, first.token);
  }

  /** Hands the attempt the write of the known person's `user.sign_in_failed`. */
  #failed(known: UserWithPassword, attempt: SignInAttempt): void {
    attempt.afterAnswer(async () => {
      const { password_hash: _hash, ...user } = known;
      await inTransaction(this.#db, (tx) =>
        recordPersonEvent(tx, user.id, attempt.source(user), {
          action: 'user.sign_in_failed',
          target: { type: 'user', id: user.id },
          changes: [],
        }),
      );
    });
  }

  /** Spends a refresh token for a new access token and the next refresh token. */
  async refresh(token: string): Promise<SessionTokens> {
    if (!refreshShape.test(token)) throw invalidRefresh();
    const stored = await findRefreshToken(this.#db, hashToken(token));
    if (!stored || stored.revoked_at !== null || stored.session_revoked_at !== null) throw invalidRefresh();
    if (stored.spent_at !== null) {
      await this.#end(stored.family_id);
      throw new ApiError('invalid_credentials', 'This refresh token was used already: the session is ended; sign in again.');
    }
    if (Date.parse(stored.expires_at) <= Date.now()) {
      throw new ApiError('expired_credentials', 'The refresh token has expired; sign in again.');
    }
    const user = await findUser(this.#db, stored.user_id);
    if (!user) throw invalidRefresh();
    const next = newRefreshToken(user.id, stored.family_id, stored.id);
    if (!(await spendRefreshToken(this.#db, stored.id, nowIso(), next.record))) {
      // Spent (or revoked) by a request that raced this one: a second use all the same.
      await this.#end(stored.family_id);
      throw new ApiError('invalid_credentials', 'This refresh token was used already: the session is ended; sign in again.');
    }
    return this.#answer(user, stored.family_id, next.token);
  }

  /** Ends the session: its refresh tokens stop working, and so do its access tokens. */
  async signOut(sessionId: string): Promise<void> {
    await this.#end(sessionId);
  }

  async #end(sessionId: string): Promise<void> {
    await revokeSession(this.#db, sessionId, nowIso());
    this.#ended(sessionId);
  }

  async #answer(user: User, sessionId: string, refreshToken: string): Promise<SessionTokens> {
    return {
      access_token: await this.#tokens.issue({ userId: user.id, sessionId }),
      token_type: 'Bearer',
      expires_in: this.#tokens.ttlSeconds,
      refresh_token: refreshToken,
      user,
      memberships: await membershipsOf(this.#db, user.id),
    };
  }
}
