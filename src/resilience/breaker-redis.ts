/**
 * The circuit breakers of breaker.ts shared by every instance through Redis (docs/resilience.md#circuit-breaker: "shared by instances
 * through Redis when REDIS_URL is set"). Promises, beyond breaker.ts's:
 * - Each transition is one Lua script over one hash per key, so it is atomic across instances: of 100 concurrent
 *   admits to a half-open breaker, on any mix of instances, exactly one is the trial.
 * - Every key has a TTL (the entry's own expiry: the failure window, or the open period plus `halfOpenKeepMs`, or a
 *   trial's lease), so nothing is left behind; keys are `${prefix}:breaker:${key}`.
 * - When Redis does not answer (not connected, or a command fails), the instance falls back to its own in-memory
 *   breakers and says so once in the log; when Redis answers again it says so and goes back, dropping the fallback's
 *   state. During an outage each instance breaks on its own.
 *
 * The clock: Redis's (`TIME`, read inside each script). Instances' clocks differ, and the shared state holds instants
 * (until when open, until when a trial's lease runs); read against each caller's clock, an instance a few seconds
 * ahead would take the trial early, one behind would refuse longer, and failures from several instances would be
 * spaced by their skew. With one clock for the shared state there is no skew to reason about. Given `now` (tests), the
 * scripts use it instead, so a test can step through every transition without waiting.
 */
import { createHash } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import type { Redis } from 'ioredis';
import {
  type Admission,
  type BreakerOptions,
  type BreakerSettings,
  breakerSettings,
  type CallOutcome,
  type CircuitBreakers,
  type CircuitState,
  MemoryBreakers,
  refusal,
} from './breaker.ts';

/**
 * The Lua of breaker.ts's rules (admitted, recorded, stateOf). One hash per key: `f` the failures in a row (ms, comma
 * separated, oldest first), `o` open until, `t` the trial's lease until, `e` when the entry expires (also its TTL).
 * ARGV[1] is the caller's clock in ms, or empty for Redis's own.
 */
const prelude = `
local function clock(given)
  local now = tonumber(given)
  if now then return now end
  if redis.replicate_commands then redis.replicate_commands() end
  local time = redis.call('TIME')
  return tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
end
local function ms(value) return string.format('%.0f', value) end
local function load(key, now)
  local v = redis.call('HMGET', key, 'f', 'o', 't', 'e')
  local expires = tonumber(v[4])
  if not expires then return nil end
  if expires <= now then redis.call('DEL', key) return nil end
  return { f = v[1] or '', o = tonumber(v[2]), t = tonumber(v[3]), e = expires }
end
local function open(key, now, openMs, keepMs)
  redis.call('DEL', key)
  redis.call('HSET', key, 'o', ms(now + openMs), 'e', ms(now + openMs + keepMs))
  redis.call('PEXPIRE', key, openMs + keepMs)
end
`;

/** ARGV: now, trialLeaseMs. Returns {1, trial (0|1), quiet (0|1)} when admitted, {0, ms left} when refused. */
const admitScript = `${prelude}
local now = clock(ARGV[1])
local lease = tonumber(ARGV[2])
local s = load(KEYS[1], now)
if not s then return {1, 0, 1} end
if not s.o then return {1, 0, 0} end
if now < s.o then return {0, s.o - now} end
if s.t and now < s.t then return {0, s.t - now} end
local expires = math.max(s.e, now + lease)
redis.call('HSET', KEYS[1], 't', ms(now + lease), 'e', ms(expires))
redis.call('PEXPIRE', KEYS[1], expires - now)
return {1, 1, 0}
`;

/**
 * ARGV: now, success (0|1), trial (0|1), failureThreshold, failureWindowMs, openMs, halfOpenKeepMs. Returns 2 when the
 * outcome opened the breaker, else 1 (recorded) or 0 (not counted).
 */
const recordScript = `${prelude}
local now = clock(ARGV[1])
local success, trial = ARGV[2] == '1', ARGV[3] == '1'
local threshold, window, openMs, keepMs = tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6]), tonumber(ARGV[7])
local s = load(KEYS[1], now)
if s and s.o then
  if not trial then return 0 end
  if success then redis.call('DEL', KEYS[1]) return 1 end
  open(KEYS[1], now, openMs, keepMs)
  return 2
end
if success then
  if s then redis.call('DEL', KEYS[1]) end
  return 1
end
local failures = {}
for at in string.gmatch(s and s.f or '', '[^,]+') do
  if tonumber(at) >= now - window then table.insert(failures, at) end
end
table.insert(failures, ms(now))
if #failures >= threshold then open(KEYS[1], now, openMs, keepMs) return 2 end
redis.call('DEL', KEYS[1])
redis.call('HSET', KEYS[1], 'f', table.concat(failures, ','), 'e', ms(now + window))
redis.call('PEXPIRE', KEYS[1], window)
return 1
`;

/** ARGV: now. Returns 0 closed, 1 open, 2 half_open. */
const stateScript = `${prelude}
local now = clock(ARGV[1])
local s = load(KEYS[1], now)
if not s or not s.o then return 0 end
if now < s.o then return 1 end
return 2
`;

