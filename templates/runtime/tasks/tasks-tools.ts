/**
 * The task tools of a server, as createServer (server.ts) sees them: which tools may or must run as
 * MCP tasks (extra tools with `task`, operation tools whose operation is long-running), the
 * capabilities and `tools/list` entries that say so in each era, and the routing of a `tools/call`:
 * a task created (and the call run in it), or the call left to run at once.
 *
 * The whole pipeline (audit, access rules, limits, concern enforcement, validation, the gate) runs
 * inside the task, once, exactly as for a call answered at once; the task's signal replaces the
 * request's, so the work outlives the request that started it and stops on `tasks/cancel`.
 *
 * This file is copied verbatim into every generated project.
 */

import type { CallToolResult, Server, ServerCapabilities, ServerContext, Tool } from '@modelcontextprotocol/server';
import { ProtocolError, ProtocolErrorCode } from '@modelcontextprotocol/server';
import type { Era } from '../core/era.js';
import type { TaskResume, TaskSupport, TaskWork } from './tasks.js';
import { Tasks } from './tasks.js';
import type { TaskStore } from './tasks-store.js';
import { MemoryTaskStore, taskBounds } from './tasks-store.js';
import {
  createdResult,
  declaresTasks,
  installTaskMethods,
  listenNotification,
  missingTasks,
  statusNotification,
  TASK_CAPABILITIES,
  TASKS_EXTENSION,
} from './tasks-wire.js';

/** Most task ids one `subscriptions/listen` may follow (more: -32602). */
export const MAX_LISTEN_TASK_IDS = 100;

/** A tool as far as tasks go. */
type TaskCandidate = { readonly name: string; readonly kind: string; readonly task?: TaskSupport | 'deferred'; readonly longRunning?: unknown };

/** The `ctx.runAsTask` of the requests of deferred tools now running (by the request's context). */
const ESCALATIONS = new WeakMap<ServerContext, () => void>();

/** The task tools of a server and their tasks (one per process: tasks outlive server instances). */
export class TaskTools {
  private constructor(
    readonly support: ReadonlyMap<string, TaskSupport | 'deferred'>,
    readonly tasks: Tasks,
  ) {}

  /**
   * The task tools among `tools` (extra tools' `task`, long-running operations: `optional`);
   * undefined when none. Tasks live in `store`, else in this process, bounded by
   * `<envPrefix>_MAX_TASKS` and `_TASK_TTL_MS` (positive integers; anything else throws naming the variable).
   */
  static of(tools: readonly TaskCandidate[], envPrefix: string, env: NodeJS.ProcessEnv, store?: TaskStore): TaskTools | undefined {
    const support = new Map<string, TaskSupport | 'deferred'>();
    for (const t of tools) {
      if (t.kind === 'extra' && t.task !== undefined) support.set(t.name, t.task);
      else if (t.kind === 'operation' && t.longRunning !== undefined) support.set(t.name, 'optional');
    }
    if (support.size === 0) return undefined;
    const bounds = taskBounds(envPrefix, env);
    // a shared store was made with the same bounds (main.ts); its ttl caps what a task is promised
    return new TaskTools(support, new Tasks({ store: store ?? new MemoryTaskStore(bounds), ttlMs: bounds.maxAgeMs }));
  }

  /** `base` with the tasks capability of `era` (legacy `tasks`, 2026-07-28 the extension, as exactly `{}`). */
  capabilities(era: Era, base: ServerCapabilities): ServerCapabilities {
    if (era === 'legacy') return { ...base, ...TASK_CAPABILITIES.legacy } as ServerCapabilities;
    const extensions = { ...((base as { extensions?: Record<string, unknown> }).extensions ?? {}), [TASKS_EXTENSION]: {} };
    return { ...base, extensions } as ServerCapabilities;
  }

  /** `tools` with `execution.taskSupport` on the task tools (legacy; 2026-07-28 lists no `execution`). */
  listed(era: Era, tools: Tool[]): Tool[] {
    if (era !== 'legacy') return tools;
    return tools.map((t) => {
      const support = this.support.get(t.name);
      return support === undefined ? t : ({ ...t, execution: { taskSupport: support === 'deferred' ? 'optional' : support } } as Tool);
    });
  }

  /**
   * The context of a task's next run after `tasks/update` answered its questions: the request's,
   * with the answers as its `inputResponses` and the run's round state (`open` checks and opens
   * the sealed one, as the SDK does for a retried request) — so the run is the call's next round.
   */
  static resumed(ctx: ServerContext, resume: TaskResume | undefined, open: (token: string) => unknown): ServerContext {
    if (resume === undefined) return ctx;
    const state = resume.requestState !== undefined ? open(resume.requestState) : undefined;
    return { ...ctx, mcpReq: { ...ctx.mcpReq, inputResponses: resume.inputResponses, requestState: () => state } } as ServerContext;
  }

  /** The `ctx.runAsTask` of the request `ctx` (a deferred tool's run), if any. */
  static escalation(ctx: ServerContext): (() => void) | undefined {
    return ESCALATIONS.get(ctx);
  }

