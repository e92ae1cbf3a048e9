/**
 * A circuit breaker per key (an integration), docs/resilience.md. Promises, for every store:
 * - closed: calls are admitted; `failureThreshold` (5) failed calls in a row, all within `failureWindowMs` (30 s) of
 *   the latest, open it. A success starts the count over. A call counts once, after its retries (the caller's job).
 * - open for `openMs` (30 s): calls are refused with the whole seconds left (at least 1), for `Retry-After`.
 * - half_open after that: the first caller gets the one trial (`trial: true`); callers meanwhile are refused with
 *   the seconds left on the trial's lease. The trial's success closes the breaker, its failure opens it for another
 *   `openMs`. A trial that never reports (its process died, a bug) loses its lease after `trialLeaseMs` (60 s, the
 *   default `timeout_seconds`): the next caller becomes the trial. A call longer than that can overlap one more
 *   trial, which costs one more request to a failing upstream; a shorter lease would make that common, a longer one
 *   would keep an integration refused that long after a crash.
 * - While open or half_open, only a trial's report counts: calls admitted before the breaker opened report news
 *   older than the decision to open. A trial's report always counts (the newest evidence wins), even one whose lease
 *   had passed.
 * - A half-open breaker nobody calls is forgotten `halfOpenKeepMs` (10 min) after its open period ended: the next
 *   call runs as in a closed breaker. This is what lets every key expire (in Redis, by TTL) instead of staying forever.
 *
 * Stores: in memory, per instance (here), bounded, keeping state only for keys with failures or open; in Redis,
 * shared by instances (breaker-redis.ts), with this store as its fallback. The transition rules below are pure
 * functions over an entry; the Redis store runs the same rules as Lua scripts, and one test suite runs on both.
 *
 * Own code rather than cockatiel's CircuitBreakerPolicy: cockatiel keeps its state in the process and has no store
 * interface, and a breaker shared through Redis needs its transitions to be atomic scripts over shared keys; what is
 * left for a library to do in memory is the few functions below.
 */

export type CircuitState = 'closed' | 'open' | 'half_open';

/**
 * An admitted call (`trial`: it is the one call that decides a half-open breaker; `quiet`: the breaker holds nothing
 * for the key, closed without failures, so a success changes nothing and need not be recorded), or a refusal.
 */
export type Admission =
  | { readonly ok: true; readonly trial: boolean; readonly quiet: boolean }
  | { readonly ok: false; readonly retryAfterSeconds: number };

/** How an admitted call ended: `trial` as `admit` said. */
export interface CallOutcome {
  readonly success: boolean;
  readonly trial: boolean;
}

/** The breakers of every integration, in one store. */
export interface CircuitBreakers {
  /** Whether a call may go ahead now. An admitted call must be `record`ed once it ended. */
  admit(key: string): Promise<Admission>;
  /** Resolves true when this outcome opened the breaker (the openings metric). */
  record(key: string, outcome: CallOutcome): Promise<boolean>;
  /** What `test` reports as `details.circuit`; it changes nothing. */
  state(key: string): Promise<CircuitState>;
  /** Drops the key's state: its integration changed or was deleted. */
  forget(key: string): Promise<void>;
}

export interface BreakerOptions {
  /** Failed calls in a row that open the breaker; default 5. */
  readonly failureThreshold?: number;
  /** They must all fall within this span; default 30 s. */
  readonly failureWindowMs?: number;
  /** How long an open breaker refuses calls; default 30 s. */
  readonly openMs?: number;
  /** How long a trial may run before another caller takes its place; default 60 s. */
  readonly trialLeaseMs?: number;
  /** How long a half-open breaker nobody calls is remembered; default 10 min. */
  readonly halfOpenKeepMs?: number;
  /** The clock, ms; default Date.now. (The Redis store uses Redis's clock unless this is given: breaker-redis.ts.) */
  readonly now?: () => number;
}

export interface BreakerSettings {
  readonly failureThreshold: number;
  readonly failureWindowMs: number;
  readonly openMs: number;
  readonly trialLeaseMs: number;
  readonly halfOpenKeepMs: number;
}

/** The options with their defaults, checked once. */
export function breakerSettings(options: BreakerOptions = {}): BreakerSettings {
  const settings = {
    failureThreshold: options.failureThreshold ?? 5,
    failureWindowMs: options.failureWindowMs ?? 30_000,
    openMs: options.openMs ?? 30_000,
    trialLeaseMs: options.trialLeaseMs ?? 60_000,
    halfOpenKeepMs: options.halfOpenKeepMs ?? 600_000,
  };
  for (const [name, value] of Object.entries(settings)) {
    if (!Number.isInteger(value) || value < 1) throw new RangeError(`breaker: ${name} must be a positive integer, not ${value}`);
  }
  return Object.freeze(settings);
}

/** One key's state. Absent (undefined) is closed without failures. */
export interface BreakerEntry {
  /** When the failures in a row happened, oldest first (closed only; fewer than the threshold). */
  readonly failures: readonly number[];
  /** Refusing calls until then (open), then half_open; undefined when closed. */
  readonly openUntil?: number;
  /** A trial is out until then (half_open). */
  readonly trialUntil?: number;
  /** The entry is forgotten then: it says nothing any more. */
  readonly expiresAt: number;
}

/** A refusal for `ms` more: whole seconds, at least 1 (Retry-After: 0 would invite an immediate retry). */
export function refusal(ms: number): Admission {
  return { ok: false, retryAfterSeconds: Math.max(1, Math.ceil(ms / 1000)) };
}

