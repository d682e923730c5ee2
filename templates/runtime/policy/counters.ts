/**
 * The counters behind the policy layer's limits (limits.ts): concurrency slots and sliding-window
 * rates, behind a small interface so that a store shared by several instances can replace the
 * in-process default without touching the pipeline.
 *
 * {@link MemoryCounters} counts per process: with several instances behind a load balancer and no
 * shared store, each enforces the limits on the calls it serves (a limit of N per minute is N per
 * instance). With `<PREFIX>_REDIS_URL`, redis-counters.ts shares them (its methods answer
 * asynchronously, and throw `SharedStateError` when Redis cannot answer).
 *
 * This file is copied verbatim into every generated project with `policy.limits`.
 */

/** The outcome of {@link Counters.hit}. */
export type HitResult = { readonly ok: true } | { readonly ok: false; readonly retryAfterMs: number };

/** Counters keyed by strings (limits.ts builds keys from the tool name and the client identity). */
export interface Counters {
  /**
   * Takes one of `limit` slots of `key`: a function that gives it back (calling it again does
   * nothing), or `undefined` when all `limit` slots are taken.
   */
  acquire(key: string, limit: number): (() => void) | undefined | Promise<(() => void) | undefined>;
  /**
   * Counts one event of `key` at `now` (ms) unless `limit` events already happened in the
   * `windowMs` before `now` (a sliding window); then nothing is counted and `retryAfterMs` says
   * when the oldest of them leaves the window.
   */
  hit(key: string, limit: number, windowMs: number, now: number): HitResult | Promise<HitResult>;
}

/** Options of {@link MemoryCounters}. */
export type MemoryCountersOptions = {
  /** Most keys with rate history kept (default 10 000); past it, the least recently hit key is forgotten. */
  readonly maxKeys?: number;
};

/**
 * The in-process {@link Counters}. Memory is bounded: a key's rate history holds at most `limit`
 * timestamps (refused events are not recorded) and is pruned as the window slides; keys whose
 * window is empty are dropped, and at most `maxKeys` keys are kept. Slots exist only while held.
 */
export class MemoryCounters implements Counters {
  readonly #slots = new Map<string, number>();
  /** Timestamps of counted events per key, oldest first; Map order = least recently hit first. */
  readonly #hits = new Map<string, number[]>();
  readonly #maxKeys: number;

  constructor(options: MemoryCountersOptions = {}) {
    this.#maxKeys = Math.max(1, options.maxKeys ?? 10_000);
  }

  acquire(key: string, limit: number): (() => void) | undefined {
    const held = this.#slots.get(key) ?? 0;
    if (held >= limit) return undefined;
    this.#slots.set(key, held + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const now = (this.#slots.get(key) ?? 1) - 1;
      if (now <= 0) this.#slots.delete(key);
      else this.#slots.set(key, now);
    };
  }

  hit(key: string, limit: number, windowMs: number, now: number): HitResult {
    const since = now - windowMs;
    let times = this.#hits.get(key);
    if (times !== undefined) {
      prune(times, since);
      // keep the map in least-recently-hit order
      this.#hits.delete(key);
    } else {
      times = [];
    }
    if (times.length >= limit) {
      this.#hits.set(key, times);
      const oldest = times[times.length - limit]!;
      return { ok: false, retryAfterMs: Math.max(1, oldest + windowMs - now) };
    }
    times.push(now);
    this.#hits.set(key, times);
    if (this.#hits.size > this.#maxKeys) this.#evict(since);
    return { ok: true };
  }

  /** Drops keys whose window is empty; if still too many, the least recently hit ones. */
  #evict(since: number): void {
    for (const [key, times] of this.#hits) {
      prune(times, since);
      if (times.length === 0) this.#hits.delete(key);
    }
    for (const key of this.#hits.keys()) {
      if (this.#hits.size <= this.#maxKeys) break;
      this.#hits.delete(key);
    }
  }

  /** How many keys have rate history and how many have slots held (for tests and diagnostics). */
  get size(): { readonly rateKeys: number; readonly slotKeys: number } {
    return { rateKeys: this.#hits.size, slotKeys: this.#slots.size };
  }
}

/** Removes the timestamps at or before `since` from the front of `times` (sorted ascending). */
function prune(times: number[], since: number): void {
  let drop = 0;
  while (drop < times.length && times[drop]! <= since) drop++;
  if (drop > 0) times.splice(0, drop);
}
