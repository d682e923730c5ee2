/**
 * The end of the tool-call pipeline: the dispatch of a call to its tool (an operation's API
 * request, an extra tool's handler, the reflection gate's persist tool, code mode's `execute`)
 * and the order of the steps before it, for the three kinds of call in one place
 * ({@link createDispatch}): a direct `tools/call`, a handler's nested call through `ctx.api`, and
 * a nested call of code mode's code (whose steps and run live in code-calls.ts). server.ts builds
 * one per server and runs every call through `runPipeline(steps, dispatch, call)`.
 *
 * This file is copied verbatim into every generated project.
 */
import type { CallToolResult, ServerContext } from '@modelcontextprotocol/server';
import { sessionOf } from '../core/era.js';
import type { PrimitiveGate } from '../core/primitive-gate.js';
import type { ToolEntry } from '../core/surface.js';
import type { ServerConfig } from '../core/types.js';
import type { TokenExchanger } from '../oauth/oauth-exchange.js';
import { isOAuthToken } from '../oauth/oauth-scopes.js';
import type { readArgumentEnv } from '../operation/arguments.js';
import type { Authenticator } from '../operation/auth.js';
import type { InFlightBudget } from '../operation/in-flight.js';
import type { CallOptions } from '../operation/operation-call.js';
import { sendOperation } from '../operation/operation-call.js';
import type { ResultStore } from '../operation/result-store.js';
import { DEFAULT_RESULT_POLICY } from '../operation/results.js';
import type { Settings } from '../process/settings.js';
import { TaskTools } from '../tasks/tasks-tools.js';
import { apiClient } from '../tools/api-client.js';
import { callExtraTool } from '../tools/extra-tools.js';
import { inputSession } from '../tools/handler-input.js';
import { replayAcrossRounds } from './api-replay.js';
import type { CodeFront } from './code-calls.js';
import { createCodeCalls } from './code-calls.js';
import { nestedScopes } from './nested-scopes.js';
import type { Dispatcher, PipelineTool, Step, ToolCall, ToolGuard } from './pipeline.js';
import { answer, checkArguments, enforceConcerns, nestedCall, reflectionStep, runPipeline } from './pipeline.js';
import type { PolicyLayer } from './policy-layer.js';

export type { CodeFront, CodeNestedOutcome, CodeWaiting } from './code-calls.js';

/** The reflection gate as the server sees it (reflection.ts's `ReflectionGate` is one). */
export interface ReflectionGuard extends ToolGuard {
  /** Whether `persistTool` is listed and callable (the host flow exists). */
  readonly exposesPersistTool: boolean;
  /** The `persist_justification` tool. */
  readonly persistTool: ToolEntry;
  /** Runs `persistTool`; never throws. */
  persist(args: unknown): Promise<CallToolResult>;
}

/** A gate that knows the concern preset a request has selected (concern-protocol.ts's `ConcernControl` is one). */
export interface PresetGate extends PrimitiveGate {
  /** The request's active concern preset (its `_meta`'s, else the session's), or undefined. */
  activePreset(ctx?: ServerContext): string | undefined;
}

/** `settings` whose results are compacted but not cut to a token budget (code mode's nested calls). */
function wholeResults(settings: Settings): Settings {
  return { ...settings, results: { ...(settings.results ?? DEFAULT_RESULT_POLICY), maxTokens: Number.MAX_SAFE_INTEGER } };
}

/** `settings` with a call's tighter bounds applied (the lower value wins). */
function bounded(settings: Settings, bounds: ToolCall['bounds']): Settings {
  if (bounds === undefined) return settings;
  const out: Settings = { ...settings };
  if (bounds.timeoutMs !== undefined) out.timeoutMs = Math.min(settings.timeoutMs, bounds.timeoutMs);
  if (bounds.maxResponseBytes !== undefined) out.maxResponseBytes = Math.min(settings.maxResponseBytes, bounds.maxResponseBytes);
  return out;
}

