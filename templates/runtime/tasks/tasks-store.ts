/**
 * Where the state of MCP tasks lives (tasks.ts runs them): one record per task, owned by the
 * client identity that created it. The interface is what a shared store (Redis, for several
 * instances behind a load balancer) implements; {@link MemoryTaskStore} keeps them in the process,
 * bounded in count and age.
 *
 * This file is copied verbatim into every generated project.
 */
import type { CallToolResult } from '@modelcontextprotocol/server';
import { readPositiveInteger } from '../process/settings.js';
import { settingNames, TASK_DEFAULTS } from '../process/variables.js';

/** The statuses of a task (both eras use the same words). */
export type TaskStatus = 'working' | 'input_required' | 'completed' | 'failed' | 'cancelled';

/** Statuses a task never leaves. */
export const TERMINAL: ReadonlySet<TaskStatus> = new Set(['completed', 'failed', 'cancelled']);

/** A JSON-RPC error a task ended with (`failed`). */
export type TaskError = { readonly code: number; readonly message: string; readonly data?: unknown };

/** One task, era-neutral (tasks.ts writes it on the wire of each era). */
export type TaskRecord = {
  readonly taskId: string;
  /** The client identity that created it: nobody else sees it. */
  readonly owner: string;
  /** The tool it runs. */
  readonly tool: string;
  readonly status: TaskStatus;
  readonly statusMessage?: string;
  /** Epoch ms. */
  readonly createdAt: number;
  readonly lastUpdatedAt: number;
  /** How long after its creation the task is kept. */
  readonly ttlMs: number;
  /** The poll interval suggested to clients. */
  readonly pollIntervalMs: number;
  /** The tool's result (`completed`, and legacy `failed` of an `isError` result). */
  readonly result?: CallToolResult;
  /** The JSON-RPC error of a `failed` task. */
  readonly error?: TaskError;
  /** The questions an `input_required` task waits on (2026-07-28), by key; answered ones leave. */
  readonly inputRequests?: Readonly<Record<string, unknown>>;
};

/** What changes of a task. */
export type TaskUpdate = Pick<Partial<TaskRecord>, 'status' | 'statusMessage' | 'result' | 'error' | 'inputRequests'>;

/** Thrown by `create` when the store holds as many live tasks as it may. */
export class TaskStoreFullError extends Error {}

/** Task state, process-wide (modern HTTP makes a server instance per request: tasks outlive it). */
export interface TaskStore {
  /** Stores a new task; throws {@link TaskStoreFullError} when full. */
  create(record: TaskRecord): Promise<void>;
  /** The task, unless unknown or expired. */
  get(taskId: string): Promise<TaskRecord | undefined>;
  /** {@link get} of each id, in one round trip (optional: without it, one `get` per id). */
  getMany?(taskIds: readonly string[]): Promise<Array<TaskRecord | undefined>>;
  /** Applies `update` (a terminal task is never changed: returns it as it is); undefined when unknown. */
  update(taskId: string, update: TaskUpdate): Promise<TaskRecord | undefined>;
  /** The live tasks of `owner`, oldest first. */
  list(owner: string): Promise<TaskRecord[]>;
  /** Its count and age bounds (tasks.ts never promises a `ttlMs` past `maxAgeMs`). */
  readonly bounds?: TaskBounds;
  /**
   * Calls `listener` with the id of each task cancelled through another process sharing the store
   * (and this one), so that the process running it stops its work. Optional: an in-process store
   * has no other process.
   */
  onCancelled?(listener: (taskId: string) => void): void;
  /**
   * Calls `listener` with the id of each task whose status or questions another process sharing
   * the store changed, so that listen streams and waiters here hear of it. Optional, as above.
   */
  onChanged?(listener: (taskId: string) => void): void;
  /** Sends `tasks/update` answers to the process that runs `taskId` (optional: without it, they are refused elsewhere). */
  forwardAnswers?(taskId: string, responses: unknown): Promise<void>;
  /** Calls `listener` with answers forwarded for a task (each process takes those of the tasks it runs). */
  onAnswers?(listener: (taskId: string, responses: unknown) => void): void;
}

/** Bounds of a task store. */
export type TaskBounds = {
  /** Most tasks kept at once; the oldest finished one makes room, else a new task is refused. */
  readonly maxTasks: number;
  /** Longest a task is kept after its creation (its `ttlMs` is at most this). */
  readonly maxAgeMs: number;
};

export const DEFAULT_TASK_BOUNDS: TaskBounds = { maxTasks: 1000, maxAgeMs: 60 * 60 * 1000 };

/**
 * The bounds `<envPrefix>_MAX_TASKS` and `_TASK_TTL_MS` set (positive integers; anything else
 * throws naming the variable), the one place both are read: the in-process store and the Redis
 * one (redis-shared.ts) get the same.
 */
export function taskBounds(envPrefix: string, env: NodeJS.ProcessEnv): TaskBounds {
  const names = settingNames(envPrefix);
  return {
    maxTasks: readPositiveInteger(env, names.maxTasks, TASK_DEFAULTS.maxTasks, 'tasks'),
    maxAgeMs: readPositiveInteger(env, names.taskTtlMs, TASK_DEFAULTS.ttlMs, 'milliseconds'),
  };
}

/** Tasks in a Map, dropped `ttlMs` after their creation, at most `maxTasks`. */
export class MemoryTaskStore implements TaskStore {
  private readonly tasks = new Map<string, TaskRecord>();
  constructor(
    readonly bounds: TaskBounds = DEFAULT_TASK_BOUNDS,
    private readonly now: () => number = Date.now,
  ) {}

  private sweep(): void {
    const now = this.now();
    for (const [id, t] of this.tasks) if (t.createdAt + t.ttlMs <= now) this.tasks.delete(id);
  }

  async create(record: TaskRecord): Promise<void> {
    this.sweep();
    if (this.tasks.size >= this.bounds.maxTasks) {
      // the oldest finished task makes room; running ones are never dropped
      const finished = [...this.tasks.values()].find((t) => TERMINAL.has(t.status));
      if (!finished) throw new TaskStoreFullError(`the server runs ${this.tasks.size} tasks, its limit: retry when one has finished`);
      this.tasks.delete(finished.taskId);
    }
    this.tasks.set(record.taskId, record);
  }

  async get(taskId: string): Promise<TaskRecord | undefined> {
    const t = this.tasks.get(taskId);
    if (t && t.createdAt + t.ttlMs <= this.now()) {
      this.tasks.delete(taskId);
      return undefined;
    }
    return t;
  }

  async update(taskId: string, update: TaskUpdate): Promise<TaskRecord | undefined> {
    const t = await this.get(taskId);
    if (!t || TERMINAL.has(t.status)) return t;
    const next: TaskRecord = { ...t, ...update, lastUpdatedAt: Math.max(this.now(), t.lastUpdatedAt) };
    // the questions belong to input_required only
    if (next.status !== 'input_required' && next.inputRequests !== undefined) delete (next as { inputRequests?: unknown }).inputRequests;
    this.tasks.set(taskId, next);
    return next;
  }

  async list(owner: string): Promise<TaskRecord[]> {
    this.sweep();
    return [...this.tasks.values()].filter((t) => t.owner === owner);
  }
}
