/**
 * MCP task state (tasks-store.ts `TaskStore`) in Redis, shared by every instance with the same
 * `<PREFIX>_REDIS_URL` and `<PREFIX>_REDIS_PREFIX`: a task created through one instance can be
 * polled (`tasks/get`, its result) and listed through any other.
 *
 * - One string key per task, `<prefix>:task:<id>`, holding its record as JSON and expiring with
 *   it (`ttlMs` after its creation); a sorted set `<prefix>:tasks` (by creation time) counts them
 *   against `maxTasks` and finds the oldest finished one to make room, as the in-process store
 *   does; `<prefix>:tasks:<owner>` lists an owner's. Index entries whose task expired are dropped
 *   when met. Under concurrent creation through several instances the count may pass `maxTasks`
 *   by the number of racing creations.
 * - An update is a compare-and-set (a short script: the record is replaced only if it is still
 *   the one read), retried when another writer came first; a terminal task is never changed.
 * - A record read back is checked (its id, owner, status and times) and size-capped; anything
 *   else counts as absent. A failed command throws `SharedStateError` naming the cause.
 *
 * - The work of a task runs in the process that started it: a cancel through any instance is
 *   published on `<prefix>:task-cancels`, and each instance's {@link RedisTaskStore.onCancelled}
 *   listeners hear of it (tasks.ts aborts the work it runs). Pub/sub is fire-and-forget: a cancel
 *   published while Redis is unreachable still marks the task cancelled, and the work, if it
 *   runs on, cannot change it.
 * - Each change of a task's status or questions is published on `<prefix>:task-changes` (with
 *   this store's random id, so its own are not echoed back): {@link RedisTaskStore.onChanged}
 *   listeners on the other instances hear of it (tasks.ts tells its listen streams and waiters).
 * - The answers of a `tasks/update` reaching an instance that does not run the task are
 *   published on `<prefix>:task-answers`; the instance running it takes them
 *   ({@link RedisTaskStore.onAnswers}). Fire-and-forget too: the update is acknowledged once
 *   published, and answers for a task whose instance died are lost with its work.
 *
 * This file is copied verbatim into every generated project; it is loaded only when the URL is set.
 */
import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { log } from '../core/log.js';
import type { TaskBounds, TaskRecord, TaskStatus, TaskStore, TaskUpdate } from '../tasks/tasks-store.js';
import { DEFAULT_TASK_BOUNDS, TaskStoreFullError, TERMINAL } from '../tasks/tasks-store.js';
import type { SharedRedis } from './redis.js';
import { describeFailure, unavailable } from './redis.js';

/** Largest record read back, in bytes. */
const MAX_RECORD_BYTES = 8 * 1024 * 1024;
const ID = /^[A-Za-z0-9_-]{1,128}$/;
const STATUSES: ReadonlySet<string> = new Set<TaskStatus>(['working', 'input_required', 'completed', 'failed', 'cancelled']);

/** Replaces KEYS[1] by ARGV[2] (keeping its expiry) only if it still holds ARGV[1]. */
const SWAP = `if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[2], 'KEEPTTL')
return 1`;

/** The record in `text`, if it is a well-formed one of `taskId`. */
function parse(text: string | null, taskId: string): TaskRecord | undefined {
  if (text === null || text.length > MAX_RECORD_BYTES) return undefined;
  let r: unknown;
  try {
    r = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof r !== 'object' || r === null) return undefined;
  const t = r as Partial<TaskRecord>;
  if (t.taskId !== taskId || typeof t.owner !== 'string' || typeof t.tool !== 'string' || typeof t.status !== 'string' || !STATUSES.has(t.status))
    return undefined;
  if (![t.createdAt, t.lastUpdatedAt, t.ttlMs, t.pollIntervalMs].every((n) => typeof n === 'number' && Number.isFinite(n))) return undefined;
  return t as TaskRecord;
}

/** Tasks in Redis (module comment). */
export class RedisTaskStore implements TaskStore {
  readonly #redis: SharedRedis;
  /** `<PREFIX>_MAX_TASKS` / `_TASK_TTL_MS`, as for the in-process store (tasks-store.ts `taskBounds`). */
  readonly bounds: TaskBounds;
  readonly #now: () => number;
  readonly #cancelled = new Set<(taskId: string) => void>();
  readonly #changed = new Set<(taskId: string) => void>();
  readonly #answers = new Set<(taskId: string, responses: unknown) => void>();
  /** Tells this store's own change messages from other instances'. */
  readonly #self = randomUUID();
  /** Handler of each subscribed channel. */
  readonly #channels = new Map<string, (message: string) => void>();
  #sub: Redis | undefined;
  #subscribed: Promise<void> = Promise.resolve();