/** What the dispatch of one server needs (createServer builds it once, for every instance). */
export type DispatchOptions = {
  readonly config: ServerConfig;
  readonly settings: Settings;
  readonly auth: Authenticator;
  readonly argumentEnv: ReturnType<typeof readArgumentEnv>;
  readonly inFlight: InFlightBudget;
  readonly resultStore: ResultStore;
  /** Every tool of the server by name. */
  readonly byName: ReadonlyMap<string, PipelineTool>;
  readonly maxArgumentBytes: number;
  readonly reflection?: ReflectionGuard;
  readonly policy?: PolicyLayer;
  readonly code?: CodeFront;
  /** Steps of the embedder (createServer's `steps`), after the policy layer's. */
  readonly steps?: readonly Step[];
  readonly exchange?: TokenExchanger;
  readonly fetch?: CallOptions['fetch'];
  /** Resource subscriptions: a handler's `ctx.notifyResourceUpdated`. */
  readonly subscriptions?: { updated(uri: string): void };
};

/** The steps of a direct tool call and the dispatch they end in. */
export type Dispatch = {
  /**
   * The steps of a direct `tools/call`, in order: the policy layer's (telemetry, audit, access,
   * limits — policy.ts), the embedder's, concern enforcement, argument validation, the reflection
   * gate (pipeline.ts `toolCallSteps`).
   */
  readonly steps: readonly Step[];
  readonly dispatch: Dispatcher;
};

