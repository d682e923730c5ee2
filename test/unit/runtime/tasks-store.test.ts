/**
 * The bounds of the in-process task store (templates/runtime/tasks/tasks-store.ts) and what Tasks
 * (tasks.ts) makes of them: at most `maxTasks` tasks (the oldest finished one makes room; when all
 * run, a new one is refused), each kept `ttlMs` after its creation, never past `maxAgeMs`; a task is
 * seen by its owner only; a finished task never changes; a long wait for a task leaks no listeners.
 */
import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import { Tasks } from '../../../templates/runtime/tasks/tasks.js';
import type { TaskRecord } from '../../../templates/runtime/tasks/tasks-store.js';
import { MemoryTaskStore, TaskStoreFullError } from '../../../templates/runtime/tasks/tasks-store.js';

const task = (id: string, at: number, over: Partial<TaskRecord> = {}): TaskRecord => ({
  taskId: id,
  owner: 'alice',
  tool: 't',
  status: 'working',
  createdAt: at,
  lastUpdatedAt: at,
  ttlMs: 1000,
  pollIntervalMs: 100,
  ...over,
});

describe('MemoryTaskStore', () => {
  it('refuses a task past maxTasks while all run, and drops the oldest finished one to make room', async () => {
    let now = 0;
    const store = new MemoryTaskStore({ maxTasks: 2, maxAgeMs: 10_000 }, () => now);
    await store.create(task('a', 0));
    await store.create(task('b', 0));
    await expect(store.create(task('c', 0))).rejects.toBeInstanceOf(TaskStoreFullError);
    await store.update('a', { status: 'completed' });
    now = 1;
    await store.create(task('c', 1));
    expect(await store.get('a')).toBeUndefined();
    expect((await store.list('alice')).map((t) => t.taskId)).toEqual(['b', 'c']);
  });

  it('forgets a task ttlMs after its creation', async () => {
    let now = 0;
    const store = new MemoryTaskStore({ maxTasks: 10, maxAgeMs: 10_000 }, () => now);
    await store.create(task('a', 0, { ttlMs: 500 }));
    now = 499;
    expect(await store.get('a')).toBeDefined();
    now = 500;
    expect(await store.get('a')).toBeUndefined();
    expect(await store.list('alice')).toEqual([]);
  });

  it('never changes a finished task', async () => {
    const store = new MemoryTaskStore();
    await store.create(task('a', Date.now()));
    await store.update('a', { status: 'cancelled' });
    expect((await store.update('a', { status: 'completed', result: { content: [] } }))?.status).toBe('cancelled');
  });
});

describe('Tasks', () => {
  it('caps a task ttl at the store maxAgeMs and refuses a task when the store is full (-32603)', async () => {
    const tasks = new Tasks({ store: new MemoryTaskStore({ maxTasks: 1, maxAgeMs: 5000 }), ttlMs: 60_000 });
    const never = (signal: AbortSignal) => new Promise<never>((_, reject) => signal.addEventListener('abort', () => reject(new Error('stopped'))));
    const first = await tasks.start('modern', 'alice', 't', never);
    expect(first.ttlMs).toBe(5000);
    await expect(tasks.start('modern', 'alice', 't', never)).rejects.toMatchObject({ code: -32603 });
    // another identity's task is unknown to it
    await expect(tasks.get('bob', first.taskId)).rejects.toMatchObject({ code: -32602 });
    await tasks.cancel('alice', first.taskId);
    expect((await tasks.get('alice', first.taskId)).status).toBe('cancelled');
  });

  it('stops work still under way once its task outlives its ttl (nobody could fetch it any more)', async () => {
    const tasks = new Tasks({ store: new MemoryTaskStore({ maxTasks: 10, maxAgeMs: 1000 }), ttlMs: 1000 });
    let stopped!: () => void;
    const aborted = new Promise<void>((resolve) => (stopped = resolve));
    const work = (signal: AbortSignal) =>
      new Promise<never>((_, reject) =>
        signal.addEventListener('abort', () => {
          stopped();
          reject(new Error('stopped'));
        }),
      );
    const t = await tasks.start('modern', 'alice', 't', work);
    await aborted;
    await expect(tasks.get('alice', t.taskId)).rejects.toMatchObject({ code: -32602 });
  });

  it('ends a task with a tool error completed in 2026-07-28 and failed in 2025-11-25', async () => {
    const tasks = new Tasks();
    const error = async () => ({ isError: true, content: [{ type: 'text' as const, text: 'no' }] });
    const modern = await tasks.start('modern', 'a', 't', error);
    const legacy = await tasks.start('legacy', 'a', 't', error);
    const signal = new AbortController().signal;
    expect((await tasks.settled('a', modern.taskId, signal)).status).toBe('completed');
    expect((await tasks.settled('a', legacy.taskId, signal)).status).toBe('failed');
  });

  it('tasks/update for a task another process runs, on a store that cannot forward answers, is refused naming sticky routing', async () => {
    const store = new MemoryTaskStore();
    const a = new Tasks({ store });
    const b = new Tasks({ store });
    const t = await a.start('modern', 'alice', 't', async () => ({ resultType: 'input_required', inputRequests: { q: {} } }) as never);
    for (let i = 0; i < 100 && (await store.get(t.taskId))?.status !== 'input_required'; i++) await new Promise((r) => setTimeout(r, 5));
    await expect(b.answer('alice', t.taskId, { q: 1 })).rejects.toThrow(/instance that created the task \(sticky routing\)/);
    expect((await store.get(t.taskId))?.status).toBe('input_required');
  });

  it('waiting for a task run by another instance (a shared store) adds no abort listener or waiter per look', async () => {
    const store = new MemoryTaskStore();
    // two "instances" on one store: `runner` runs the work, `waiter` only reads it
    const runner = new Tasks({ store, pollIntervalMs: 1 });
    let looks = 0;
    const counting = Object.assign(Object.create(store) as MemoryTaskStore, {
      get: (id: string) => {
        looks++;
        return store.get(id);
      },
    });
    const waiter = new Tasks({ store: counting, pollIntervalMs: 1 });
    let finish!: () => void;
    const t = await runner.start('legacy', 'alice', 't', () => new Promise((resolve) => (finish = () => resolve({ content: [] }))));
    const ctl = new AbortController();
    const settled = waiter.settled('alice', t.taskId, ctl.signal);
    // many passes of the waiter's look-again timer
    while (looks < 30) await new Promise((r) => setTimeout(r, 5));
    expect(getEventListeners(ctl.signal, 'abort').length).toBeLessThanOrEqual(1);
    expect(((waiter as unknown as { waiters: Map<string, unknown[]> }).waiters.get(t.taskId) ?? []).length).toBeLessThanOrEqual(1);
    finish();
    expect((await settled).status).toBe('completed');
    expect(getEventListeners(ctl.signal, 'abort')).toHaveLength(0);
    // an abort while waiting rejects and leaves nothing behind
    const u = await runner.start('legacy', 'alice', 't', () => new Promise(() => undefined));
    const stop = new AbortController();
    const waiting = waiter.settled('alice', u.taskId, stop.signal);
    await new Promise((r) => setTimeout(r, 20));
    stop.abort(new Error('gone'));
    await expect(waiting).rejects.toThrow('gone');
    expect((waiter as unknown as { waiters: Map<string, unknown[]> }).waiters.has(u.taskId)).toBe(false);
  });
});
