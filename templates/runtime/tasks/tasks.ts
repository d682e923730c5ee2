/**
 * MCP tasks: a tool call that returns at once with a task, runs on in the server, and is polled
 * (`tasks/get`), fetched (`tasks/result`, legacy), cancelled (`tasks/cancel`) and listed
 * (`tasks/list`, legacy) by the client that created it.
 *
 * Both eras, on their own wire:
 * - 2025-11-25 (legacy): the `tasks` capability, tools listed with `execution.taskSupport`, a call
 *   asks for a task with `params.task` and gets `{ task }` back; `ttl` / `pollInterval`; a tool
 *   result with `isError` ends the task `failed` (its result still comes from `tasks/result`);
 *   `notifications/tasks/status` on every change, to the client's connection.
 * - 2026-07-28 (the `io.modelcontextprotocol/tasks` extension, SEP-2663): declared as exactly `{}`
 *   under `capabilities.extensions`; the server decides: a task tool called by a client whose request
 *   declares the extension gets a flat `CreateTaskResult` (`resultType: "task"`, `ttlMs`,
 *   `pollIntervalMs`); `tasks/get` inlines the result (`resultType: "complete"`) or the error;
 *   `tasks/cancel` and `tasks/update` answer an empty acknowledgement; a handler that asks the
 *   client for input (handler-input.ts) parks its task `input_required` with the questions on
 *   `tasks/get` (`inputRequests`), and `tasks/update` answers them — once every question has its
 *   answer the handler runs again, as a later input round of the same call; a tool error is `completed`
 *   with `result.isError`, `failed` is for JSON-RPC errors only; `tasks/result` and `tasks/list` do
 *   not exist (-32601); a request that does not declare the extension is refused -32021.
 *
 * A task belongs to the identity that created it: another identity's task id is unknown to every
 * method (-32602, never a wait). Its state lives in a {@link TaskStore}; the work itself (and its
 * AbortController) in this process. This module is the engine; tasks-wire.ts writes it on each
 * era's wire and registers the methods.
 *
 * This file is copied verbatim into every generated project.
 */
import { randomUUID } from 'node:crypto';
import type { CallToolResult } from '@modelcontextprotocol/server';
import { ProtocolError, ProtocolErrorCode } from '@modelcontextprotocol/server';
import type { Era } from '../core/era.js';
import { log } from '../core/log.js';
import type { TaskRecord, TaskStore } from './tasks-store.js';
import { MemoryTaskStore, TaskStoreFullError, TERMINAL } from './tasks-store.js';

/** What a task's next run gets after `tasks/update` answered its questions (2026-07-28). */
export type TaskResume = { readonly requestState?: string; readonly inputResponses: Readonly<Record<string, unknown>> };

/** The work of a task: one run (again with `resume` after its questions were answered). */
export type TaskWork = (signal: AbortSignal, resume?: TaskResume) => Promise<CallToolResult>;

const invalid = (message: string) => new ProtocolError(ProtocolErrorCode.InvalidParams, message);

/** How a tool runs as a task: `optional` (when the client asks, else synchronously) or `required`. */
export type TaskSupport = 'optional' | 'required';

/** Options of {@link Tasks}. */
export type TasksOptions = {
  readonly store?: TaskStore;
  /** Kept this long after creation unless the client asks for less (legacy `ttl`). */
  readonly ttlMs?: number;
  /** The poll interval suggested to clients. */
  readonly pollIntervalMs?: number;
};

/** The running tasks of a process and their state. */
export class Tasks {
  readonly store: TaskStore;
  private readonly ttlMs: number;
  private readonly pollIntervalMs: number;
  /** Running tasks of this process. */
  private readonly running = new Map<
    string,
    {
      controller: AbortController;
      era: Era;
      expiry: ReturnType<typeof setTimeout>;
      notify?: (t: TaskRecord) => void;
      work: TaskWork;
      resume?: { requestState?: string; answers: Record<string, unknown> };
    }
  >();
  /** Who waits for a task to end (legacy tasks/result). */
  private readonly waiters = new Map<string, Array<() => void>>();
  /** Who watches every change (2026-07-28 listen streams, tasks-tools.ts). */
  private readonly watchers = new Set<(t: TaskRecord) => void>();

