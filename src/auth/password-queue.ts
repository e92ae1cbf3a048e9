/**
 * Where sign-ins check passwords: a few at once, each address served in turn, with a bound on what waits.
 *
 * A password check is scrypt on libuv's thread pool, which Node shares with zlib (an upstream's gzip) and DNS lookups:
 * unbounded, a flood of sign-ins queued there in front of everything else, every other person's sign-in and executes
 * included. Here at most `concurrency` checks run at once (leaving the pool's other threads to zlib and DNS), an
 * address has at most `perAddress` sign-ins admitted, and at most `maxWaiting` wait in all; beyond a bound the caller
 * is refused at once. Of the waiting, the address served least recently goes first, and no address runs checks on
 * every thread (at most `concurrency - 1`, when there are two or more): one address's flood cannot push another
 * person behind it, nor keep them waiting for a thread.
 *
 * @example
 * const turn = queue.admit(request.ip);
 * if (typeof turn === 'string') throw busy(turn); // 429 at once: 'address' or 'queue'
 * const ok = await turn.run(() => verifyPassword(password, stored));
 */
export interface PasswordQueueOptions {
  /** Checks running at once; one address's at most `concurrency - 1` of them (when it is 2 or more). */
  concurrency: number;
  /** Sign-ins one address may have admitted, waiting or running. */
  perAddress: number;
  /** Sign-ins waiting for a check to start, all addresses together. */
  maxWaiting: number;
}

/** A sign-in's place in the queue: run its check once, or leave without. */
export interface QueueTurn {
  /** Runs `check` when its turn comes; the place is given up when it settles. */
  run<T>(check: () => Promise<T>): Promise<T>;
  /** Gives the place up without a check (the sign-in was refused first); a no-op once `run` was called. */
  leave(): void;
}

/** Why a sign-in was not admitted: its address has its share, or the queue is full. */
export type QueueRefusal = 'address' | 'queue';

interface AddressState {
  admitted: number;
  running: number;
  /** Checks ready to start, oldest first. */
  ready: Array<() => void>;
  /** When this address last had a check started (a count of starts); 0 for one not served while it has been here. */
  servedAt: number;
}

export class PasswordCheckQueue {
  readonly #options: PasswordQueueOptions;
  readonly #runningPerAddress: number;
  // Only addresses with a sign-in admitted are kept: the map is bounded by perAddress and maxWaiting.
  readonly #addresses = new Map<string, AddressState>();
  #admitted = 0;
  #running = 0;
  #starts = 0;

  constructor(options: PasswordQueueOptions) {
    for (const [name, value] of Object.entries(options)) {
      if (!Number.isInteger(value) || value < 1) throw new RangeError(`${name} must be a whole number of at least 1`);
    }
    this.#options = { ...options };
    this.#runningPerAddress = Math.max(1, options.concurrency - 1);
  }

  /** Checks running now. */
  get running(): number {
    return this.#running;
  }

  /** Sign-ins admitted and not yet running. */
  get waiting(): number {
    return this.#admitted - this.#running;
  }

  /** A place for a sign-in from `address`, or which bound keeps it out. */
  admit(address: string): QueueTurn | QueueRefusal {
    if ((this.#addresses.get(address)?.admitted ?? 0) >= this.#options.perAddress) return 'address';
    if (this.waiting >= this.#options.maxWaiting) return 'queue';
    let state = this.#addresses.get(address);
    if (!state) {
      state = { admitted: 0, running: 0, ready: [], servedAt: 0 };
      this.#addresses.set(address, state);
    }
    state.admitted += 1;
    this.#admitted += 1;
    let used = false;
    const release = () => {
      this.#admitted -= 1;
      state.admitted -= 1;
      if (state.admitted === 0) this.#addresses.delete(address);
    };
    return {
      run: <T>(check: () => Promise<T>) => {
        if (used) throw new Error('a queue turn runs once');
        used = true;
        return new Promise<T>((resolve, reject) => {
          // The place is free (and the next check started) before the caller hears its answer.
          const done = () => {
            this.#running -= 1;
            state.running -= 1;
            release();
            this.#startNext();
          };
          state.ready.push(() => {
            // Async, so that a check that throws at once settles the same way as one that rejects.
            (async () => check())().then(
              (value) => {
                done();
                resolve(value);
              },
              (error: unknown) => {
                done();
                reject(error);
              },
            );
          });
          this.#startNext();
        });
      },
      leave: () => {
        if (used) return;
        used = true;
        release();
      },
    };
  }

  /**
   * Starts ready checks while there is room, the least recently served address first (the first come among equals),
   * leaving out an address with its share of threads running.
   */
  #startNext(): void {
    while (this.#running < this.#options.concurrency) {
      let next: AddressState | undefined;
      for (const state of this.#addresses.values()) {
        if (state.ready.length === 0 || state.running >= this.#runningPerAddress) continue;
        if (next === undefined || state.servedAt < next.servedAt) next = state;
      }
      if (!next) return;
      const start = next.ready.shift() as () => void;
      this.#starts += 1;
      next.servedAt = this.#starts;
      next.running += 1;
      this.#running += 1;
      start();
    }
  }
}
