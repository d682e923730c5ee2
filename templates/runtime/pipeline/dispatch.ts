/**
 * The end of the tool-call pipeline: the dispatch of a call to its tool (an operation's API
 * request, an extra tool's handler, the reflection gate's persist tool, code mode's `execute`)
 * and the order of the steps before it, for the three kinds of call in one place
 * ({@link createDispatch}): a direct `tools/call`, a handler's nested call through `ctx.api`, and
 * a nested call of code mode's code. server.ts builds one per server and runs every call through
 * `runPipeline(steps, dispatch, call)`.
 *
 * This file is copied verbatim into every generated project.
 */
import type { CallToolResult, InputRequiredResult, ServerContext } from '@modelcontextprotocol/server';
import { argumentsHash } from '../core/canonical-json.js';
import { sessionOf } from '../core/era.js';
import { isRecord } from '../core/json-shapes.js';
import type { PrimitiveGate } from '../core/primitive-gate.js';
import type { ToolEntry } from '../core/surface.js';
import type { ServerConfig } from '../core/types.js';
import type { TokenExchanger } from '../oauth/oauth-exchange.js';
import { isOAuthToken } from '../oauth/oauth-scopes.js';
import { measureArguments, overLimitMessage } from '../operation/argument-limits.js';
import type { readArgumentEnv } from '../operation/arguments.js';
import type { Authenticator } from '../operation/auth.js';
import type { InFlightBudget } from '../operation/in-flight.js';
import type { CallOptions } from '../operation/operation-call.js';
import { sendOperation } from '../operation/operation-call.js';
import type { ResultStore } from '../operation/result-store.js';
import { DEFAULT_RESULT_POLICY } from '../operation/results.js';
import type { Settings } from '../process/settings.js';
import { settingNames } from '../process/variables.js';
import { TaskTools } from '../tasks/tasks-tools.js';
import { apiClient } from '../tools/api-client.js';
import { callExtraTool } from '../tools/extra-tools.js';
import { inputSession } from '../tools/handler-input.js';
import { replayAcrossRounds, replayByName } from './api-replay.js';
import { gateTurnsOf } from './gate-turns.js';
import { nestedScopes } from './nested-scopes.js';
import type { Dispatcher, PipelineTool, Step, ToolCall, ToolGuard, ToolResult } from './pipeline.js';
import { answer, checkArguments, enforceConcerns, gateVerdict, isInputRequired, nestedCall, reflectionStep, refuse, runPipeline } from './pipeline.js';
import type { PolicyLayer } from './policy-layer.js';

/** The reflection gate as the server sees it (reflection.ts's `ReflectionGate` is one). */
export interface ReflectionGuard extends ToolGuard {
  /** Whether `persistTool` is listed and callable (the host flow exists). */
  readonly exposesPersistTool: boolean;
  /** The `persist_justification` tool. */
  readonly persistTool: ToolEntry;
  /** Runs `persistTool`; never throws. */
  persist(args: unknown): Promise<CallToolResult>;
}

/** What one nested call of code mode gave (code-mode.ts's `NestedOutcome`). */
export type CodeNestedOutcome = {
  readonly result?: CallToolResult;
  readonly status?: number;
  readonly wrapped?: boolean;
  readonly refused?: string;
  readonly input?: InputRequiredResult;
  /** Not made: another call of the run is asking the client (gate-turns.ts). */
  readonly parked?: true;
};
/** The nested call of code the gate asked the client about in an input round (kept in the execute call's round state). */
type AskedCall = { readonly callId: string; readonly tool: string; readonly args: string; readonly arguments?: Record<string, unknown> };

/** Runs a question to the client with code mode's run clock stopped (sandbox-host.ts's `WaitForClient`). */
export type CodeWaiting = <T>(work: () => Promise<T>) => Promise<T>;