  constructor(options: TasksOptions = {}) {
    this.store = options.store ?? new MemoryTaskStore();
    // never promise a ttl past the store's own bound (its records expire then)
    const bound = this.store.bounds?.maxAgeMs ?? Number.POSITIVE_INFINITY;
    this.ttlMs = Math.min(options.ttlMs ?? 15 * 60 * 1000, bound);
    this.pollIntervalMs = options.pollIntervalMs ?? 1000;
    // a task cancelled through another instance (a shared store) stops here too
    this.store.onCancelled?.((taskId) => this.running.get(taskId)?.controller.abort(new Error('The task was cancelled')));
    // a change made through another instance reaches this one's listen streams and waiters
    this.store.onChanged?.((taskId) => void this.heard(taskId));
    // answers sent to another instance for a task this one runs
    this.store.onAnswers?.((taskId, responses) => void this.received(taskId, responses));
  }

  /** Takes answers another instance forwarded, when this process runs the task. */
  private async received(taskId: string, responses: unknown): Promise<void> {
    const running = this.running.get(taskId);
    if (running === undefined) return;
    try {
      const t = await this.store.get(taskId);
      if (t !== undefined) await this.take(t, running, responses);
    } catch (err) {
      log('warn', `task ${taskId}: cannot take the answers forwarded by another instance`, err);
    }
  }

  /** Tells watchers (and, once it ended, waiters) of a change another instance made to `taskId`. */
  private async heard(taskId: string): Promise<void> {
    const t = await this.store.get(taskId).catch(() => undefined);
    if (t === undefined) return;
    for (const watch of [...this.watchers]) {
      try {
        watch(t);
      } catch (err) {
        log('warn', 'tasks: a watcher failed', err);
      }
    }
    if (TERMINAL.has(t.status)) for (const wake of [...(this.waiters.get(taskId) ?? [])]) wake();
  }

  /**
   * Creates a task of `owner` running `work` and returns it once stored (a `tasks/get` right after
   * finds it). `work` gets the task's signal (aborted by `tasks/cancel`); its result ends the task.
   * `notify` is told of every change (legacy status notifications). A full store ⇒ -32603.
   */
  async start(
    era: Era,
    owner: string,
    tool: string,
    work: TaskWork,
    opts: { ttlMs?: number; notify?: (t: TaskRecord) => void; running?: { result: Promise<CallToolResult>; controller: AbortController } } = {},
  ): Promise<TaskRecord> {
    const now = Date.now();
    const ttlMs = Math.max(1000, Math.min(opts.ttlMs !== undefined && Number.isFinite(opts.ttlMs) ? Math.floor(opts.ttlMs) : this.ttlMs, this.ttlMs));
    const record: TaskRecord = {
      taskId: randomUUID(),
      owner,
      tool,
      status: 'working',
      createdAt: now,
      lastUpdatedAt: now,
      ttlMs,
      pollIntervalMs: this.pollIntervalMs,
    };
    try {
      await this.store.create(record);
    } catch (err) {
      if (err instanceof TaskStoreFullError) throw new ProtocolError(ProtocolErrorCode.InternalError, `Cannot start ${tool} as a task: ${err.message}`);
      throw err;
    }
    // `running`: work already under way (a deferred tool's handler that asked to become a task)
    const controller = opts.running?.controller ?? new AbortController();
    // past its ttl nobody can fetch the task: work still under way (or parked waiting for answers) stops then
    const expiry = setTimeout(() => {
      controller.abort(new Error('The task outlived its ttl'));
      this.running.delete(record.taskId);
    }, ttlMs);
    expiry.unref();
    this.running.set(record.taskId, { controller, era, work, expiry, ...(opts.notify ? { notify: opts.notify } : {}) });
    void this.finish(record.taskId, era, opts.running?.result ?? work(controller.signal));
    return record;
  }

