/**
 * Used round-state nonces shared by every instance through Redis (round-nonces.ts):
 * `SET <prefix>:round:<nonce> 1 NX PX <ttl>` — set means first use, not set means used before.
 * A failed command throws `SharedStateError` naming the cause (the round is refused: fail closed).
 *
 * This file is copied verbatim into every generated project; it is loaded only when
 * `<PREFIX>_REDIS_URL` is set.
 */

import type { NonceClaim, RoundNonces } from '../server/round-nonces.js';
import type { SharedRedis } from './redis.js';
import { unavailable } from './redis.js';

/** The round nonces in Redis. */
export class RedisRoundNonces implements RoundNonces {
  readonly #redis: SharedRedis;

  constructor(redis: SharedRedis) {
    this.#redis = redis;
  }

  async claim(nonce: string, ttlMs: number): Promise<NonceClaim> {
    let set: string | null;
    try {
      set = await this.#redis.client.set(this.#redis.key('round', nonce), '1', 'PX', Math.max(1, Math.ceil(ttlMs)), 'NX');
    } catch (err) {
      throw unavailable(this.#redis.settings, err);
    }
    return set === 'OK' ? 'fresh' : 'used';
  }
}
