/**
 * The `tools/list` and `tools/call` handlers of one server instance: what the request may list
 * (the catalogue, or search mode's or code mode's own tools, through the instance's gate), search
 * mode's `search_tools`, `describe_tool` and `call_tool` and code mode's answered here, task tools
 * run as tasks, and every other call sent into the pipeline (tool-call.ts).
 */
import type { CallToolResult, ServerContext } from '@modelcontextprotocol/server';
import { OPEN_GATE } from '../core/primitive-gate.js';
import type { PresetGate } from '../pipeline/dispatch.js';
import { openState } from '../shared/state.js';
import type { TaskWork } from '../tasks/tasks.js';
import { TaskTools } from '../tasks/tasks-tools.js';
import { callArguments, invalidParams } from './instance.js';
import type { ToolInstance, ToolServing } from './tool-call.js';
import { callTool, identityOf } from './tool-call.js';
import { toolDescriptor } from './tool-table.js';
import { listAnswered } from './warm.js';

/** A required string argument of a search-mode tool; anything else is invalid params. */
function stringArgument(args: Record<string, unknown>, key: string, tool: string): string {
  const value = args[key];
  if (typeof value !== 'string' || value.length === 0) throw invalidParams(`Invalid arguments for tool ${tool}: ${key} must be a non-empty string`);
  return value;
}

/** A pass-through params schema: the SDK has already checked the spec shape; the params object is kept as received (an argument named `__proto__` included). */
const RAW_PARAMS = { '~standard': { version: 1, vendor: 'mcpgen', validate: (value: unknown) => ({ value }) } } as const;