  /**
   * A `task: deferred` tool called by a 2026-07-28 client that runs tasks: the call runs as any
   * call (its input-required rounds answered synchronously) until the handler calls
   * `ctx.runAsTask()`; then the client gets a task at once and the run goes on inside it, under
   * the task's signal. Undefined when `name` is no such tool or the client does not run tasks.
   */
  async deferred(era: Era, name: string, ctx: ServerContext, owner: string, work: TaskWork): Promise<CallToolResult | undefined> {
    if (era !== 'modern' || this.support.get(name) !== 'deferred' || !declaresTasks(ctx)) return undefined;
    const controller = new AbortController();
    const request = ctx.mcpReq.signal;
    const onAbort = (): void => controller.abort(request.reason);
    request.addEventListener('abort', onAbort, { once: true });
    let escalate: () => void = () => undefined;
    const escalated = new Promise<undefined>((resolve) => (escalate = () => resolve(undefined)));
    ESCALATIONS.set(ctx, () => escalate());
    try {
      const result = work(controller.signal);
      const first = await Promise.race([result.then((r) => ({ r })), escalated]);
      if (first) return first.r;
      // the task outlives the request: the request's end no longer aborts it, tasks/cancel does
      request.removeEventListener('abort', onAbort);
      return createdResult(era, await this.tasks.start(era, owner, name, work, { running: { result, controller } }));
    } finally {
      request.removeEventListener('abort', onAbort);
      ESCALATIONS.delete(ctx);
    }
  }

  /**
   * A 2026-07-28 listen stream for `taskIds` (`subscriptions/listen` with `notifications.taskIds`,
   * served before the SDK's listen router, which knows no task ids): the ids of `owner`'s live tasks
   * among them (what the acknowledgement lists; another identity's are left out as unknown), and a
   * subscription that sends `notifications/tasks` for each change of one of those tasks until stopped.
   */
  async listen(
    owner: string,
    taskIds: readonly unknown[],
    subscriptionId: unknown,
    send: (message: unknown) => void,
  ): Promise<{ accepted: string[]; stop: () => void }> {
    const ids = [...new Set(taskIds)].filter((id): id is string => typeof id === 'string');
    if (ids.length > MAX_LISTEN_TASK_IDS)
      throw new ProtocolError(
        ProtocolErrorCode.InvalidParams,
        `A listen stream may follow at most ${MAX_LISTEN_TASK_IDS} task ids (got ${ids.length}): open several streams`,
      );
    // one round trip where the store allows (Redis: MGET)
    const store = this.tasks.store;
    const found = store.getMany ? await store.getMany(ids) : await Promise.all(ids.map((id) => store.get(id)));
    const accepted = ids.filter((_, i) => found[i]?.owner === owner);
    const wanted = new Set(accepted);
    const stop = this.tasks.watch((t) => {
      if (wanted.has(t.taskId) && t.owner === owner) send({ jsonrpc: '2.0', ...listenNotification(t, subscriptionId) });
    });
    return { accepted, stop };
  }

  /** Registers tasks/get and the other task methods of `era` on `server`; `visible` filters tasks/list by the tool of each task (the request's gate). */
  install(server: Server, era: Era, ownerOf: (ctx: ServerContext) => string, visible?: (tool: string, ctx: ServerContext) => boolean): void {
    installTaskMethods(this.tasks, server, era, ownerOf, visible);
  }

  /**
   * Routes a `tools/call` of `name`: a task tool the client asks to run as a task (legacy
   * `params.task`; 2026-07-28: the request declares the extension) gets a task running `work` and
   * the create-task result; a `required` one called otherwise is refused (legacy -32601, 2026-07-28
   * -32021 naming the extension); anything else is undefined: run it at once.
   */
  async call(era: Era, name: string, params: unknown, ctx: ServerContext, owner: string, server: Server, work: TaskWork): Promise<CallToolResult | undefined> {
    const support = this.support.get(name);
    // 2026-07-28: a deferred tool becomes a task when its handler says so (deferred() below)
    if (support === undefined || (support === 'deferred' && era === 'modern')) return undefined;
    const hint = (params as { task?: unknown }).task;
    const asked = era === 'legacy' ? typeof hint === 'object' && hint !== null : declaresTasks(ctx);
    if (!asked) {
      if (support !== 'required') return undefined;
      if (era === 'legacy')
        throw new ProtocolError(
          ProtocolErrorCode.MethodNotFound,
          `Tool ${name} runs only as a task: call it with params.task (the server declares the tasks capability)`,
        );
      throw missingTasks(`Tool ${name}`);
    }
    const ttl = era === 'legacy' ? (hint as { ttl?: unknown }).ttl : undefined;
    const notify =
      era === 'legacy'
        ? (t: Parameters<typeof statusNotification>[0]) => void server.notification(statusNotification(t) as never).catch(() => undefined)
        : undefined;
    const record = await this.tasks.start(era, owner, name, work, { ...(typeof ttl === 'number' ? { ttlMs: ttl } : {}), ...(notify ? { notify } : {}) });
    return createdResult(era, record);
  }
}
