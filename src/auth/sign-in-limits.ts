import { ApiError } from '../core/errors.ts';
import type { PasswordCheckQueue, QueueRefusal } from './password-queue.ts';
import { type AccountLockout, type AuthFailureGuard, accountRefusal, addressRefusal } from './rate-limit.ts';

export interface SignInLimitsOptions {
  queue: PasswordCheckQueue;
  guard: AuthFailureGuard;
  lockout: AccountLockout;
}

const busyMessages: Record<QueueRefusal, string> = {
  address: 'Too many sign-ins from this address are being checked; retry in 1 second.',
  queue: 'Too many sign-ins are waiting to be checked; retry in 1 second.',
};

/** A full password queue: the sign-in was not tried, so nothing was counted; a second later there is room again. */
function busy(refusal: QueueRefusal): ApiError {
  const refused = new ApiError('rate_limited', busyMessages[refusal], { reason: 'sign_in_busy' }, { retryAfterSeconds: 1 });
  return refused;
}

/**
 * Every limit on a sign-in, all taken before its password is checked (docs/api.md#failed-authentications, docs/people-and-console.md#sign-in), in this order:
 * 1. a place in the password queue for its address, else `429 sign_in_busy` at once: local and cheap, so a flood is
 *    refused before it costs a round trip to Redis;
 * 2. the attempt counted against its address (the IP guard), then 3. against its account (the lockout), each taken
 *    and compared in one atomic step, so that parallel attempts on any instance cannot all pass one count;
 * 4. the check, when its turn in the queue comes.
 * A failed check keeps both counts: they are its failure. A success gives the address's back and starts the account's
 * count over. A refusal or an error is no failed authentication: what it had counted is given back.
 */
export class SignInLimits {
  readonly #queue: PasswordCheckQueue;
  readonly #guard: AuthFailureGuard;
  readonly #lockout: AccountLockout;

  constructor(options: SignInLimitsOptions) {
    this.#queue = options.queue;
    this.#guard = options.guard;
    this.#lockout = options.lockout;
  }

  /**
   * Runs `verify` (which answers what signed in, or undefined for wrong credentials) within the limits of `address`
   * and `account`; throws the 429 of the first limit reached.
   */
  async check<T>(address: string, account: string, verify: () => Promise<T | undefined>): Promise<T | undefined> {
    const turn = this.#queue.admit(address);
    if (typeof turn === 'string') throw busy(turn);
    try {
      await this.#reserve(address, account);
    } catch (error) {
      turn.leave();
      throw error;
    }
    let found: T | undefined;
    try {
      found = await turn.run(verify);
    } catch (error) {
      // Storage failed, not the person: the attempt was no failure.
      await Promise.all([this.#guard.giveBack(address), this.#lockout.giveBack(account)]);
      throw error;
    }
    if (found !== undefined) await Promise.all([this.#guard.giveBack(address), this.#lockout.succeed(account)]);
    return found;
  }

  /** Counts the attempt against the address, then the account; throws the refusal of the first that is used up. */
  async #reserve(address: string, account: string): Promise<void> {
    const addressWait = await this.#guard.reserve(address);
    if (addressWait > 0) throw addressRefusal(addressWait);
    const accountWait = await this.#lockout.reserve(account);
    if (accountWait > 0) {
      await this.#guard.giveBack(address);
      throw accountRefusal(accountWait);
    }
  }
}