  constructor(redis: SharedRedis, bounds: TaskBounds = DEFAULT_TASK_BOUNDS, now: () => number = Date.now) {
    this.#redis = redis;
    this.bounds = bounds;
    this.#now = now;
  }

  #key(taskId: string): string {
    return this.#redis.key('task', taskId);
  }

  #owners(owner: string): string {
    return this.#redis.key('tasks', owner);
  }

  /** Runs `f`, turning a failed command into `SharedStateError`. */
  async #run<T>(f: () => Promise<T>): Promise<T> {
    try {
      return await f();
    } catch (err) {
      if (err instanceof TaskStoreFullError) throw err;
      throw unavailable(this.#redis.settings, err);
    }
  }

  async create(record: TaskRecord): Promise<void> {
    if (!ID.test(record.taskId)) throw new Error(`a task id must be 1-128 of A-Z a-z 0-9 _ - (got ${JSON.stringify(record.taskId)})`);
    const c = this.#redis.client;
    const all = this.#redis.key('tasks');
    await this.#run(async () => {
      if ((await c.zcard(all)) >= this.bounds.maxTasks) await this.#makeRoom(all);
      const ttl = Math.max(1, Math.min(record.ttlMs, this.bounds.maxAgeMs) - (this.#now() - record.createdAt));
      await c
        .multi()
        .set(this.#key(record.taskId), JSON.stringify(record), 'PX', ttl)
        .zadd(all, record.createdAt, record.taskId)
        .zadd(this.#owners(record.owner), record.createdAt, record.taskId)
        .pexpire(this.#owners(record.owner), this.bounds.maxAgeMs)
        .exec();
    });
  }

  /** Drops index entries of expired tasks, then the oldest finished task if still full; throws when all are running. */
  async #makeRoom(all: string): Promise<void> {
    const c = this.#redis.client;
    const ids = await c.zrange(all, 0, -1);
    const texts = ids.length > 0 ? await c.mget(...ids.map((id) => this.#key(id))) : [];
    const live: TaskRecord[] = [];
    const gone: string[] = [];
    ids.forEach((id, i) => {
      const t = parse(texts[i] ?? null, id);
      if (t === undefined) gone.push(id);
      else live.push(t);
    });
    if (gone.length > 0) await c.zrem(all, ...gone);
    if (live.length < this.bounds.maxTasks) return;
    const finished = live.find((t) => TERMINAL.has(t.status));
    if (finished === undefined) throw new TaskStoreFullError(`the server runs ${live.length} tasks, its limit: retry when one has finished`);
    await c.multi().del(this.#key(finished.taskId)).zrem(all, finished.taskId).zrem(this.#owners(finished.owner), finished.taskId).exec();
  }

  async get(taskId: string): Promise<TaskRecord | undefined> {
    if (!ID.test(taskId)) return undefined;
    const t = parse(await this.#run(() => this.#redis.client.get(this.#key(taskId))), taskId);
    return t !== undefined && t.createdAt + t.ttlMs > this.#now() ? t : undefined;
  }

  async getMany(taskIds: readonly string[]): Promise<Array<TaskRecord | undefined>> {
    const valid = taskIds.filter((id) => ID.test(id));
    const texts = valid.length > 0 ? await this.#run(() => this.#redis.client.mget(...valid.map((id) => this.#key(id)))) : [];
    const byId = new Map(valid.map((id, i) => [id, parse(texts[i] ?? null, id)]));
    const now = this.#now();
    return taskIds.map((id) => {
      const t = byId.get(id);
      return t !== undefined && t.createdAt + t.ttlMs > now ? t : undefined;
    });
  }

  async update(taskId: string, update: TaskUpdate): Promise<TaskRecord | undefined> {
    if (!ID.test(taskId)) return undefined;
    const key = this.#key(taskId);
    return this.#run(async () => {
      for (let attempt = 0; attempt < 20; attempt++) {
        const text = await this.#redis.client.get(key);
        const t = parse(text, taskId);
        if (t === undefined || t.createdAt + t.ttlMs <= this.#now()) return undefined;
        if (TERMINAL.has(t.status)) return t;
        const next: TaskRecord = { ...t, ...update, lastUpdatedAt: Math.max(this.#now(), t.lastUpdatedAt) };
        // questions belong to input_required only (as in the in-process store)
        if (next.status !== 'input_required') delete (next as { inputRequests?: unknown }).inputRequests;
        if ((await this.#redis.client.eval(SWAP, 1, key, text!, JSON.stringify(next))) === 1) {
          if (next.status === 'cancelled')
            await this.#redis.client
              .publish(this.#redis.key('task-cancels'), taskId)
              .catch((err: unknown) => log('warn', `tasks: the cancel of ${taskId} reached only this instance: ${describeFailure(err)}`));
          if (next.status !== t.status || update.inputRequests !== undefined)
            await this.#redis.client
              .publish(this.#redis.key('task-changes'), `${this.#self} ${taskId}`)
              .catch((err: unknown) => log('warn', `tasks: the change of ${taskId} reached only this instance's listeners: ${describeFailure(err)}`));
          return next;
        }
      }
      throw new Error(`task ${taskId} changed under every one of 20 updates`);
    });
  }

  onCancelled(listener: (taskId: string) => void): void {
    this.#cancelled.add(listener);
    this.#listen('task-cancels', (taskId) => {
      if (ID.test(taskId)) this.#tell(this.#cancelled, taskId, 'cancel');
    });
  }

  /**
   * Calls `listener` with the id of each task whose status or questions another instance changed
   * (`<prefix>:task-changes`; this store's own changes are not echoed), so listen streams and
   * waiters on every instance hear of them. Fire-and-forget, like cancels.
   */
  onChanged(listener: (taskId: string) => void): void {
    this.#changed.add(listener);
    this.#listen('task-changes', (message) => {
      const [from, taskId] = message.split(' ');
      if (from !== this.#self && taskId !== undefined && ID.test(taskId)) this.#tell(this.#changed, taskId, 'change');
    });
  }

  async forwardAnswers(taskId: string, responses: unknown): Promise<void> {
    if (!ID.test(taskId)) return;
    await this.#run(() => this.#redis.client.publish(this.#redis.key('task-answers'), JSON.stringify({ taskId, responses })));
  }

  onAnswers(listener: (taskId: string, responses: unknown) => void): void {
    this.#answers.add(listener);
    this.#listen('task-answers', (message) => {
      if (message.length > MAX_RECORD_BYTES) return;
      let m: { taskId?: unknown; responses?: unknown };
      try {
        m = JSON.parse(message) as typeof m;
      } catch {
        return;
      }
      if (typeof m?.taskId !== 'string' || !ID.test(m.taskId)) return;
      for (const l of this.#answers) {
        try {
          l(m.taskId, m.responses);
        } catch (err) {
          log('warn', 'tasks: an answer listener failed', err);
        }
      }
    });
  }

  #tell(listeners: ReadonlySet<(taskId: string) => void>, taskId: string, what: string): void {
    for (const l of listeners) {
      try {
        l(taskId);
      } catch (err) {
        log('warn', `tasks: a ${what} listener failed`, err);
      }
    }
  }

  /** Subscribes to `<prefix>:<name>` once, on the one subscriber connection. */
  #listen(name: string, handler: (message: string) => void): void {
    const channel = this.#redis.key(name);
    if (this.#channels.has(channel)) return;
    this.#channels.set(channel, handler);
    if (this.#sub === undefined) {
      this.#sub = this.#redis.subscriber();
      this.#sub.on('message', (from: string, message: string) => this.#channels.get(from)?.(message));
    }
    const subscribing = this.#sub.subscribe(channel).then(
      () => undefined,
      (err: unknown) => log('warn', `tasks: cannot subscribe to ${channel}: ${describeFailure(err)}`),
    );
    this.#subscribed = Promise.all([this.#subscribed, subscribing]).then(() => undefined);
  }

  /** Resolves once cancels and changes of other instances are heard (after {@link onCancelled} / {@link onChanged}). */
  ready(): Promise<void> {
    return this.#subscribed;
  }

  async list(owner: string): Promise<TaskRecord[]> {
    const c = this.#redis.client;
    const index = this.#owners(owner);
    return this.#run(async () => {
      const ids = await c.zrange(index, 0, -1);
      if (ids.length === 0) return [];
      const texts = await c.mget(...ids.map((id) => this.#key(id)));
      const now = this.#now();
      const out: TaskRecord[] = [];
      const gone: string[] = [];
      ids.forEach((id, i) => {
        const t = parse(texts[i] ?? null, id);
        if (t === undefined || t.owner !== owner || t.createdAt + t.ttlMs <= now) gone.push(id);
        else out.push(t);
      });
      if (gone.length > 0) await c.zrem(index, ...gone);
      return out.sort((a, b) => a.createdAt - b.createdAt);
    });
  }
}
