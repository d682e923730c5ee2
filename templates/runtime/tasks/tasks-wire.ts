/**
 * MCP tasks on the wire of each era (tasks.ts is the engine): the shapes of a task, the create
 * result, the notifications, and the task methods registered on a server instance.
 *
 * - 2025-11-25: `ttl` / `pollInterval`, `{ task }` from `tools/call`, tasks/get, tasks/result (with
 *   `_meta["io.modelcontextprotocol/related-task"]`), tasks/list, tasks/cancel (the cancelled task;
 *   -32602 for a finished one), `notifications/tasks/status`.
 * - 2026-07-28: `ttlMs` / `pollIntervalMs`, a flat `CreateTaskResult` (`resultType: "task"`),
 *   tasks/get with the result or error inlined, tasks/cancel and tasks/update acknowledged with
 *   `resultType: "complete"`, -32021 for a request that does not declare the extension,
 *   `notifications/tasks` on listen streams; tasks/result and tasks/list are not registered (-32601).
 *
 * This file is copied verbatim into every generated project.
 */

import type { CallToolResult, Server, ServerContext } from '@modelcontextprotocol/server';
import { CLIENT_CAPABILITIES_META_KEY, MissingRequiredClientCapabilityError, ProtocolError, ProtocolErrorCode } from '@modelcontextprotocol/server';
import type { Era } from '../core/era.js';
import type { Tasks } from './tasks.js';
import type { TaskRecord } from './tasks-store.js';

/** The extension's id (2026-07-28). */
export const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';
/** The legacy `_meta` key naming the task a message belongs to. */
export const RELATED_TASK = 'io.modelcontextprotocol/related-task';

/** The capabilities of each era for a server with task tools. */
export const TASK_CAPABILITIES = {
  legacy: { tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } } },
  // exactly {}: ext-tasks treats anything inside as "no tasks"
  modern: { extensions: { [TASKS_EXTENSION]: {} } },
} as const;

const invalid = (message: string) => new ProtocolError(ProtocolErrorCode.InvalidParams, message);
const iso = (ms: number) => new Date(ms).toISOString();

/** Whether the modern request `ctx` declares the tasks extension (in its `_meta` envelope). */
export function declaresTasks(ctx: ServerContext): boolean {
  const caps = (ctx.mcpReq.envelope as Record<string, unknown> | undefined)?.[CLIENT_CAPABILITIES_META_KEY] as
    | { extensions?: Record<string, unknown> }
    | undefined;
  return typeof caps?.extensions === 'object' && caps.extensions !== null && caps.extensions[TASKS_EXTENSION] !== undefined;
}

/** The -32021 of a modern request that needs the extension and does not declare it. */
export function missingTasks(what: string): MissingRequiredClientCapabilityError {
  return new MissingRequiredClientCapabilityError(
    { requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } } },
    `${what} needs the ${TASKS_EXTENSION} extension, which this request does not declare in its client capabilities`,
  );
}

/** A task on the legacy wire. */
function legacyTask(t: TaskRecord): Record<string, unknown> {
  return {
    taskId: t.taskId,
    status: t.status,
    ...(t.statusMessage !== undefined ? { statusMessage: t.statusMessage } : {}),
    createdAt: iso(t.createdAt),
    lastUpdatedAt: iso(t.lastUpdatedAt),
    ttl: t.ttlMs,
    pollInterval: t.pollIntervalMs,
  };
}

/** A task on the 2026-07-28 wire (no result or error: {@link detailed} adds them). */
function modernTask(t: TaskRecord): Record<string, unknown> {
  return {
    taskId: t.taskId,
    status: t.status,
    ...(t.statusMessage !== undefined ? { statusMessage: t.statusMessage } : {}),
    createdAt: iso(t.createdAt),
    lastUpdatedAt: iso(t.lastUpdatedAt),
    ttlMs: t.ttlMs,
    pollIntervalMs: t.pollIntervalMs,
  };
}

/** `tasks/get` of the 2026-07-28 wire: the task, with its result (completed) or error (failed). */
function detailed(t: TaskRecord): Record<string, unknown> {
  const out: Record<string, unknown> = { resultType: 'complete', ...modernTask(t) };
  if (t.status === 'completed' && t.result) out.result = { ...t.result, resultType: 'complete' };
  if (t.status === 'failed') out.error = t.error ?? { code: ProtocolErrorCode.InternalError, message: 'The task failed' };
  if (t.status === 'input_required' && t.inputRequests) out.inputRequests = t.inputRequests;
  return out;
}