  /** Records how `work` ended. */
  private async finish(taskId: string, era: Era, work: Promise<CallToolResult>): Promise<void> {
    let update: Parameters<TaskStore['update']>[1];
    try {
      const result = await work;
      const running = this.running.get(taskId);
      if ((result as { resultType?: unknown }).resultType === 'input_required' && era === 'modern' && running && !running.controller.signal.aborted) {
        // parked until tasks/update answers every question; the next run continues the same call
        const asked = (result as { inputRequests?: Record<string, unknown>; requestState?: unknown }).inputRequests ?? {};
        const state = (result as { requestState?: unknown }).requestState;
        running.resume = { ...(typeof state === 'string' ? { requestState: state } : {}), answers: {} };
        await this.change(taskId, { status: 'input_required', inputRequests: asked }).catch((err: unknown) =>
          log('warn', `task ${taskId}: cannot record its questions`, err),
        );
        return;
      }
      if ((result as { resultType?: unknown }).resultType === 'input_required') {
        update = {
          status: 'failed',
          error: {
            code: ProtocolErrorCode.InternalError,
            message: 'The tool asked the client for input, which a legacy task cannot do: call it without a task',
          },
        };
      } else {
        // legacy: a tool error ends the task failed (its result is still what tasks/result gives); 2026: completed with isError
        update = { status: era === 'legacy' && result.isError === true ? 'failed' : 'completed', result };
      }
    } catch (err) {
      const code = err instanceof ProtocolError ? err.code : ProtocolErrorCode.InternalError;
      const data = err instanceof ProtocolError ? (err as { data?: unknown }).data : undefined;
      update = { status: 'failed', error: { code, message: err instanceof Error ? err.message : String(err), ...(data !== undefined ? { data } : {}) } };
    }
    await this.change(taskId, update).catch((err: unknown) => log('warn', `task ${taskId}: cannot record its end`, err));
    clearTimeout(this.running.get(taskId)?.expiry);
    this.running.delete(taskId);
    for (const wake of [...(this.waiters.get(taskId) ?? [])]) wake();
    this.waiters.delete(taskId);
  }

  /** Updates a task and tells its listener. */
  private async change(taskId: string, update: Parameters<TaskStore['update']>[1]): Promise<TaskRecord | undefined> {
    const before = await this.store.get(taskId);
    const after = await this.store.update(taskId, update);
    if (after && before && (after.status !== before.status || after.inputRequests !== before.inputRequests)) {
      try {
        if (after.status !== before.status) this.running.get(taskId)?.notify?.(after);
      } catch {
        // a closed connection: the client polls
      }
      for (const watch of [...this.watchers]) {
        try {
          watch(after);
        } catch (err) {
          log('warn', 'tasks: a watcher failed', err);
        }
      }
    }
    return after;
  }

  /** The task `taskId` of `owner`; -32602 when unknown, expired or another identity's. */
  async get(owner: string, taskId: unknown): Promise<TaskRecord> {
    if (typeof taskId !== 'string' || taskId.length === 0) throw invalid('taskId must be a non-empty string');
    const t = await this.store.get(taskId);
    if (!t || t.owner !== owner) throw invalid(`Unknown task: ${taskId} (tasks are kept for their ttl and seen only by the client that created them)`);
    return t;
  }

  /** Cancels a running task of `owner` (its work is aborted); a finished one is returned as it is. */
  async cancel(owner: string, taskId: unknown): Promise<{ task: TaskRecord; wasTerminal: boolean }> {
    const t = await this.get(owner, taskId);
    if (TERMINAL.has(t.status)) return { task: t, wasTerminal: true };
    const after = (await this.change(t.taskId, { status: 'cancelled', statusMessage: 'Cancelled by the client' })) ?? t;
    this.running.get(t.taskId)?.controller.abort(new Error('The task was cancelled'));
    return { task: after, wasTerminal: false };
  }

