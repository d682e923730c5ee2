/**
 * The policy limits' counters (counters.ts) in Redis, shared by every instance with the same
 * `<PREFIX>_REDIS_URL` and `<PREFIX>_REDIS_PREFIX`: `perMinute` (per client and overall) and
 * `maxConcurrent` hold across all of them, not per instance.
 *
 * - Rates: rate-limiter-flexible's `RateLimiterRedis` (a maintained library; its counting is one
 *   atomic script per call): a window of `windowMs` opens at the first counted call of a key, and
 *   at most `limit` calls are admitted in it, over all instances. (The in-process counters slide
 *   the window instead: the first window is the same, the next may open up to a minute later.)
 *   `retryAfterMs` is the time until the window closes.
 * - Slots (`maxConcurrent`): a slot is a lease, a member of a sorted set scored by its expiry on
 *   Redis's clock. Taking one is one script: drop expired leases, count, add if under the limit.
 *   The holder renews its lease every third of `leaseMs` while the call runs and removes it when
 *   the call ends; when an instance dies mid-call its leases expire within `leaseMs`
 *   (`<PREFIX>_REDIS_LEASE_MS`, default 30 s), so a crash never holds capacity for longer. While
 *   Redis cannot be reached a lease cannot be renewed, so it may lapse before its call ends.
 *   (No library does leases with expiry, hence the two short scripts below.)
 * - Failure: a command that fails or passes `<PREFIX>_REDIS_TIMEOUT_MS` throws `SharedStateError`
 *   (limits.ts refuses the call, naming the cause) unless `<PREFIX>_REDIS_FAIL_OPEN=limits`: then
 *   the call passes that limit, and a warning is logged (at most once a minute).
 *
 * This file is copied verbatim into every generated project; it is loaded only when the URL is set.
 */
import { randomBytes } from 'node:crypto';
import { RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import { log } from '../core/log.js';
import type { Counters, HitResult } from '../policy/counters.js';
import { INSTANCE_ID } from '../shared/shared-state.js';
import type { SharedRedis } from './redis.js';
import { unavailable } from './redis.js';

/** Takes a lease: KEYS[1] the set; ARGV limit, lease ms, member. 1 taken, 0 all taken. Time is Redis's. */
const TAKE = `local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[1]) then return 0 end
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[3])
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[2]) * 2)
return 1`;

/** Renews a lease still held: KEYS[1] the set; ARGV lease ms, member. */
const RENEW = `local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
if redis.call('ZSCORE', KEYS[1], ARGV[2]) == false then return 0 end
redis.call('ZADD', KEYS[1], 'XX', now + tonumber(ARGV[1]), ARGV[2])
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[1]) * 2)
return 1`;

/** Options of {@link RedisCounters}. */
export type RedisCountersOptions = {
  /** Lifetime of a slot lease not renewed, in ms (default: the settings'). */
  readonly leaseMs?: number;
  /** Let calls pass a limit while Redis cannot answer (default: the settings'). */
  readonly failOpen?: boolean;
};

/** Counters in Redis (module comment). */
export class RedisCounters implements Counters {
  readonly #redis: SharedRedis;
  readonly #leaseMs: number;
  readonly #failOpen: boolean;
  readonly #limiters = new Map<string, RateLimiterRedis>();
  #seq = 0;
  #warned = 0;

  constructor(redis: SharedRedis, options: RedisCountersOptions = {}) {
    this.#redis = redis;
    this.#leaseMs = options.leaseMs ?? redis.settings.leaseMs;
    this.#failOpen = options.failOpen ?? redis.settings.failOpenLimits;
  }

  /** A failure: thrown (fail closed) or logged and passed (fail open). */
  #failed(err: unknown): void {
    const error = unavailable(this.#redis.settings, err);
    if (!this.#failOpen) throw error;
    const now = Date.now();
    if (now - this.#warned >= 60_000) {
      this.#warned = now;
      log('warn', `limits: ${error.message}; calls pass their limits meanwhile (${this.#redis.settings.variables.failOpen}=limits)`);
    }
  }

  async acquire(key: string, limit: number): Promise<(() => void) | undefined> {
    const set = this.#redis.key('slots', key);
    const member = `${INSTANCE_ID}:${++this.#seq}:${randomBytes(4).toString('hex')}`;
    const client = this.#redis.client;
    try {
      const taken = await client.eval(TAKE, 1, set, limit, this.#leaseMs, member);
      if (taken !== 1) return undefined;
    } catch (err) {
      this.#failed(err);
      return () => undefined;
    }
    const renew = setInterval(
      () => {
        client.eval(RENEW, 1, set, this.#leaseMs, member).catch(() => undefined);
      },
      Math.max(1, Math.floor(this.#leaseMs / 3)),
    );
    renew.unref();
    let released = false;
    return () => {
      if (released) return;
      released = true;
      clearInterval(renew);
      // a lease that cannot be removed now expires on its own
      client.zrem(set, member).catch(() => undefined);
    };
  }

  async hit(key: string, limit: number, windowMs: number): Promise<HitResult> {
    const limiter = this.#limiter(limit, windowMs);
    try {
      await limiter.consume(key, 1);
      return { ok: true };
    } catch (err) {
      if (err instanceof RateLimiterRes) return { ok: false, retryAfterMs: Math.max(1, err.msBeforeNext) };
      this.#failed(err);
      return { ok: true };
    }
  }

  /** The limiter of `limit` calls per `windowMs` (one per distinct pair; keys carry the tool and client). */
  #limiter(limit: number, windowMs: number): RateLimiterRedis {
    const id = `${limit}/${windowMs}`;
    let limiter = this.#limiters.get(id);
    if (limiter === undefined) {
      limiter = new RateLimiterRedis({
        storeClient: this.#redis.client,
        keyPrefix: this.#redis.key('rate', String(windowMs), String(limit)),
        points: limit,
        // whole seconds are all the library takes: a window of less than a second is one second
        duration: Math.max(1, Math.round(windowMs / 1000)),
        rejectIfRedisNotReady: true,
      });
      this.#limiters.set(id, limiter);
    }
    return limiter;
  }
}