/**
 * Registers the task methods of `era` on `server`; `ownerOf` names the identity of a request.
 * Legacy: tasks/get, tasks/result, tasks/list, tasks/cancel. 2026-07-28: tasks/get, tasks/cancel,
 * tasks/update (-32021 without the extension; tasks/result and tasks/list stay unknown: -32601).
 */
export function installTaskMethods(
  tasks: Tasks,
  server: Server,
  era: Era,
  ownerOf: (ctx: ServerContext) => string,
  visible: (tool: string, ctx: ServerContext) => boolean = () => true,
): void {
  const params = { params: { '~standard': { version: 1, vendor: 'mcpgen', validate: (value: unknown) => ({ value }) } } } as const;
  const id = (p: unknown): unknown => (p as { taskId?: unknown } | undefined)?.taskId;
  if (era === 'legacy') {
    server.setRequestHandler('tasks/get', params, async (p, ctx) => legacyTask(await tasks.get(ownerOf(ctx), id(p))));
    // the request's concern preferences and access rules filter tasks/list as they filter tools/list
    server.setRequestHandler('tasks/list', params, async (_p, ctx) => ({
      tasks: (await tasks.store.list(ownerOf(ctx))).filter((t) => visible(t.tool, ctx)).map(legacyTask),
    }));
    server.setRequestHandler('tasks/cancel', params, async (p, ctx) => {
      const { task, wasTerminal } = await tasks.cancel(ownerOf(ctx), id(p));
      if (wasTerminal) throw invalid(`Task ${task.taskId} has already ended (${task.status}): it cannot be cancelled`);
      return legacyTask(task);
    });
    server.setRequestHandler('tasks/result', params, async (p, ctx) => {
      const t = await tasks.settled(ownerOf(ctx), id(p), ctx.mcpReq.signal);
      const related = { [RELATED_TASK]: { taskId: t.taskId } };
      if (t.result) return { ...t.result, _meta: { ...(t.result._meta ?? {}), ...related } };
      if (t.status === 'cancelled') throw new ProtocolError(ProtocolErrorCode.InternalError, `Task ${t.taskId} was cancelled`, related);
      throw new ProtocolError(t.error?.code ?? ProtocolErrorCode.InternalError, t.error?.message ?? 'The task failed', t.error?.data ?? related);
    });
    return;
  }
  const gated = (ctx: ServerContext, method: string): void => {
    if (!declaresTasks(ctx)) throw missingTasks(method);
  };
  server.setRequestHandler('tasks/get', params, async (p, ctx) => {
    gated(ctx, 'tasks/get');
    return detailed(await tasks.get(ownerOf(ctx), id(p)));
  });
  server.setRequestHandler('tasks/cancel', params, async (p, ctx) => {
    gated(ctx, 'tasks/cancel');
    await tasks.cancel(ownerOf(ctx), id(p));
    return { resultType: 'complete' };
  });
  server.setRequestHandler('tasks/update', params, async (p, ctx) => {
    gated(ctx, 'tasks/update');
    // the SDK lifts `inputResponses` off the params of every request (as for a retried call)
    await tasks.answer(ownerOf(ctx), id(p), ctx.mcpReq.inputResponses ?? (p as { inputResponses?: unknown }).inputResponses);
    return { resultType: 'complete' };
  });
}

/** The `tools/call` answer that creates task `t` in `era`. */
export function createdResult(era: Era, t: TaskRecord): CallToolResult {
  // the v2 SDK checks a tools/call result: content must be there
  if (era === 'legacy') return { content: [], task: legacyTask(t) } as unknown as CallToolResult;
  return { content: [], resultType: 'task', ...modernTask(t) } as unknown as CallToolResult;
}

/** The 2026-07-28 `notifications/tasks` of `t` on the listen stream `subscriptionId`: the whole task, result or error inlined. */
export function listenNotification(t: TaskRecord, subscriptionId: unknown): { method: 'notifications/tasks'; params: Record<string, unknown> } {
  const { resultType: _complete, ...task } = detailed(t);
  return { method: 'notifications/tasks', params: { ...task, _meta: { 'io.modelcontextprotocol/subscriptionId': subscriptionId } } };
}

/** The legacy `notifications/tasks/status` of `t` (sent to the connection that created it). */
export function statusNotification(t: TaskRecord): { method: 'notifications/tasks/status'; params: Record<string, unknown> } {
  return { method: 'notifications/tasks/status', params: legacyTask(t) };
}
