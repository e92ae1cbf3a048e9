import { ApiError } from '../core/errors.ts';
import type { Db } from '../storage/database.ts';
import { type PersonInTenant, personInTenant, type Role, type User } from '../storage/users.ts';
import { AccessTokens } from './access-tokens.ts';
import type { PasswordCheckQueue } from './password-queue.ts';
import { AccountLockout, type AuthFailureGuard, type LimiterStores } from './rate-limit.ts';
import { roleScopes } from './roles.ts';
import { SessionService } from './sessions.ts';
import { SignInLimits } from './sign-in-limits.ts';
import { SigningKeys } from './signing-keys.ts';

/** Requests a person may make per minute, across every tenant (docs/limits.md#callers). */
export const userRateLimitPerMinute = 600;

/** A signed-in person calling in one tenant. */
export interface Person {
  user: User;
  role: Role;
  scopes: readonly string[];
  sessionId: string;
}

export interface PeopleOptions {
  db: Db;
  masterKey: Buffer;
  stores: LimiterStores;
  /** The per-IP guard every authentication shares; sign-in counts its attempts there too. */
  guard: AuthFailureGuard;
  /** Where sign-ins check passwords. */
  passwordQueue: PasswordCheckQueue;
  /** IX_ACCESS_TOKEN_TTL_SECONDS */
  accessTokenTtlSeconds: number;
  /** How long a person's membership and session are trusted without a storage read (at most 1 s). */
  cacheMs: number;
  /** The clock the cache's age is read from (ms); tests step one. `Date.now` by default. */
  now?: () => number;
}

interface CacheEntry {
  value: PersonInTenant | undefined;
  storedAt: number;
}

const maxCached = 10_000;

/**
 * Everything about people in one place: the signing keys, access tokens, sessions (sign-in, refresh, sign-out), the
 * account lockout, and who a Bearer token is in a tenant. A removed membership, a deleted user or an ended session is
 * refused by every instance within `cacheMs` (the lookup is kept no longer), by this one at once after a sign-out.
 */
export class People {
  readonly keys: SigningKeys;
  readonly tokens: AccessTokens;
  readonly sessions: SessionService;
  readonly lockout: AccountLockout;
  readonly #db: Db;
  readonly #cacheMs: number;
  readonly #cache = new Map<string, CacheEntry>();
  readonly #now: () => number;

  constructor(options: PeopleOptions) {
    this.#db = options.db;
    this.#now = options.now ?? Date.now;
    this.#cacheMs = Math.min(options.cacheMs, 1000);
    this.keys = new SigningKeys(options.db, options.masterKey);
    this.tokens = new AccessTokens(this.keys, options.accessTokenTtlSeconds);
    this.lockout = new AccountLockout(options.stores);
    this.sessions = new SessionService({
      db: options.db,
      tokens: this.tokens,
      limits: new SignInLimits({ queue: options.passwordQueue, guard: options.guard, lockout: this.lockout }),
      onSessionEnded: (sessionId) => this.#forgetSession(sessionId),
    });
  }

  /** The person an access token names, with their role in `tenantId`; 401 when the token, user, session or membership is not good. */
  async identify(token: string, tenantId: string): Promise<Person> {
    const claims = await this.tokens.verify(token);
    const found = await this.#lookUp(claims.userId, claims.sessionId, tenantId);
    // No membership here, an unknown tenant, a removed user and an ended session all look alike.
    if (!found || found.sessionRevoked || found.role === null) throw new ApiError('invalid_credentials');
    return { user: found.user, role: found.role, scopes: roleScopes[found.role], sessionId: claims.sessionId };
  }

  /**
   * Drops what this instance knew of the person's role in the tenant, after a change of it: a removed member's tokens
   * are refused here at once, and a new role holds from the next request (other instances: within `cacheMs`).
   */
  forgetMembership(userId: string, tenantId: string): void {
    for (const key of this.#cache.keys()) {
      const [user, , tenant] = key.split('\n');
      if (user === userId && tenant === tenantId) this.#cache.delete(key);
    }
  }

  /** Drops what this instance knew of a session that has ended: its access tokens are refused at once here. */
  #forgetSession(sessionId: string): void {
    for (const key of this.#cache.keys()) if (key.split('\n')[1] === sessionId) this.#cache.delete(key);
  }

  async #lookUp(userId: string, sessionId: string, tenantId: string): Promise<PersonInTenant | undefined> {
    const key = `${userId}\n${sessionId}\n${tenantId}`;
    const now = this.#now();
    const cached = this.#cache.get(key);
    if (cached && now - cached.storedAt < this.#cacheMs) return cached.value;
    const value = await personInTenant(this.#db, userId, sessionId, tenantId);
    if (this.#cacheMs > 0) {
      this.#cache.delete(key);
      if (this.#cache.size >= maxCached) this.#cache.delete(this.#cache.keys().next().value as string);
      this.#cache.set(key, { value, storedAt: now });
    }
    return value;
  }
}
