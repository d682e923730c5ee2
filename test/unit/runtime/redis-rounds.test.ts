/**
 * Used round-state nonces in a real redis-server (redis-rounds.ts): a nonce claimed through one
 * connection (instance) is used for every other, it expires with its state, and a lost Redis
 * throws SharedStateError (the round is then refused: fail closed).
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { SharedRedis } from '../../../templates/runtime/redis/redis.js';
import { connectRedis } from '../../../templates/runtime/redis/redis.js';
import { RedisRoundNonces } from '../../../templates/runtime/redis/redis-rounds.js';
import { redisSettings, SharedStateError } from '../../../templates/runtime/shared/shared-state.js';
import type { RedisServer } from '../../helpers/redis.js';
import { describeWithRedis, startRedis } from '../../helpers/redis.js';

describeWithRedis('round nonces in Redis', () => {
  let redis: RedisServer;
  const open: SharedRedis[] = [];
  const connect = async (prefix: string, name: string) => {
    const c = await connectRedis(redisSettings('PETS', 'pets', { PETS_REDIS_URL: redis.url, PETS_REDIS_PREFIX: prefix, PETS_REDIS_TIMEOUT_MS: '500' })!, name);
    open.push(c);
    return c;
  };

  beforeAll(async () => {
    redis = await startRedis();
  }, 30_000);
  afterAll(async () => {
    for (const c of open) await c.close();
    await redis?.stop();
  });

  it('a nonce claimed through one instance is used for the others, under <prefix>:round:<nonce> with its ttl', async () => {
    const one = await connect('r1', 'a');
    const two = await connect('r1', 'b');
    const a = new RedisRoundNonces(one);
    const b = new RedisRoundNonces(two);
    expect(await a.claim('n1', 60_000)).toBe('fresh');
    expect(await b.claim('n1', 60_000)).toBe('used');
    expect(await a.claim('n1', 60_000)).toBe('used');
    expect(await b.claim('n2', 60_000)).toBe('fresh');
    const ttl = await one.client.pttl('r1:round:n1');
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(60_000);
    // another server's prefix is another namespace
    expect(await new RedisRoundNonces(await connect('r2', 'c')).claim('n1', 60_000)).toBe('fresh');
  });

  it('throws SharedStateError while Redis is down', async () => {
    const nonces = new RedisRoundNonces(await connect('r3', 'd'));
    await redis.kill();
    await expect(nonces.claim('n3', 60_000)).rejects.toThrow(SharedStateError);
  });
});