/** Code mode as the server sees it (code-mode.ts's `CodeMode` is one; not imported, so other servers carry no sandbox). */
export interface CodeFront {
  /** `search_tools`, `describe_tool` and `execute`, listed instead of the catalogue. */
  readonly tools: readonly ToolEntry[];
  readonly executeName: string;
  /** The TypeScript signature of an operation tool (undefined: not callable from code). */
  signature(name: string): string | undefined;
  /** What the audit keeps of an execute call's arguments (the code's hash, never its text). */
  auditArguments(args: Record<string, unknown>): Record<string, unknown>;
  /** Runs the code; each `api` call goes through `run`. */
  execute(
    args: Record<string, unknown>,
    run: (tool: string, args: Record<string, unknown>, signal: AbortSignal, waiting?: CodeWaiting, sent?: () => void) => Promise<CodeNestedOutcome>,
    signal: AbortSignal,
    results?: Settings['results'],
    /** The client's identity: its share of the runs under way at once is bounded. */
    identity?: string,
  ): Promise<ToolResult>;
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

/** The first text block of a result. */
function textOfResult(result: ToolResult): string {
  const first = (result as CallToolResult).content?.find((c) => c.type === 'text');
  return first?.type === 'text' ? first.text : '';
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
  /** Only what the request can see (its concern preset, access gate) is reachable from code. */
  const reachable: Step = (call, next) =>
    call.gate.visible('tools', call.name, call.ctx)
      ? next()
      : Promise.reject(new Error(`${call.name} is not reachable by this client (its concern preset or access rules hide it)`));

  /** The reflection gate of a nested call of code (see the code order below). */
  const codeGate: Step = async (call, next) => {
    if (!reflection || !reflection.isGated(call.name)) return next();
    // by the call's parent object, one per nested call of one run: a step before this one may have passed on a changed copy of the call
    const run = call.parent ? codeRuns.get(call.parent) : undefined;
    // decided as for a direct call (the reflection step's gateVerdict), but the retry is a new run of the code, not a direct call
    const check = () =>
      gateVerdict(reflection, call, { state: run?.gateState ?? call.state, retry: `Then run ${call.parent?.name ?? 'execute'} again with the same code.` });
    // legacy: the gate's question is a real request inside the run (its clock stopped meanwhile);
    // 2026-07-28: the gate only decides here (a question goes out as the execute call's input round)
    const waiting = call.era === 'legacy' ? run?.waiting : undefined;
    let asked = false;
    let verdict: Awaited<ReturnType<typeof check>>;
    try {
      verdict = waiting ? await waiting(check) : await check();
      asked = !verdict.ok && isInputRequired(verdict.result);
    } catch (err) {
      // legacy: the question to the client stops with the run (the code returned or threw, a bound, a cancellation)
      if (call.signal.aborted) throw new Error(`${call.name} was not sent: the run ended while the gate was asking the client`);
      throw err;
    } finally {
      // the next gated call of the run takes the gate (or parks, when this one asks the client)
      run?.release?.(asked);
    }
    if (verdict.ok) {
      // the run ended (the code returned or threw, a bound, a cancellation) while the gate decided: not sent
      if (call.signal.aborted) throw new Error(`${call.name} was not sent: the run ended before the gate had decided`);
      return next();
    }
    // 2026-07-28: the gate asks in an input round; the execute call answers with it
    if (isInputRequired(verdict.result)) return answer(verdict.result);
    const said = textOfResult(verdict.result);
    const reason = `the reflection gate holds ${call.name}: ${said}\nFrom code: get the justification stored first (${reflection.persistTool.name}), then run execute again.`;
    throw refuse(new Error(reason), { kind: 'denied', reason });
  };

  // The step order of every kind of tool call — here and nowhere else. The policy layer's steps
  // (policy.ts: telemetry, audit, access, limits, as configured) always run first, as one group.
  const policySteps = policy?.steps ?? [];
  /** A direct `tools/call`: the policy layer's steps, the embedder's, concern enforcement, argument validation, the reflection gate. */
  const steps: Step[] = [...policySteps, ...(options.steps ?? []), enforceConcerns, checkArguments, ...(reflection ? [reflectionStep(reflection)] : [])];
  /** A handler's nested call: the policy's steps, the OAuth token's scopes (oauth-scopes.ts), argument validation, then the operation's request (never a result that asks for input). */
  const nestedSteps: Step[] = [...policySteps, nestedScopes, checkArguments];
  /**
   * A nested call of code mode's code: the policy's steps (audit under the execute call's id,
   * access rules — checked, unlike a handler's nested call — and limits), the OAuth token's
   * scopes, the reach of the request (what its concern preset and access gate let it see), argument
   * validation, and the reflection gate, decided as for a direct call: its instructions (host
   * flow) are a refusal the code can catch; a question to the client is asked mid-run — legacy:
   * real requests with the run's wall time stopped meanwhile (`waiting`); 2026-07-28: the run ends
   * with the input round and runs again on the retry, earlier calls replayed. Never rejects.
   */
  const codeSteps: Step[] = [...policySteps, nestedScopes, reachable, checkArguments, codeGate];

  /** Sends the call to its tool: the API request, the extra tool's handler, or the persist tool. */
  const dispatch: Dispatcher = async (call) => {
    const target = call.target;
    if (target.kind === 'code') {
      // each api call of the code: a nested call of this one, under this call's signal and the run's;
      // on a later input round (the gate asked the client), the calls made before it are replayed —
      // only where the gate can ask about a call of the code (without a gated operation in reach, no rounds)
      const replay = replayByName<{ tool: string; signal: AbortSignal; waiting?: CodeWaiting; sent?: () => void }, CodeNestedOutcome>(
        call,
        ({ tool, signal, waiting, sent }, args) => runCodeCall(call, tool, args, signal, waiting, sent),
        (refused) => ({ refused }),
        'codeApi',
      );
      const runCode = (tool: string, args: Record<string, unknown>, signal: AbortSignal, waiting?: CodeWaiting, sent?: () => void) => {
        const target = byName.get(tool);
        if (call.era !== 'modern' || !codeGated || target?.kind !== 'operation') return runCodeCall(call, tool, args, signal, waiting, sent);
        return replay(tool, target.tool.http.method, { tool, signal, ...(waiting ? { waiting } : {}), ...(sent ? { sent } : {}) }, args);
      };
      // the call the gate asked about in the last round: a retry's run that does not make it again drops it (below)
      const askedBefore = (call.state.codeGate as Record<string, unknown> | undefined)?.asked;
      // the run counts against the process's bound of runs under way and this client's share of it
      const result = await code!.execute(target.args, runCode, call.signal, withPresetResults(settings, call).results ?? DEFAULT_RESULT_POLICY, call.identity);
      const gateState = call.state.codeGate as Record<string, unknown> | undefined;
      if (askedBefore !== undefined && gateState?.asked === askedBefore) {
        // the retry's code (changed) did not make the asked call again: it ends here, not made
        delete gateState.asked;
        await closeAsked(call, askedBefore as AskedCall);
      }
      return answer(result);
    }
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
    const sent = call.parent?.code === true ? codeRuns.get(call.parent)?.sent : undefined;
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

  /** Whether some operation code reaches is gated: only then may an execute call have input rounds (its calls replayed across them). */
  const codeGated =
    code !== undefined &&
    reflection !== undefined &&
    [...byName].some(([name, t]) => t.kind === 'operation' && reflection.isGated(name) && code.signature(name) !== undefined);
  /**
   * Of each nested call of code, by its `parent` object (made afresh for each nested call of each
   * run and kept by every copy of the call a step passes on; never the call id, which a retry's
   * run reuses for the call the gate asked about): the gate's round memory (in the execute call's
   * round state, so the retry's run finds it), the run's question-waiting (its clock), the
   * release of the call's turn at the gate (gate-turns.ts; a gated call only), and the mark of
   * its request going out (`sent`).
   */
  const codeRuns = new WeakMap<object, { gateState: Record<string, unknown>; waiting?: CodeWaiting; release?: (asked: boolean) => void; sent?: () => void }>();
  const runCodeCall = async (
    parent: ToolCall,
    name: string,
    args: Record<string, unknown>,
    signal: AbortSignal,
    waiting?: CodeWaiting,
    sent?: () => void,
  ): Promise<CodeNestedOutcome> => {
    const target = byName.get(name);
    if (!target || target.kind !== 'operation') return { refused: `${name} is not an operation of this server` };
    // the same size and depth bound as a direct call's arguments, before any step looks at them
    const size = measureArguments(args, maxArgumentBytes);
    if (!size.fits) return { refused: overLimitMessage(name, size, settingNames(config.envPrefix).maxArgumentBytes) };
    const base = nestedCall(parent, target.tool, args);
    // the call the gate asked about in the last round (2026-07-28) continues as that logical call: audited and counted once
    const gateState = (parent.state.codeGate ??= {}) as Record<string, unknown>;
    const asked = gateState.asked as AskedCall | undefined;
    const again = asked !== undefined && asked.tool === name && asked.args === argumentsHash(args);
    if (again) delete gateState.asked;
    // this nested call's own parent object: the key of its entry in codeRuns
    const parentRef = { name: parent.name, callId: parent.callId, code: true };
    const call: ToolCall = {
      ...base,
      ...(again ? { callId: asked.callId, firstRound: false } : {}),
      signal: AbortSignal.any([parent.signal, signal]),
      parent: parentRef,
    };
    // a gated call takes the gate in its turn, one call of the run at a time (gate-turns.ts): from
    // here to the gate's verdict; parked, it is not made (another call is asking the client)
    let release: ((asked: boolean) => void) | undefined;
    if (reflection?.isGated(name)) {
      const turns = gateTurnsOf(gateState);
      try {
        if ((await turns.take(call.signal)) === 'parked') return { parked: true };
      } catch (err) {
        return { refused: err instanceof Error ? err.message : String(err) };
      }
      let held = true;
      release = (asked) => {
        if (!held) return;
        held = false;
        turns.release(asked);
      };
    }
    codeRuns.set(parentRef, { gateState, ...(waiting ? { waiting } : {}), ...(release ? { release } : {}), ...(sent ? { sent } : {}) });
    try {
      const { result, status, refusal } = await runPipeline(codeSteps, dispatch, call);
      if (isInputRequired(result)) {
        gateState.asked = { callId: call.callId, tool: name, args: argumentsHash(args), arguments: args } satisfies AskedCall;
        return { input: result };
      }
      if (refusal && result.isError === true) return { refused: textOfResult(result) };
      return { result, wrapped: target.tool.resultShape === 'wrapped', ...(status !== undefined ? { status } : {}) };
    } catch (err) {
      return { refused: err instanceof Error ? err.message : String(err) };
    } finally {
      // refused before the gate (access, limits, arguments) or ended: the turn passes on
      release?.(false);
      codeRuns.delete(parentRef);
    }
  };

  /**
   * Ends the logical call the gate asked about in the last round, which the retry's run did not
   * make again (its code changed): its audit record gets its one ending (`tool.failed`, not made)
   * through the policy's steps, as a later round of that call (no second `tool.invoked`, not
   * counted again). Never rejects.
   */
  const closeAsked = async (parent: ToolCall, asked: AskedCall): Promise<void> => {
    const target = byName.get(asked.tool);
    if (target?.kind !== 'operation' || policySteps.length === 0) return;
    const call: ToolCall = {
      ...nestedCall(parent, target.tool, isRecord(asked.arguments) ? asked.arguments : {}),
      callId: asked.callId,
      firstRound: false,
      parent: { name: parent.name, callId: parent.callId, code: true },
    };
    const notMade = new Error(`${asked.tool} was not made: the gate asked the client about it, and the code run on the retry did not call it again`);
    await runPipeline(policySteps, () => Promise.reject(notMade), call).catch(() => undefined);
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