/** Registers the tool handlers of `tools.server` (a server with at least one tool). */
export function installToolHandlers(serving: ToolServing, tools: ToolInstance): void {
  const { server, instance, gate } = tools;
  const { table, taskTools, stateKey } = serving;
  const { byName, preprocessors, metadata, catalogue, search, front, searchNames, code, codeFront, codeNames } = table;
  const run = (name: string, args: Record<string, unknown>, ctx: ServerContext, viaCallTool?: string, signal?: AbortSignal) =>
    callTool(serving, tools, name, args, ctx, viaCallTool, signal);
  taskTools?.install(
    server,
    instance.era,
    (ctx) => identityOf(serving, instance, ctx),
    (tool, ctx) => gate.visible('tools', tool, ctx),
  );

  // search mode per concern preset: the request's active preset decides what is listed
  const activePreset = (gate as Partial<PresetGate>).activePreset;
  const modeOf = (ctx: ServerContext): 'list' | 'search' | 'code' => (search === undefined ? 'list' : (search.modeOf?.(activePreset?.(ctx)) ?? 'search'));
  const listsFront = (ctx: ServerContext): boolean => modeOf(ctx) === 'search';
  server.setRequestHandler('tools/list', (_request, ctx) => {
    listAnswered();
    // code mode: its own tools are always listed (the persist tool as the gate says)
    if (codeFront && modeOf(ctx) === 'code')
      return {
        tools: codeFront
          .filter((t) => codeNames.has(t.name) || gate.visible('tools', t.name, ctx))
          .map((t) => (codeNames.has(t.name) ? t : gate.decorate('tools', t.name, t))),
      };
    // search mode's own three tools are always listed: what they reach is filtered by the gate
    if (front && listsFront(ctx))
      return {
        tools:
          gate === OPEN_GATE
            ? front
            : front
                .filter((t) => searchNames.has(t.name) || gate.visible('tools', t.name, ctx))
                .map((t) => (searchNames.has(t.name) ? t : gate.decorate('tools', t.name, t))),
      };
    const shown = taskTools ? taskTools.listed(instance.era, catalogue()) : catalogue();
    if (gate === OPEN_GATE) return { tools: shown };
    return { tools: shown.filter((t) => gate.visible('tools', t.name, ctx)).map((t) => gate.decorate('tools', t.name, t)) };
  });

  /** The tool names this request may see (for a did-you-mean: never a hidden one). */
  const visibleNames = (ctx: ServerContext): string[] => [...byName.keys()].filter((n) => gate.visible('tools', n, ctx));

  server.setRequestHandler('tools/call', { params: RAW_PARAMS }, async (params, ctx) => {
    const { name, arguments: raw } = params as { name: string; arguments?: unknown };
    // one value for validation, the gate and the call: a missing `arguments` is `{}` everywhere,
    // so leaving it out cannot skip the gate of a tool whose arguments are all optional; the
    // envelope (an object, or left out) was checked once, before this handler (instance.ts checkToolCall)
    const args = (raw ?? {}) as Record<string, unknown>;
    if (code && !byName.has(name) && codeNames.has(name) && modeOf(ctx) === 'code') {
      if (name === code.executeName) return run(name, args, ctx);
      if (name === search!.names.search)
        return search!.search(
          args,
          (n) => code.signature(n) !== undefined && gate.visible('tools', n, ctx),
          metadata,
          (n) => code.signature(n),
        );
      const wanted = stringArgument(args, 'name', name);
      const tool = metadata(wanted);
      const signature = code.signature(wanted);
      if (!tool || signature === undefined || !gate.visible('tools', wanted, ctx))
        return {
          isError: true,
          content: [
            {
              type: 'text',
              text: search!.unknown(
                wanted,
                visibleNames(ctx).filter((n) => code.signature(n) !== undefined),
              ),
            },
          ],
        };
      const described = {
        name: tool.name,
        ...(tool.title !== undefined ? { title: tool.title } : {}),
        ...(tool.description !== undefined ? { description: tool.description } : {}),
        signature,
      };
      return {
        content: [{ type: 'text', text: `${tool.description ? `/** ${tool.description.replace(/\*\//g, '* /').slice(0, 1000)} */\n` : ''}${signature}` }],
        structuredContent: described,
      };
    }
    if (search && !byName.has(name)) {
      if (name === search.names.search) return search.search(args, (n) => metadata(n) !== undefined && gate.visible('tools', n, ctx), metadata);
      if (name === search.names.describe) {
        const wanted = stringArgument(args, 'name', name);
        const tool = metadata(wanted);
        if (!tool || !gate.visible('tools', wanted, ctx))
          return { isError: true, content: [{ type: 'text', text: search.unknown(wanted, visibleNames(ctx)) }] };
        const entry = gate.decorate('tools', tool.name, toolDescriptor(tool));
        return { content: [{ type: 'text', text: JSON.stringify(entry) }], structuredContent: entry as unknown as Record<string, unknown> };
      }
      if (name === search.names.call) {
        const inner = stringArgument(args, 'name', name);
        // the same -32602 as a direct call, with the closest names and a pointer to search_tools
        if (!byName.has(inner) && !preprocessors.has(inner)) throw invalidParams(search.unknown(inner, visibleNames(ctx)));
        return run(inner, callArguments(inner, args.arguments), ctx, name);
      }
    }
    // a task tool the client runs as a task: the call runs in the task, under its signal (tasks-tools.ts);
    // one the request may not see (access rules, scopes, concerns) gets no task: the pipeline refuses it at once
    if (taskTools && gate.visible('tools', name, ctx)) {
      const owner = identityOf(serving, instance, ctx);
      const work: TaskWork = async (taskSignal, resume) =>
        (await run(
          name,
          args,
          TaskTools.resumed(ctx, resume, (token) => openState(stateKey, token)),
          undefined,
          taskSignal,
        )) as CallToolResult;
      const asTask =
        (await taskTools.deferred(instance.era, name, ctx, owner, work)) ?? (await taskTools.call(instance.era, name, params, ctx, owner, server, work));
      if (asTask) return asTask;
    }
    return run(name, args, ctx);
  });
}