/** The dispatch of a server's tool calls and the step order of each kind of call. */
export function createDispatch(options: DispatchOptions): Dispatch {
  const { config, settings, auth, argumentEnv, inFlight, resultStore, byName, maxArgumentBytes, reflection, policy, code } = options;
  // The step order of every kind of tool call — here and nowhere else. The policy layer's steps
  // (policy.ts: telemetry, audit, access, limits, as configured) always run first, as one group.
  const policySteps = policy?.steps ?? [];
  /** A direct `tools/call`: the policy layer's steps, the embedder's, concern enforcement, argument validation, the reflection gate. */
  const steps: Step[] = [...policySteps, ...(options.steps ?? []), enforceConcerns, checkArguments, ...(reflection ? [reflectionStep(reflection)] : [])];
  /** A handler's nested call: the policy's steps, the OAuth token's scopes (oauth-scopes.ts), argument validation, then the operation's request (never a result that asks for input). */
  const nestedSteps: Step[] = [...policySteps, nestedScopes, checkArguments];
  /** Code mode's nested calls: their own steps (code-calls.ts), then this dispatch. */
  const codeCalls = code
    ? createCodeCalls({ code, byName, maxArgumentBytes, envPrefix: config.envPrefix, reflection, policySteps, dispatch: (call) => dispatch(call) })
    : undefined;

  /** Sends the call to its tool: the API request, the extra tool's handler, or the persist tool. */
  const dispatch: Dispatcher = async (call) => {
    const target = call.target;
    // each api call of the code: a nested call of this one (code-calls.ts); the run counts against
    // the process's bound of runs under way and this client's share of it
    if (target.kind === 'code') return codeCalls!.run(call, target.args, withPresetResults(settings, call).results ?? DEFAULT_RESULT_POLICY);
    if (target.kind === 'persist') {
      const result = await reflection!.persist(call.args);
      if (policy && result.isError !== true) {
        await policy.record({
          name: 'justification.persisted',
          session: sessionOf(call.ctx, call.era),
          client: call.identity,
          era: call.era,
          primitive: target.name,
          arguments: { domain: call.args.domain },
          outcome: 'ok',
        });
      }
      return answer(result);
    }
    if (target.kind === 'extra') {
      // a handler's log lines also go to the client, as logging notifications of this request
      const clientLog = (level: 'debug' | 'info' | 'warn' | 'error', message: string, data?: unknown): void =>
        void call.ctx.mcpReq
          .log(level === 'warn' ? 'warning' : level, data === undefined ? message : { message, data }, target.tool.name)
          .catch(() => undefined);
      const token = call.ctx.mcpReq._meta?.progressToken;
      const progress =
        token === undefined
          ? undefined
          : (value: number, total?: number, message?: string): void =>
              void call.ctx.mcpReq
                .notify({
                  method: 'notifications/progress',
                  params: { progressToken: token, progress: value, ...(total !== undefined ? { total } : {}), ...(message !== undefined ? { message } : {}) },
                })
                .catch(() => undefined);
      // ctx.api: the operations the tool declared, each a nested call through the policy's steps and this dispatch
      const uses = target.tool.uses;
      // a 2026-07-28 handler runs again on each input round: its earlier API calls are replayed, not made again (api-replay.ts)
      const api = uses
        ? apiClient(
            uses,
            replayAcrossRounds(call, (tool, args) => runNested(nestedCall(call, tool, args))),
          )
        : undefined;
      // ctx.elicit / sample / roots: real requests (legacy), or input rounds of this call (2026-07-28)
      const input = inputSession({ era: call.era, server: call.server, ctx: call.ctx, state: call.state, signal: call.signal });
      const feed = options.subscriptions;
      const notifyResourceUpdated = feed ? (uri: string): void => feed.updated(uri) : undefined;
      // ctx.runAsTask: a deferred task tool's handler turns its call into a task (tasks-tools.ts)
      const runAsTask = TaskTools.escalation(call.ctx);
      return answer(
        await callExtraTool(target.tool, call.args, call.signal, {
          clientLog,
          input,
          ...(notifyResourceUpdated ? { notifyResourceUpdated } : {}),
          ...(progress ? { progress } : {}),
          ...(api ? { api } : {}),
          ...(runAsTask ? { runAsTask } : {}),
        }),
      );
    }
    // the MCP client's own request headers (its Authorization above all) reach the API only
    // for a security scheme that takes its credential `fromClient`
    const callOptions: CallOptions = {
      signal: call.signal,
      auth,
      argumentEnv,
      inFlight,
      keepResult: (tool, text) => resultStore.keep(call.identity, tool, text),
    };
    if (call.headers) callOptions.clientHeaders = call.headers;
    // the MCP token itself never reaches the API: a scheme with `exchange` gets a token exchanged for it
    const authInfo = call.ctx?.http?.authInfo;
    if (options.exchange !== undefined && isOAuthToken(authInfo)) callOptions.exchange = (spec, scheme) => options.exchange!(authInfo, spec, scheme);
    if (options.fetch) callOptions.fetch = options.fetch;
    // a step that may answer before this returns (the limits' timeout) hears the status as soon as the headers arrive
    if (call.onHttpStatus) callOptions.onStatus = call.onHttpStatus;
    // a nested call of code: marked sent when its request goes out (the run's answer says so if the run stops it after)
    const sent = codeCalls?.sentMark(call);
    if (sent) callOptions.onSend = sent;
    const resultSettings = withPresetResults(bounded(settings, call.bounds), call);
    // code mode's calls: the code gets the whole (compacted) result, never one cut to the model's
    // token budget — it filters before anything reaches the context, and execute's answer is budgeted
    // the outcome carries the response's status: the steps around the call (audit, spans) and a nested call's caller read it
    return sendOperation(target.tool, call.args, call.parent?.code === true ? wholeResults(resultSettings) : resultSettings, callOptions);
  };

  const runNested = async (call: ToolCall): Promise<{ result: CallToolResult; status?: number }> => {
    const { result, status } = await runPipeline(nestedSteps, dispatch, call);
    return { result: result as CallToolResult, ...(status !== undefined ? { status } : {}) };
  };

  /** `settings` with the result settings of the request's active concern preset over the server's (the tool's own still win, in results.ts). */
  const withPresetResults = (current: Settings, call: ToolCall): Settings => {
    const presets = config.resultPresets;
    if (presets === undefined) return current;
    const preset = (call.gate as Partial<PresetGate>).activePreset?.(call.ctx);
    const own = preset !== undefined && Object.hasOwn(presets, preset) ? presets[preset] : undefined;
    return own === undefined ? current : { ...current, results: { ...(current.results ?? DEFAULT_RESULT_POLICY), ...own } };
  };

  return { steps, dispatch };
}