/** The entry as it reads at `now`: undefined once expired. */
export function live(entry: BreakerEntry | undefined, now: number): BreakerEntry | undefined {
  return entry !== undefined && entry.expiresAt > now ? entry : undefined;
}

export function stateOf(entry: BreakerEntry | undefined, now: number): CircuitState {
  if (entry?.openUntil === undefined) return 'closed';
  return now < entry.openUntil ? 'open' : 'half_open';
}

function opened(now: number, settings: BreakerSettings): BreakerEntry {
  return { failures: [], openUntil: now + settings.openMs, expiresAt: now + settings.openMs + settings.halfOpenKeepMs };
}

/** The admission at `now`, and the entry after it (a new trial's lease). */
export function admitted(
  entry: BreakerEntry | undefined,
  now: number,
  settings: BreakerSettings,
): { admission: Admission; entry: BreakerEntry | undefined } {
  if (entry?.openUntil === undefined) return { admission: { ok: true, trial: false, quiet: entry === undefined }, entry };
  if (now < entry.openUntil) return { admission: refusal(entry.openUntil - now), entry };
  if (entry.trialUntil !== undefined && now < entry.trialUntil) return { admission: refusal(entry.trialUntil - now), entry };
  const trialUntil = now + settings.trialLeaseMs;
  return {
    admission: { ok: true, trial: true, quiet: false },
    entry: { ...entry, trialUntil, expiresAt: Math.max(entry.expiresAt, trialUntil) },
  };
}

/** The entry after a call's outcome was recorded at `now` (undefined: closed without failures). */
export function recorded(
  entry: BreakerEntry | undefined,
  outcome: CallOutcome,
  now: number,
  settings: BreakerSettings,
): BreakerEntry | undefined {
  if (entry?.openUntil !== undefined) {
    if (!outcome.trial) return entry;
    return outcome.success ? undefined : opened(now, settings);
  }
  if (outcome.success) return undefined;
  const failures = [...(entry?.failures ?? []).filter((at) => at >= now - settings.failureWindowMs), now];
  if (failures.length >= settings.failureThreshold) return opened(now, settings);
  return { failures, expiresAt: now + settings.failureWindowMs };
}

/**
 * The breakers of this instance, in memory: an entry only for a key with recent failures or an open (or half-open)
 * breaker, dropped when it closes or expires; at most `maxKeys` entries (default 10,000), the least recently used
 * dropped first (a dropped key reads closed: the bound errs towards letting calls through).
 *
 * @example
 * const breakers = new MemoryBreakers();
 * const admission = await breakers.admit('acme/crm');
 * if (!admission.ok) throw circuitOpen(admission.retryAfterSeconds);
 * const ok = await call().then(() => true, () => false);
 * await breakers.record('acme/crm', { success: ok, trial: admission.trial });
 */
export class MemoryBreakers implements CircuitBreakers {
  readonly name = 'memory-breakers';
  readonly settings: BreakerSettings;
  readonly #now: () => number;
  readonly #maxKeys: number;
  /** Insertion order is recency: a write moves the key to the end, the first entry is the least recently used. */
  readonly #entries = new Map<string, BreakerEntry>();

  constructor(options: BreakerOptions & { readonly maxKeys?: number } = {}) {
    this.settings = breakerSettings(options);
    this.#now = options.now ?? Date.now;
    this.#maxKeys = options.maxKeys ?? 10_000;
    if (!Number.isInteger(this.#maxKeys) || this.#maxKeys < 1)
      throw new RangeError('breaker: maxKeys must be a positive integer');
  }

  /** Keys with state kept. */
  get size(): number {
    return this.#entries.size;
  }

  async admit(key: string): Promise<Admission> {
    return this.admitNow(key);
  }

  async record(key: string, outcome: CallOutcome): Promise<boolean> {
    return this.recordNow(key, outcome);
  }

  async state(key: string): Promise<CircuitState> {
    return this.stateNow(key);
  }

  async forget(key: string): Promise<void> {
    this.#entries.delete(key);
  }

  /** admit, synchronously: what the Redis store's fallback calls. */
  admitNow(key: string): Admission {
    const now = this.#now();
    const before = this.#read(key, now);
    const { admission, entry } = admitted(before, now, this.settings);
    if (entry !== before) this.#write(key, entry);
    return admission;
  }

  /** Whether the outcome opened the breaker. */
  recordNow(key: string, outcome: CallOutcome): boolean {
    const now = this.#now();
    const before = this.#read(key, now);
    const entry = recorded(before, outcome, now, this.settings);
    if (entry === before) return false;
    this.#write(key, entry);
    return entry?.openUntil === now + this.settings.openMs;
  }

  stateNow(key: string): CircuitState {
    const now = this.#now();
    return stateOf(this.#read(key, now), now);
  }

  /** Forgets every key: the Redis store's fallback starts clean after each outage. */
  clear(): void {
    this.#entries.clear();
  }

  #read(key: string, now: number): BreakerEntry | undefined {
    const entry = this.#entries.get(key);
    if (entry === undefined) return undefined;
    if (live(entry, now)) return entry;
    this.#entries.delete(key);
    return undefined;
  }

  #write(key: string, entry: BreakerEntry | undefined): void {
    this.#entries.delete(key);
    if (entry === undefined) return;
    this.#entries.set(key, entry);
    if (this.#entries.size > this.#maxKeys) this.#entries.delete(this.#entries.keys().next().value as string);
  }
}
