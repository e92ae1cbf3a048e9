/**
 * Shares the event loop's time among tenants, so that one tenant's burst cannot make every other caller wait
 * (docs/limits.md#one-tenant-cannot-hold-the-instance). Work that a request starts (when it arrives) or resumes (when
 * an upstream has answered) first takes a turn. While the current turn of the loop has spent less than `sliceMs`
 * on such work, a turn is given at once, with no promise at all: an instance under ordinary load never waits here.
 * Past that, requests wait in a queue per tenant, and the queues are served round-robin, a slice per turn of the
 * loop, so timers and new connections (a health check, another tenant's call) are served between slices: 2,000
 * answers landing at once are worked through in slices instead of one block of a second.
 *
 * @example
 * const turns = new FairTurns();
 * const wait = turns.take('acme');
 * if (wait) await wait;
 */
export class FairTurns {
  readonly #sliceMs: number;
  /** When the current slice began (by the clock given, `performance.now()` by default). */
  #sliceStart = 0;
  /** A slice lasts until the loop's next check phase, when this immediate runs and the next take begins a new one. */
  #sliceMarked = false;
  readonly #waiting = new Map<string, (() => void)[]>();
  /** The tenants with waiters, served in this order, round-robin. */
  #order: string[] = [];
  #next = 0;
  #draining = false;
  #waiters = 0;

  readonly #now: () => number;

  /** `now`: the clock slices are measured by (tests give one that does not move under load). */
  constructor(sliceMs = 10, now: () => number = () => performance.now()) {
    this.#sliceMs = sliceMs;
    this.#now = now;
  }

  /** Requests waiting for a turn now (for /metrics and tests). */
  get waiting(): number {
    return this.#waiters;
  }

  /** Undefined when `key` may go on now; else a promise that resolves when its turn comes. */
  take(key: string): Promise<void> | undefined {
    const now = this.#now();
    this.#markSlice(now);
    if (this.#waiters === 0 && now - this.#sliceStart < this.#sliceMs) return undefined;
    return new Promise<void>((resolve) => {
      let queue = this.#waiting.get(key);
      if (!queue) {
        queue = [];
        this.#waiting.set(key, queue);
        this.#order.push(key);
      }
      queue.push(resolve);
      this.#waiters++;
      if (!this.#draining) {
        this.#draining = true;
        setImmediate(this.#drain);
      }
    });
  }

  #markSlice(now: number): void {
    if (this.#sliceMarked) return;
    this.#sliceMarked = true;
    this.#sliceStart = now;
    setImmediate(this.#endSlice);
  }

  readonly #endSlice = () => {
    this.#sliceMarked = false;
  };

  /**
   * One slice of waiters, in the loop's check phase: each released waiter's work runs in the microtasks after its
   * release, and the next is released after them, until the slice is spent; the rest wait for the next turn.
   */
  readonly #drain = () => {
    const start = this.#now();
    this.#sliceStart = start;
    const step = () => {
      if (this.#waiters === 0) {
        this.#draining = false;
        return;
      }
      if (this.#now() - start >= this.#sliceMs) {
        setImmediate(this.#drain);
        return;
      }
      this.#release();
      queueMicrotask(step);
    };
    step();
  };

  /** Releases the first waiter of the next tenant in round-robin order. */
  #release(): void {
    if (this.#next >= this.#order.length) this.#next = 0;
    const key = this.#order[this.#next];
    const queue = this.#waiting.get(key) as (() => void)[];
    const resolve = queue.shift() as () => void;
    this.#waiters--;
    if (queue.length === 0) {
      this.#waiting.delete(key);
      this.#order.splice(this.#next, 1);
    } else {
      this.#next++;
    }
    resolve();
  }
}