const states: readonly CircuitState[] = ['closed', 'open', 'half_open'];

/** A script run by its SHA1, sent whole only when Redis does not have it yet (after a restart or a SCRIPT FLUSH). */
class Script {
  readonly #source: string;
  readonly #sha: string;

  constructor(source: string) {
    this.#source = source;
    this.#sha = createHash('sha1').update(source).digest('hex');
  }

  async run(client: Redis, key: string, args: (string | number)[]): Promise<unknown> {
    try {
      return await client.evalsha(this.#sha, 1, key, ...args);
    } catch (error) {
      if (!(error instanceof Error) || !error.message.startsWith('NOSCRIPT')) throw error;
      return client.eval(this.#source, 1, key, ...args);
    }
  }
}

const scripts = { admit: new Script(admitScript), record: new Script(recordScript), state: new Script(stateScript) };

export interface RedisBreakersOptions extends BreakerOptions {
  /** The fallback's bound while Redis is away (MemoryBreakers). */
  readonly maxKeys?: number;
}

/**
 * Circuit breakers in Redis, shared by every instance that uses the same Redis and prefix.
 *
 * @example
 * const breakers = new RedisBreakers(redis, config.redisPrefix, app.log);
 * await breakers.admit(JSON.stringify([tenantId, integrationId]));
 */
export class RedisBreakers implements CircuitBreakers {
  readonly name = 'redis-breakers';
  readonly settings: BreakerSettings;
  readonly #client: Redis;
  readonly #prefix: string;
  readonly #log: Pick<FastifyBaseLogger, 'warn' | 'info'>;
  /** Given: the scripts use it. Not given: Redis's TIME (see the module comment). */
  readonly #now: (() => number) | undefined;
  readonly #fallback: MemoryBreakers;
  #down = false;

  constructor(client: Redis, prefix: string, log: Pick<FastifyBaseLogger, 'warn' | 'info'>, options: RedisBreakersOptions = {}) {
    this.settings = breakerSettings(options);
    this.#client = client;
    this.#prefix = prefix;
    this.#log = log;
    this.#now = options.now;
    this.#fallback = new MemoryBreakers(options);
  }

  /** Whether the last call went to the in-memory fallback (Redis away). */
  get degraded(): boolean {
    return this.#down;
  }

  admit(key: string): Promise<Admission> {
    return this.#shared(
      async () => {
        const [admitted, value, quiet] = (await scripts.admit.run(this.#client, this.#key(key), [
          this.#clock(),
          this.settings.trialLeaseMs,
        ])) as [number, number, number?];
        return admitted === 1 ? { ok: true, trial: value === 1, quiet: quiet === 1 } : refusal(value);
      },
      () => this.#fallback.admitNow(key),
    );
  }

  record(key: string, outcome: CallOutcome): Promise<boolean> {
    const { failureThreshold, failureWindowMs, openMs, halfOpenKeepMs } = this.settings;
    return this.#shared(
      async () => {
        const result = await scripts.record.run(this.#client, this.#key(key), [
          this.#clock(),
          outcome.success ? 1 : 0,
          outcome.trial ? 1 : 0,
          failureThreshold,
          failureWindowMs,
          openMs,
          halfOpenKeepMs,
        ]);
        return result === 2;
      },
      () => this.#fallback.recordNow(key, outcome),
    );
  }

  state(key: string): Promise<CircuitState> {
    return this.#shared(
      async () => states[(await scripts.state.run(this.#client, this.#key(key), [this.#clock()])) as number],
      () => this.#fallback.stateNow(key),
    );
  }

  async forget(key: string): Promise<void> {
    await this.#fallback.forget(key);
    await this.#shared(
      async () => {
        await this.#client.del(this.#key(key));
      },
      () => undefined,
    );
  }

  #key(key: string): string {
    return `${this.#prefix}:breaker:${key}`;
  }

  #clock(): string {
    return this.#now === undefined ? '' : String(Math.round(this.#now()));
  }

  /**
   * Runs `inRedis`; when Redis is not connected or the command fails, `inMemory` instead. Not connected is checked
   * first: with ioredis's offline queue on, a command would otherwise wait for the reconnection.
   */
  async #shared<T>(inRedis: () => Promise<T>, inMemory: () => T): Promise<T> {
    if (this.#client.status !== 'ready') {
      this.#wentDown(`not connected (${this.#client.status})`);
      return inMemory();
    }
    let result: T;
    try {
      result = await inRedis();
    } catch (error) {
      this.#wentDown(error instanceof Error ? error.message : String(error));
      return inMemory();
    }
    if (this.#down) {
      this.#down = false;
      this.#fallback.clear();
      this.#log.info('Redis answers again: circuit breakers are shared again');
    }
    return result;
  }

  #wentDown(why: string): void {
    if (this.#down) return;
    this.#down = true;
    this.#log.warn({ err: why }, 'circuit breakers cannot use Redis (REDIS_URL): each instance keeps its own until it is back');
  }
}
