/**
 * MCP task state in Redis (redis-tasks.ts) against a real redis-server: what one instance creates
 * another reads, lists and updates; concurrent updates are not lost and a terminal task never
 * changes, and a cancel is heard by every instance; the count bound makes room from finished tasks only; tasks expire; ids and values that
 * are not task records are refused or absent; a lost Redis throws SharedStateError.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { SharedRedis } from '../../../templates/runtime/redis/redis.js';
import { connectRedis } from '../../../templates/runtime/redis/redis.js';
import { sharedStores } from '../../../templates/runtime/redis/redis-shared.js';
import { RedisTaskStore } from '../../../templates/runtime/redis/redis-tasks.js';
import { redisSettings, SharedStateError } from '../../../templates/runtime/shared/shared-state.js';
import { Tasks } from '../../../templates/runtime/tasks/tasks.js';
import type { TaskRecord } from '../../../templates/runtime/tasks/tasks-store.js';
import { TaskStoreFullError, taskBounds } from '../../../templates/runtime/tasks/tasks-store.js';
import type { RedisServer } from '../../helpers/redis.js';
import { describeWithRedis, startRedis } from '../../helpers/redis.js';

describeWithRedis('tasks in Redis', () => {
  let redis: RedisServer;
  const open: SharedRedis[] = [];
  const connect = async () => {
    const prefix = `t${Math.random().toString(36).slice(2, 8)}`;
    const one = await connectRedis(redisSettings('PETS', 'pets', { PETS_REDIS_URL: redis.url, PETS_REDIS_PREFIX: prefix, PETS_REDIS_TIMEOUT_MS: '500' })!, 'a');
    const two = await connectRedis(redisSettings('PETS', 'pets', { PETS_REDIS_URL: redis.url, PETS_REDIS_PREFIX: prefix, PETS_REDIS_TIMEOUT_MS: '500' })!, 'b');
    open.push(one, two);
    return [one, two] as const;
  };
  const task = (id: string, extra: Partial<TaskRecord> = {}): TaskRecord => ({
    taskId: id,
    owner: 'alice',
    tool: 'slow',
    status: 'working',
    createdAt: Date.now(),
    lastUpdatedAt: Date.now(),
    ttlMs: 60_000,
    pollIntervalMs: 500,
    ...extra,
  });

  beforeAll(async () => {
    redis = await startRedis();
  }, 30_000);
  afterAll(async () => {
    for (const c of open) await c.close();
    await redis?.stop();
  });

  it('a task created through one instance is read, listed and finished through another', async () => {
    const [one, two] = await connect();
    const a = new RedisTaskStore(one);
    const b = new RedisTaskStore(two);
    await a.create(task('t1', { createdAt: Date.now() - 10 }));
    await a.create(task('t2'));
    await a.create(task('t3', { owner: 'bob' }));
    expect((await b.get('t1'))?.status).toBe('working');
    expect((await b.list('alice')).map((t) => t.taskId)).toEqual(['t1', 't2']);
    expect((await b.list('bob')).map((t) => t.taskId)).toEqual(['t3']);
    const done = await b.update('t1', { status: 'completed', result: { content: [{ type: 'text', text: 'ok' }] } });
    expect(done?.status).toBe('completed');
    expect((await a.get('t1'))?.result).toEqual({ content: [{ type: 'text', text: 'ok' }] });
    // terminal: never changed again
    expect((await a.update('t1', { status: 'working' }))?.status).toBe('completed');
    expect(await b.get('nope')).toBeUndefined();
    // several in one round trip, in order; unknown and malformed ids are absent
    expect((await b.getMany(['t3', 'nope', 'not an id', 't2'])).map((t) => t?.taskId)).toEqual(['t3', undefined, undefined, 't2']);
    expect(await b.update('nope', { status: 'failed' })).toBeUndefined();
  });

  it('concurrent updates from two instances each land once, none lost', async () => {
    const [one, two] = await connect();
    const a = new RedisTaskStore(one);
    const b = new RedisTaskStore(two);
    await a.create(task('race'));
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => (i % 2 ? a : b).update('race', { statusMessage: `step ${i}` })));
    expect(results.every((r) => r?.status === 'working')).toBe(true);
    const final = (await a.get('race'))!;
    expect(final.statusMessage).toMatch(/^step \d+$/);
    // a cancel racing with progress messages wins for good
    await Promise.all([a.update('race', { status: 'cancelled' }), b.update('race', { statusMessage: 'late' }), b.update('race', { statusMessage: 'later' })]);
    expect((await b.update('race', { statusMessage: 'after' }))?.status).toBe('cancelled');
  });

  it('tells every instance listening of a cancel made through another, once', async () => {
    const [one, two] = await connect();
    const runner = new RedisTaskStore(one);
    const other = new RedisTaskStore(two);
    const heard: string[] = [];
    runner.onCancelled((id) => heard.push(id));
    await runner.ready();
    await runner.create(task('long'));
    await other.update('long', { statusMessage: 'half way' });
    await other.update('long', { status: 'cancelled' });
    // a second cancel of a terminal task changes nothing and says nothing
    await other.update('long', { status: 'cancelled' });
    const deadline = Date.now() + 5_000;
    while (heard.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    await new Promise((r) => setTimeout(r, 100));
    expect(heard).toEqual(['long']);
  });

  it('is bounded: a finished task makes room, running ones never do; tasks expire', async () => {
    const [one] = await connect();
    const s = new RedisTaskStore(one, { maxTasks: 2, maxAgeMs: 60_000 });
    await s.create(task('r1'));
    await s.create(task('r2'));
    await expect(s.create(task('r3'))).rejects.toThrow(TaskStoreFullError);
    await s.update('r1', { status: 'completed' });
    await s.create(task('r3'));
    expect(await s.get('r1')).toBeUndefined();
    expect((await s.list('alice')).map((t) => t.taskId)).toEqual(['r2', 'r3']);
    const short = new RedisTaskStore(one, { maxTasks: 10, maxAgeMs: 200 });
    await short.create(task('brief'));
    expect(await short.get('brief')).toBeDefined();
    await new Promise((r) => setTimeout(r, 300));
    expect(await short.get('brief')).toBeUndefined();
  });

  it('the shared store gets the bounds <PREFIX>_MAX_TASKS and _TASK_TTL_MS set, and a task is promised the ttl its key lives', async () => {
    const env = {
      PETS_REDIS_URL: redis.url,
      PETS_REDIS_PREFIX: `t${Math.random().toString(36).slice(2, 8)}`,
      PETS_REDIS_TIMEOUT_MS: '500',
      PETS_MAX_TASKS: '2',
      PETS_TASK_TTL_MS: '7200000',
    };
    const shared = await sharedStores(redisSettings('PETS', 'pets', env)!, 'bounds', taskBounds('PETS', env));
    try {
      expect(shared.tasks.bounds).toEqual({ maxTasks: 2, maxAgeMs: 7_200_000 });
      // what TaskTools makes with a shared store: Tasks capped by the store's own bound
      const tasks = new Tasks({ store: shared.tasks, ttlMs: taskBounds('PETS', env).maxAgeMs });
      const never = () => new Promise<never>(() => undefined);
      const first = await tasks.start('modern', 'alice', 'slow', never);
      // 2 h asked and promised (above the 1 h default bound), and the key lives that long
      expect(first.ttlMs).toBe(7_200_000);
      expect(await shared.redis.client.pttl(shared.redis.key('task', first.taskId))).toBeGreaterThan(3_600_000);
      await tasks.start('modern', 'alice', 'slow', never);
      // MAX_TASKS=2: a third while both run is refused
      await expect(tasks.start('modern', 'alice', 'slow', never)).rejects.toThrow(/runs 2 tasks, its limit/);
      // a store bounded below the asked ttl caps what is promised
      const capped = new Tasks({ store: new RedisTaskStore(shared.redis, { maxTasks: 10, maxAgeMs: 60_000 }), ttlMs: 7_200_000 });
      expect((await capped.start('modern', 'alice', 'slow', never)).ttlMs).toBe(60_000);
    } finally {
      await shared.close();
    }
  });

  it('tasks/update reaching an instance that does not run the task is forwarded to the one that does, which runs the next round', async () => {
    const [one, two] = await connect();
    const sa = new RedisTaskStore(one);
    const sb = new RedisTaskStore(two);
    const a = new Tasks({ store: sa });
    const b = new Tasks({ store: sb });
    await Promise.all([sa.ready(), sb.ready()]);
    let runs = 0;
    const t = await a.start('modern', 'alice', 'ask', async (_signal, resume) => {
      runs++;
      if (resume === undefined) return { resultType: 'input_required', inputRequests: { name: { method: 'elicitation/create', params: {} } } } as never;
      return { content: [{ type: 'text', text: `hello ${String((resume.inputResponses.name as { content?: { name?: string } }).content?.name)}` }] };
    });
    for (let i = 0; i < 100 && (await b.get('alice', t.taskId)).status !== 'input_required'; i++) await new Promise((r) => setTimeout(r, 10));
    expect((await b.get('alice', t.taskId)).status).toBe('input_required');
    // bob may not answer alice's task through any instance
    await expect(b.answer('bob', t.taskId, { name: {} })).rejects.toThrow(/Unknown task/);
    await b.answer('alice', t.taskId, { name: { action: 'accept', content: { name: 'Ada' } } });
    const done = await a.settled('alice', t.taskId, new AbortController().signal);
    expect(done.status).toBe('completed');
    expect(done.result).toEqual({ content: [{ type: 'text', text: 'hello Ada' }] });
    expect(runs).toBe(2);
  });

  it('a task change made on one instance reaches the watchers (listen streams) of another, once, and not echoed back', async () => {
    const [one, two] = await connect();
    const sa = new RedisTaskStore(one);
    const sb = new RedisTaskStore(two);
    const a = new Tasks({ store: sa });
    const b = new Tasks({ store: sb });
    await Promise.all([sa.ready(), sb.ready()]);
    const seenA: string[] = [];
    const seenB: string[] = [];
    a.watch((t) => seenA.push(t.status));
    b.watch((t) => seenB.push(t.status));
    let finish!: () => void;
    const t = await a.start('modern', 'alice', 'slow', () => new Promise((resolve) => (finish = () => resolve({ content: [{ type: 'text', text: 'done' }] }))));
    finish();
    for (let i = 0; i < 500 && !seenB.includes('completed'); i++) await new Promise((r) => setTimeout(r, 10));
    expect(seenB).toEqual(['completed']);
    expect(seenA).toEqual(['completed']);
    // a waiter on the other instance wakes on the message too
    expect((await b.settled('alice', t.taskId, new AbortController().signal)).status).toBe('completed');
  });

  it('refuses ids that are not ids; a value that is not its task record is absent', async () => {
    const [one] = await connect();
    const s = new RedisTaskStore(one);
    await expect(s.create(task('../x'))).rejects.toThrow(/task id/);
    expect(await s.get('a:b')).toBeUndefined();
    await one.client.set(one.key('task', 'forged'), JSON.stringify(task('other')));
    expect(await s.get('forged')).toBeUndefined();
    await one.client.set(one.key('task', 'junk'), '{"taskId":"junk"');
    expect(await s.get('junk')).toBeUndefined();
  });

  it('throws SharedStateError while Redis is down', async () => {
    const [one] = await connect();
    const s = new RedisTaskStore(one);
    await s.create(task('kept'));
    await redis.kill();
    await expect(s.get('kept')).rejects.toThrow(SharedStateError);
    await expect(s.create(task('new'))).rejects.toThrow(/the shared store \(Redis at .*\) is unavailable/);
    await redis.restart();
  }, 30_000);
});
