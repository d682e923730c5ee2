/**
 * The shared stores against a real redis-server (test/helpers/redis.ts): settings, the start's
 * clear failure, justifications (same checks as the file store), shared counters (rates across
 * two connections, slot leases that expire when their holder vanishes), the event bus between two
 * "instances", and fail closed / fail open while Redis is down, with every command bounded.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { SharedRedis } from '../../../templates/runtime/redis/redis.js';
import { connectRedis } from '../../../templates/runtime/redis/redis.js';
import { parseMessage, RedisBus } from '../../../templates/runtime/redis/redis-bus.js';
import { RedisCounters } from '../../../templates/runtime/redis/redis-counters.js';
import { RedisJustifications } from '../../../templates/runtime/redis/redis-justifications.js';
import { StoreError } from '../../../templates/runtime/reflection/reflection-store.js';
import type { RedisSettings } from '../../../templates/runtime/shared/shared-state.js';
import { INSTANCE_ID, redisSettings, redisUrlSecrets, SharedStateError } from '../../../templates/runtime/shared/shared-state.js';
import type { RedisServer } from '../../helpers/redis.js';
import { describeWithRedis, freePort, startRedis } from '../../helpers/redis.js';

const HASH = 'a'.repeat(64);
const settingsFor = (url: string, extra: Record<string, string> = {}): RedisSettings =>
  redisSettings('PETS', 'pets', {
    PETS_REDIS_URL: url,
    PETS_REDIS_PREFIX: `t${Math.random().toString(36).slice(2, 8)}`,
    PETS_REDIS_TIMEOUT_MS: '500',
    ...extra,
  })!;

describeWithRedis('shared state in Redis', () => {
  let redis: RedisServer;
  const open: SharedRedis[] = [];
  const connect = async (s: RedisSettings) => {
    const c = await connectRedis(s, 'test');
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

  it('reads its settings: unset URL ⇒ none; bad values name the variable; the shown URL has no password', () => {
    expect(redisSettings('PETS', 'pets', {})).toBeUndefined();
    expect(() => redisSettings('PETS', 'pets', { PETS_REDIS_URL: 'http://x' })).toThrow(/PETS_REDIS_URL must be redis:\/\//);
    expect(() => redisSettings('PETS', 'pets', { PETS_REDIS_URL: 'redis://x', PETS_REDIS_FAIL_OPEN: 'all' })).toThrow(
      /PETS_REDIS_FAIL_OPEN may only be "limits"/,
    );
    expect(() => redisSettings('PETS', 'pets', { PETS_REDIS_URL: 'redis://x', PETS_REDIS_LEASE_MS: '0' })).toThrow(/PETS_REDIS_LEASE_MS/);
    const s = redisSettings('PETS', 'pets', { PETS_REDIS_URL: 'rediss://u:hunter2secret@cache.example:6380/2' })!;
    expect(s).toMatchObject({ prefix: 'pets', failOpenLimits: false, leaseMs: 30_000, timeoutMs: 2_000 });
    expect(s.shown).toBe('rediss://cache.example:6380/2');
    // ioredis also takes the password (and user name) from the query: never shown, always a secret
    const q = redisSettings('PETS', 'pets', { PETS_REDIS_URL: 'redis://cache.example:6379/0?password=hunter3secret&username=ops%20user#frag' })!;
    expect(q.shown).toBe('redis://cache.example:6379/0');
    expect(redisUrlSecrets('redis://cache.example:6379/0?password=hunter3secret&username=ops%20user')).toEqual(
      expect.arrayContaining(['hunter3secret', 'ops user']),
    );
    expect(redisUrlSecrets('redis://u:p%40ss@cache.example')).toEqual(expect.arrayContaining(['redis://u:p%40ss@cache.example', 'p@ss']));
  });

  it('fails to start with a clear message when Redis is unreachable, without the password', async () => {
    const port = await freePort();
    const s = settingsFor(`redis://user:hunter2secret@127.0.0.1:${port}`);
    const err = await connectRedis(s, 'test').then(
      () => undefined,
      (e: Error) => e,
    );
    expect(err?.message).toMatch(
      new RegExp(`cannot reach Redis at redis://127\\.0\\.0\\.1:${port}/? \\(PETS_REDIS_URL\\): .*ECONNREFUSED.*unset PETS_REDIS_URL`),
    );
    expect(err?.message).not.toContain('hunter2secret');
    const q = await connectRedis(settingsFor(`redis://127.0.0.1:${port}/?password=hunter3secret`), 'test').then(
      () => undefined,
      (e: Error) => e,
    );
    expect(q?.message).toMatch(/cannot reach Redis at redis:\/\/127\.0\.0\.1/);
    expect(q?.message).not.toContain('hunter3secret');
  });

  it('stores justifications under the same checks as the file store, shared by every connection', async () => {
    const s = settingsFor(redis.url);
    const a = new RedisJustifications(await connect(s), ['billing'], { maxJustificationBytes: 200 });
    const b = new RedisJustifications(await connect(s), ['billing']);
    expect(await b.get('billing', HASH)).toBeUndefined();
    await a.put('billing', HASH, { prompt: 'p', promptArgs: {}, justification: { why: 'because' } });
    expect(await b.get('billing', HASH)).toMatchObject({ hash: HASH, domain: 'billing', justification: { why: 'because' } });
    await expect(a.put('other', HASH, { prompt: 'p', promptArgs: {}, justification: {} })).rejects.toThrow(StoreError);
    await expect(a.put('billing', 'xyz', { prompt: 'p', promptArgs: {}, justification: {} })).rejects.toThrow(/64 lower-case hex/);
    await expect(a.put('billing', HASH, { prompt: 'p', promptArgs: {}, justification: { why: 'x'.repeat(300) } })).rejects.toThrow(/the limit is 200 bytes/);
    // a value that is not a record of its key counts as absent
    const raw = await connect(s);
    const other = 'b'.repeat(64);
    await raw.client.set(raw.key('justification', 'billing', other), JSON.stringify({ hash: HASH, domain: 'billing', justification: {} }));
    expect(await b.get('billing', other)).toBeUndefined();
    await raw.client.set(raw.key('justification', 'billing', other), 'not json');
    expect(await b.get('billing', other)).toBeUndefined();
    // what a hint was issued for, remembered by one instance and recalled by another, until it expires
    await a.rememberHint('billing', other, { tool: 'pay', prompt: 'why_pay', promptArgs: { amount: '5' } }, 300);
    expect(await b.recallHint('billing', other)).toEqual({ tool: 'pay', prompt: 'why_pay', promptArgs: { amount: '5' } });
    await raw.client.set(raw.key('hint', 'billing', HASH), JSON.stringify({ tool: 'pay', prompt: 'p', promptArgs: { n: 1 } }));
    expect(await b.recallHint('billing', HASH)).toBeUndefined();
    await new Promise((r) => setTimeout(r, 400));
    expect(await b.recallHint('billing', other)).toBeUndefined();
  });

  it('counts a rate over every instance: 10 per window admits exactly 10 of 40 concurrent hits from two connections', async () => {
    const s = settingsFor(redis.url);
    const one = new RedisCounters(await connect(s));
    const two = new RedisCounters(await connect(s));
    const results = await Promise.all(Array.from({ length: 40 }, (_, i) => (i % 2 === 0 ? one : two).hit('["rate","t","all"]', 10, 60_000)));
    expect(results.filter((r) => r.ok)).toHaveLength(10);
    const refused = results.find((r) => !r.ok) as { ok: false; retryAfterMs: number };
    expect(refused.retryAfterMs).toBeGreaterThan(0);
    expect(refused.retryAfterMs).toBeLessThanOrEqual(60_000);
  });

  it('shares slots as leases: released slots come back, a vanished holder’s lease expires', async () => {
    const s = settingsFor(redis.url, { PETS_REDIS_LEASE_MS: '600' });
    const one = new RedisCounters(await connect(s));
    const dying = await connectRedis(s, 'dying');
    const two = new RedisCounters(dying);
    const r1 = await one.acquire('k', 2);
    const r2 = await two.acquire('k', 2);
    expect(r1).toBeTypeOf('function');
    expect(r2).toBeTypeOf('function');
    expect(await one.acquire('k', 2)).toBeUndefined();
    r1!();
    await waitFor(async () => (await one.acquire('k', 2)) !== undefined);
    expect(await one.acquire('k', 2)).toBeUndefined();
    // the holder of r2 vanishes without releasing (its renewals fail): the lease expires
    await dying.close();
    await waitFor(async () => (await one.acquire('k', 2)) !== undefined, 10_000);
  });

  it('renews a lease while its call runs', async () => {
    // observed on the lease itself (its expiry, the member's score, moves forward), not by racing a short lease against a sleep
    const s = settingsFor(redis.url, { PETS_REDIS_LEASE_MS: '3000' });
    const conn = await connect(s);
    const c = new RedisCounters(conn);
    const held = await c.acquire('renewed', 1);
    expect(held).toBeTypeOf('function');
    const expiry = async () => Number((await conn.client.zrange(conn.key('slots', 'renewed'), 0, -1, 'WITHSCORES'))[1]);
    const first = await expiry();
    expect(first).toBeGreaterThan(0);
    // renewed every third of the lease: its expiry moves forward, twice, and the slot stays taken
    await waitFor(async () => (await expiry()) > first, 15_000);
    const second = await expiry();
    await waitFor(async () => (await expiry()) > second, 15_000);
    expect(await c.acquire('renewed', 1)).toBeUndefined();
    held!();
    await waitFor(async () => (await conn.client.zcard(conn.key('slots', 'renewed'))) === 0);
  });

  it('delivers events to the other instances, once each, and checks messages', async () => {
    const s = settingsFor(redis.url);
    const a = new RedisBus(await connect(s));
    const b = new RedisBus(await connect(s));
    await Promise.all([a.ready(), b.ready()]);
    const gotA: unknown[] = [];
    const gotB: unknown[] = [];
    a.subscribe((e) => gotA.push(e));
    b.subscribe((e) => gotB.push(e));
    a.publish({ kind: 'resource_updated', uri: 'pets://1' });
    b.publish({ kind: 'tools_list_changed' });
    await waitFor(async () => gotA.length === 2 && gotB.length === 2);
    await new Promise((r) => setTimeout(r, 100));
    // each instance gets its own event at once and the other's when it arrives: once each
    expect(gotA).toEqual([{ kind: 'resource_updated', uri: 'pets://1' }, { kind: 'tools_list_changed' }]);
    expect(gotB).toEqual([{ kind: 'tools_list_changed' }, { kind: 'resource_updated', uri: 'pets://1' }]);
    a.close();
    b.close();
    expect(parseMessage(JSON.stringify({ from: 'x', event: { kind: 'evil' } }), INSTANCE_ID)).toBeUndefined();
    expect(parseMessage(JSON.stringify({ from: INSTANCE_ID, event: { kind: 'tools_list_changed' } }), INSTANCE_ID)).toBeUndefined();
    expect(parseMessage(JSON.stringify({ from: 'x', event: { kind: 'resource_updated', uri: 'u'.repeat(9000) } }), INSTANCE_ID)).toBeUndefined();
  });

  it('while Redis is down: stores and counters fail at once naming the cause (or pass, fail-open); after a restart they work again', async () => {
    const s = settingsFor(redis.url);
    const shared = await connect(s);
    const store = new RedisJustifications(shared, ['billing']);
    const closed = new RedisCounters(shared);
    const opened = new RedisCounters(shared, { failOpen: true });
    await store.put('billing', HASH, { prompt: 'p', promptArgs: {}, justification: { kept: true } });
    await redis.kill();
    await expect(store.get('billing', HASH)).rejects.toThrow(SharedStateError);
    await expect(store.get('billing', HASH)).rejects.toThrow(/the shared store \(Redis at redis:\/\/127\.0\.0\.1:\d+\/?\) is unavailable/);
    await expect(closed.hit('x', 5, 60_000)).rejects.toThrow(/is unavailable: the connection is down$/);
    await expect(closed.acquire('x', 5)).rejects.toThrow(SharedStateError);
    expect(await opened.hit('x', 5, 60_000)).toEqual({ ok: true });
    expect(await opened.acquire('x', 5)).toBeTypeOf('function');
    // none of these waited for Redis to come back (it is restarted only now): no call hangs on a lost Redis
    await redis.restart();
    await waitFor(async () => (await store.get('billing', HASH).catch(() => undefined)) !== undefined, 15_000);
    expect(await store.get('billing', HASH)).toMatchObject({ justification: { kept: true } });
    expect(await closed.hit('y', 5, 60_000)).toEqual({ ok: true });
  }, 40_000);
});

async function waitFor(check: () => Promise<boolean>, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 50));
  }
}
