/**
 * The nonces of sealed round states that were used (rounds.ts): each `requestState` continues
 * its call once. Resending the same later-round request would otherwise run the handler's last
 * round again — its writes included — without what runs once per call (audit line, rate count).
 *
 * - In this process (the default): a bounded map of nonces until they expire. When it is full of
 *   unexpired nonces, a new round is refused (`'full'`) rather than a nonce forgotten early.
 * - Shared (`<PREFIX>_REDIS_URL`, redis-rounds.ts): `SET <prefix>:round:<nonce> 1 NX PX <ttl>`, so
 *   a state used on one instance is refused on every other; Redis unreachable ⇒ the claim throws
 *   `SharedStateError` and the round is refused (fail closed).
 *
 * This file is copied verbatim into every generated project.
 */

/** Outcome of claiming a nonce: first use, used before, or no room to remember it. */
export type NonceClaim = 'fresh' | 'used' | 'full';

/** Where used nonces are remembered. */
export type RoundNonces = {
  /** Claims `nonce` for `ttlMs` (at least as long as its state stays valid). */
  claim(nonce: string, ttlMs: number): Promise<NonceClaim>;
};

/** Default bound of the in-process store: nonces of rounds answered in the last 15 minutes. */
export const MAX_LOCAL_NONCES = 100_000;

/** Used nonces in this process, each until it expires; at most `max` at once. */
export class LocalRoundNonces implements RoundNonces {
  readonly #until = new Map<string, number>();
  readonly #max: number;
  readonly #now: () => number;

  constructor(options: { max?: number; now?: () => number } = {}) {
    this.#max = options.max ?? MAX_LOCAL_NONCES;
    this.#now = options.now ?? Date.now;
  }

  /** How many nonces are remembered now. */
  get size(): number {
    return this.#until.size;
  }

  async claim(nonce: string, ttlMs: number): Promise<NonceClaim> {
    const now = this.#now();
    const until = this.#until.get(nonce);
    if (until !== undefined && until > now) return 'used';
    if (until !== undefined) this.#until.delete(nonce);
    if (this.#until.size >= this.#max) this.#sweep(now);
    if (this.#until.size >= this.#max) return 'full';
    this.#until.set(nonce, now + ttlMs);
    return 'fresh';
  }

  /** Drops the expired nonces (insertion order is not expiry order when ttls differ: walk them all). */
  #sweep(now: number): void {
    for (const [n, until] of this.#until) if (until <= now) this.#until.delete(n);
  }
}