  /**
   * `tasks/update`: keeps the answers to questions the task of `owner` waits on (others are
   * ignored); once none is left, the work runs again with every answer, as the call's next round.
   * A task waiting for answers that this process does not run: a shared store that can forward
   * them (Redis) carries them to the process that runs it; otherwise the update is refused
   * (-32600, naming sticky routing), since its work and the answers so far live there.
   */
  async answer(owner: string, taskId: unknown, responses: unknown): Promise<void> {
    const t = await this.get(owner, taskId);
    const running = this.running.get(t.taskId);
    // the questions wait in the process that runs the work: answers reaching another (several
    // instances behind a load balancer, or this one restarted) cannot be taken, so they are refused
    if (t.status === 'input_required' && running === undefined) {
      // a shared store carries them to the instance that runs the task (Redis pub/sub)
      if (this.store.forwardAnswers) return this.store.forwardAnswers(t.taskId, responses);
      throw new ProtocolError(
        ProtocolErrorCode.InvalidRequest,
        `Task ${t.taskId} waits for its answers in the server instance that runs it, and this request reached another one (or that instance restarted): the answers were not taken. With several instances behind a load balancer, tasks/update must reach the instance that created the task (sticky routing); the task stays input_required until its ttl`,
      );
    }
    await this.take(t, running, responses);
  }

  /** Keeps `responses` for the questions task `t` (run here by `running`) waits on; runs it again once none is left. */
  private async take(t: TaskRecord, running: ReturnType<Tasks['running']['get']>, responses: unknown): Promise<void> {
    if (t.status !== 'input_required' || !running?.resume || typeof responses !== 'object' || responses === null || Array.isArray(responses)) return;
    const pending: Record<string, unknown> = { ...(t.inputRequests ?? {}) };
    for (const [key, value] of Object.entries(responses as Record<string, unknown>)) {
      if (!Object.hasOwn(pending, key)) continue;
      running.resume.answers[key] = value;
      delete pending[key];
    }
    if (Object.keys(pending).length > 0) {
      await this.change(t.taskId, { inputRequests: pending });
      return;
    }
    const { requestState, answers } = running.resume;
    delete running.resume;
    await this.change(t.taskId, { status: 'working' });
    void this.finish(
      t.taskId,
      running.era,
      running.work(running.controller.signal, { ...(requestState !== undefined ? { requestState } : {}), inputResponses: answers }),
    );
  }

  /** Calls `watcher` with each task that changes (status or questions) until the returned function is called. */
  watch(watcher: (t: TaskRecord) => void): () => void {
    this.watchers.add(watcher);
    return () => void this.watchers.delete(watcher);
  }

  /** The task once it has ended (legacy tasks/result blocks until then). */
  async settled(owner: string, taskId: unknown, signal: AbortSignal): Promise<TaskRecord> {
    for (;;) {
      const t = await this.get(owner, taskId);
      if (TERMINAL.has(t.status)) return t;
      signal.throwIfAborted();
      await new Promise<void>((resolve, reject) => {
        // each wake removes what this pass added: a long wait adds no listeners or waiters
        const done = (): void => {
          clearTimeout(timer);
          signal.removeEventListener('abort', aborted);
          const list = this.waiters.get(t.taskId);
          const at = list?.indexOf(wake) ?? -1;
          if (at >= 0) list!.splice(at, 1);
          if (list?.length === 0) this.waiters.delete(t.taskId);
        };
        const wake = (): void => {
          done();
          resolve();
        };
        const aborted = (): void => {
          done();
          reject(signal.reason);
        };
        const list = this.waiters.get(t.taskId) ?? [];
        list.push(wake);
        this.waiters.set(t.taskId, list);
        // a task of another process (shared store) ends without waking us: look again now and then
        const timer = setTimeout(wake, this.pollIntervalMs * 5);
        timer.unref();
        signal.addEventListener('abort', aborted, { once: true });
      });
    }
  }
}
