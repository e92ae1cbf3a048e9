/**
 * What the connector knows of an upstream's schema (docs/execute.md#schema-aware-checking): a schema built from its
 * introspection answer, or why there is none (the upstream refused introspection, its answer was over the bound).
 */
export type UpstreamSchema<S> =
  | { readonly available: true; readonly schema: S; readonly fetchedAt: string; readonly bytes: number }
  | { readonly available: false; readonly reason: string; readonly fetchedAt: string; readonly bytes: number };

interface Entry<S> {
  readonly version: string;
  readonly loadedAt: number;
  readonly ttlMs: number;
  readonly value: Promise<UpstreamSchema<S>>;
  /** The value once it settled: what `peek` answers without a promise. */
  settled: UpstreamSchema<S> | undefined;
  /** Bytes counted in the cache's total (0 until settled). */
  bytes: number;
}

export interface SchemaCacheOptions {
  /** The bound on the bytes of every cached schema together (IX_GRAPHQL_SCHEMA_CACHE_MB). */
  readonly maxBytes: number;
  /** How long "no schema" is kept at most, whatever the integration's TTL: a refusal may be mended upstream. */
  readonly unavailableTtlMs?: number;
}

/**
 * Upstream schemas per integration, bounded by bytes (the least recently used dropped first), each kept for its
 * integration's `schema_ttl_seconds` and replaced when the integration's version changes (every instance reads a
 * changed integration within a second, and with it a new version). Concurrent first calls share one introspection;
 * a load that fails (the upstream unreachable) is not kept, so the next call tries again. A schema larger than the
 * whole bound is used for its call and not kept.
 */
export class SchemaCache<S> {
  readonly #entries = new Map<string, Entry<S>>();
  readonly #maxBytes: number;
  readonly #unavailableTtlMs: number;
  #bytes = 0;
  /** Introspections started (misses) and calls answered from the cache, for /metrics. */
  loads = 0;
  hits = 0;

  constructor(options: SchemaCacheOptions) {
    this.#maxBytes = options.maxBytes;
    this.#unavailableTtlMs = options.unavailableTtlMs ?? 60_000;
  }

  get size(): number {
    return this.#entries.size;
  }

  /** Bytes of the schemas kept now. */
  get bytes(): number {
    return this.#bytes;
  }

  /** A settled, current entry, without a promise (the common case: a call with its schema cached). */
  peek(key: string, version: string, now = Date.now()): UpstreamSchema<S> | undefined {
    const entry = this.#current(key, version, now);
    if (entry?.settled === undefined) return undefined;
    this.#touch(key, entry);
    this.hits += 1;
    return entry.settled;
  }

  /** The current entry's value, or `load`'s, kept for `ttlMs`. */
  get(
    key: string,
    version: string,
    ttlMs: number,
    load: () => Promise<UpstreamSchema<S>>,
    now = Date.now(),
  ): Promise<UpstreamSchema<S>> {
    const entry = this.#current(key, version, now);
    if (entry) {
      this.#touch(key, entry);
      this.hits += 1;
      return entry.value;
    }
    return this.#load(key, version, ttlMs, load(), now);
  }

  /** Keeps a value loaded elsewhere (a `test`'s fresh introspection), in place of what was kept. */
  put(key: string, version: string, ttlMs: number, value: UpstreamSchema<S>, now = Date.now()): void {
    void this.#load(key, version, ttlMs, Promise.resolve(value), now);
  }

  #load(key: string, version: string, ttlMs: number, value: Promise<UpstreamSchema<S>>, now: number) {
    this.loads += 1;
    const entry: Entry<S> = { version, loadedAt: now, ttlMs, value, settled: undefined, bytes: 0 };
    const earlier = this.#entries.get(key);
    if (earlier) this.#drop(key, earlier);
    this.#entries.set(key, entry);
    value.then(
      (settled) => {
        if (this.#entries.get(key) !== entry) return;
        entry.settled = settled;
        if (settled.bytes > this.#maxBytes) {
          this.#drop(key, entry);
          return;
        }
        entry.bytes = settled.bytes;
        this.#bytes += settled.bytes;
        this.#evict(key);
      },
      () => {
        if (this.#entries.get(key) === entry) this.#drop(key, entry);
      },
    );
    return value;
  }

  #current(key: string, version: string, now: number): Entry<S> | undefined {
    const entry = this.#entries.get(key);
    if (!entry) return undefined;
    const ttlMs = entry.settled?.available === false ? Math.min(entry.ttlMs, this.#unavailableTtlMs) : entry.ttlMs;
    if (entry.version === version && now - entry.loadedAt < ttlMs) return entry;
    if (entry.settled !== undefined) this.#drop(key, entry);
    return undefined;
  }

  /** Map order is insertion order: re-inserting marks the entry most recently used. */
  #touch(key: string, entry: Entry<S>): void {
    this.#entries.delete(key);
    this.#entries.set(key, entry);
  }

  #drop(key: string, entry: Entry<S>): void {
    this.#entries.delete(key);
    this.#bytes -= entry.bytes;
    entry.bytes = 0;
  }

  /** The least recently used settled entries go until the total fits; `keep` (just added) goes last. */
  #evict(keep: string): void {
    for (const [key, entry] of this.#entries) {
      if (this.#bytes <= this.#maxBytes) return;
      if (key !== keep && entry.settled !== undefined) this.#drop(key, entry);
    }
  }
}
