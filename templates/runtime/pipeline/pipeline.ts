/**
 * The tool-call pipeline: every `tools/call` — direct, or through search mode's `call_tool` — is
 * one {@link ToolCall} run through the same list of steps and then dispatched.
 *
 *   find the tool → steps: concern enforcement → argument validation → reflection gate → dispatch
 *
 * A step has the form `(call, next) => outcome`: it may refuse (return an outcome with its
 * `refusal`, or throw a JSON-RPC error marked with {@link refuse}), ask the client for input (return
 * an input-required result), or call `next()` and look at the {@link Outcome} that comes back: the
 * result, the upstream HTTP status and a refusal are returned, never written into the call. Adding
 * a concern of its own (access control, limits, audit) is
 * one more step in the step order of dispatch.ts (`createDispatch`, the one place that orders the
 * steps of direct, nested and code calls); nothing else changes.
 *
 * One logical call: in the 2026-07-28 era (and in the SDK's legacy shim) a handler that needs
 * input from the client (sampling) returns an input-required result and runs again, from the
 * top, when the client answers. A call keeps its `callId` and `state` across those rounds (the
 * server seals them into the signed `requestState`), so that a step with side effects can tell a
 * first round from a later one and run them once per logical call.
 *
 * Nested calls: an extra tool's handler calling an operation through `ctx.api` (api-client.ts)
 * starts a call of its own ({@link nestedCall}), with `parent` naming the handler's call. It runs
 * through the policy layer's steps (telemetry, audit, access — which a nested call passes, the
 * handler's call having been allowed — and limits) and argument validation, not concern
 * enforcement or the reflection gate: the handler's tool is what the client sees and was checked.
 *
 * This file is copied verbatim into every generated project.
 */

import { randomUUID } from 'node:crypto';
import type { CallToolResult, InputRequiredResult, Server, ServerContext } from '@modelcontextprotocol/server';
import type { Era } from '../core/era.js';
import { errorResult } from '../core/error-result.js';
import { log } from '../core/log.js';
import type { PrimitiveGate } from '../core/primitive-gate.js';
import type { OperationTool } from '../core/types.js';
import type { AnyExtraTool } from '../tools/extra-tools.js';
import { validateArguments } from '../validation/validate.js';

export type { Era };

/** What a tool call may answer: a result, or a request for input from the client (then it runs again). */
export type ToolResult = CallToolResult | InputRequiredResult;

/** A tool the pipeline can dispatch: an operation, an extra tool, or the reflection gate's persist tool. */
export type PipelineTool =
  | { readonly kind: 'operation'; readonly tool: OperationTool }
  | { readonly kind: 'extra'; readonly tool: AnyExtraTool }
  | { readonly kind: 'persist'; readonly name: string }
  /** Code mode's `execute` (code-mode.ts): `args` holds the code; the call's own `args` are what the audit keeps (its hash). */
  | { readonly kind: 'code'; readonly name: string; readonly args: Record<string, unknown> };

/** One logical tool call, as every step sees it. */
export type ToolCall = {
  /** The tool's name. */
  readonly name: string;
  readonly target: PipelineTool;
  /** The arguments, as received (`{}` when left out). */
  readonly args: Record<string, unknown>;
  /** Size of `args` as JSON, in bytes (measured, within `<PREFIX>_MAX_ARGUMENT_BYTES`, before any step ran). */
  readonly argumentBytes: number;
  /** The server instance serving this request (one per legacy session, one per modern request over HTTP). */
  readonly server: Server;
  /** The SDK's request context. */
  readonly ctx: ServerContext;
  readonly era: Era;
  /** The client's identity: its HTTP token's name, or the stdio identity (`<PREFIX>_CLIENT`, `local`). */
  readonly identity: string;
  /** Id of the logical call, the same in every input round. */
  readonly callId: string;
  /** Whether this is the call's first round. */
  readonly firstRound: boolean;
  /** JSON data kept across the input rounds of this call (sealed into the signed requestState); steps may write to it. */
  readonly state: Record<string, unknown>;
  /** Cancelled when the client cancels or the transport closes. */
  readonly signal: AbortSignal;
  /** Headers of the MCP request over HTTP (absent over stdio): upstream credentials a scheme takes `fromClient`. */
  readonly headers?: { get(name: string): string | null };
  /** Set when the call came through search mode's `call_tool` (its name): a gate hint says to retry through it. */
  readonly viaCallTool?: string;
  /** The concern gate of this request. */
  readonly gate: PrimitiveGate;
  /**
   * Tighter bounds a step set for this call (the policy layer's limits): the upstream request's
   * timeout and the response size; where the server's own settings are lower, those win.
   */
  readonly bounds?: { readonly timeoutMs?: number; readonly maxResponseBytes?: number };
  /**
   * Told the upstream API's HTTP status the moment its response's headers arrive, before the body
   * is read. The status otherwise travels back in the {@link Outcome}; this is for a step that may
   * answer before the rest of the pipeline returns — the limits' timeout, which then still knows
   * the status the call got (for the audit line and the span). A step setting it calls the one it
   * replaces too.
   */
  readonly onHttpStatus?: (status: number) => void;
  /**
   * Set on a nested call (an operation a handler called through `ctx.api`, or code through
   * `api`): the calling call. `code`: called by code mode's `execute`, whose code is not trusted
   * as a handler is — the access rules apply to the nested call itself.
   */
  readonly parent?: { readonly name: string; readonly callId: string; readonly code?: boolean };
};

/**
 * The call of operation `tool` a handler makes through `ctx.api` during `parent`: the same client,
 * request, instance and headers, a call id of its own, and `parent` set. It follows the
 * handler's signal (a cancelled or timed-out handler call cancels it).
 */
export function nestedCall(parent: ToolCall, tool: OperationTool, args: Record<string, unknown>): ToolCall {
  let argumentBytes: number;
  try {
    argumentBytes = Buffer.byteLength(JSON.stringify(args) ?? '', 'utf8');
  } catch {
    argumentBytes = 0;
  }
  return {
    name: tool.name,
    target: { kind: 'operation', tool },
    args,
    argumentBytes,
    server: parent.server,
    ctx: parent.ctx,
    era: parent.era,
    identity: parent.identity,
    callId: randomUUID(),
    firstRound: true,
    state: {},
    signal: parent.signal,
    gate: parent.gate,
    parent: { name: parent.name, callId: parent.callId },
    ...(parent.headers ? { headers: parent.headers } : {}),
  };
}

/** Why a step refused a call: access control or a missing scope (`denied`), a limit (`limited`). */
export type Refusal = { readonly kind: 'denied' | 'limited'; readonly reason: string };

/** What the rest of the pipeline gave for one round of a call, for the steps around it (audit, spans) and a nested call's caller. */
export type Outcome = {
  readonly result: ToolResult;
  /** HTTP status of the upstream API response (operation tools that got one). */
  readonly status?: number;
  /** Set by the step that refused the call (its `isError` result is `result`). */
  readonly refusal?: Refusal;
};

/**
 * One step of the pipeline. `next()` runs the rest with the same call; `next(changed)` with a
 * changed copy (e.g. `{ ...call, signal }` to abort the call on a deadline, or `bounds`).
 */
export type Step = (call: ToolCall, next: (changed?: ToolCall) => Promise<Outcome>) => Promise<Outcome>;

/** The end of the pipeline: the call sent to its tool (dispatch.ts). */
export type Dispatcher = (call: ToolCall) => Promise<Outcome>;

/** Runs `call` through `steps`, in order, then `dispatch`. */
export function runPipeline(steps: readonly Step[], dispatch: Dispatcher, call: ToolCall): Promise<Outcome> {
  const at = (i: number, current: ToolCall): Promise<Outcome> =>
    i < steps.length ? steps[i]!(current, (changed) => at(i + 1, changed ?? current)) : dispatch(current);
  return at(0, call);
}

/** Refusals thrown as errors (a JSON-RPC error): kept beside the error, which goes to the client unchanged. */
const thrownRefusals = new WeakMap<object, Refusal>();

/** `error`, marked as `refusal`: a step refusing by throwing (-32602) throws what this returns; the steps around it read {@link refusalOf}. */
export function refuse<E extends Error>(error: E, refusal: Refusal): E {
  thrownRefusals.set(error, refusal);
  return error;
}

/** The refusal a thrown error stands for (see {@link refuse}), or `undefined` for any other error. */
export function refusalOf(thrown: unknown): Refusal | undefined {
  return typeof thrown === 'object' && thrown !== null ? thrownRefusals.get(thrown) : undefined;
}

/** The outcome of a result a step answers with itself (the rest of the pipeline did not run). */
export function answer(result: ToolResult): Outcome {
  return { result };
}

/** Whether `result` asks the client for input (an input-required result) rather than answering. */
export function isInputRequired(result: ToolResult): result is InputRequiredResult {
  return (result as { resultType?: unknown }).resultType === 'input_required';
}

/** Concern enforcement: a tool the request's concern preferences hide is refused (-32602) when the server enforces them. */
export const enforceConcerns: Step = (call, next) => {
  // code mode's execute is one of the front tools, always callable (what its code reaches is checked per nested call)
  if (call.target.kind === 'code') return next();
  call.gate.assertAllowed('tools', call.name, call.ctx);
  return next();
};

/**
 * Argument validation, once per call: invalid arguments are an `isError` result listing every
 * problem (the model can correct them), before any gate asks for a justification and before any
 * request is sent. The persist tool checks its own arguments.
 */
export const checkArguments: Step = (call, next) => {
  if (call.target.kind === 'persist' || call.target.kind === 'code') return next();
  const tool = call.target.tool;
  let problems: string[];
  try {
    problems = validateArguments(tool, call.args);
  } catch (err) {
    log('error', `cannot validate arguments of ${tool.name}`, err);
    return Promise.resolve(answer(errorResult(`Tool ${tool.name} cannot check its arguments: ${err instanceof Error ? err.message : String(err)}`)));
  }
  if (problems.length > 0) return Promise.resolve(answer(errorResult(`Invalid arguments for tool ${tool.name}:\n${problems.map((p) => `- ${p}`).join('\n')}`)));
  return next();
};

/** What the reflection-gate step needs of the gate (reflection.ts's `ReflectionGate` is one). */
export interface ToolGuard {
  /** Whether calls of `tool` are gated. */
  isGated(tool: string): boolean;
  /** Whether a gated tool may run now; else the result to return instead (a hint, a refusal, or an input request). */
  check(tool: string, args: unknown, call: GateCall): Promise<{ readonly ok: true } | { readonly ok: false; readonly result: ToolResult }>;
}

/** What the gate sees of a call. */
export type GateCall = {
  readonly server: Server;
  readonly ctx: ServerContext;
  readonly era: Era;
  readonly signal: AbortSignal;
  readonly callId: string;
  readonly state: Record<string, unknown>;
  /** How the caller runs the call again once a justification is stored: the last step of the gate's instructions (unset: the tool again, with the same arguments). */
  readonly retry?: string;
};

/**
 * The gate's verdict on `call`, as the reflection step and code mode's gate (dispatch.ts) ask it:
 * `state` holds the gate's round memory (the call's own unless given), `retry` is how the caller
 * runs the call again (the last step of the gate's instructions).
 */
export function gateVerdict(
  guard: ToolGuard,
  call: ToolCall,
  how: { readonly state?: Record<string, unknown>; readonly retry?: string } = {},
): ReturnType<ToolGuard['check']> {
  return guard.check(call.name, call.args, {
    server: call.server,
    ctx: call.ctx,
    era: call.era,
    signal: call.signal,
    callId: call.callId,
    state: how.state ?? call.state,
    ...(how.retry !== undefined ? { retry: how.retry } : {}),
  });
}

/** How a call made through search mode's `call_tool` is run again: through `call_tool` too. */
function retryThroughCallTool(tool: string, callTool: string): string {
  return `Then call ${callTool} again with {"name": ${JSON.stringify(tool)}, "arguments": <the same arguments>}.`;
}

/** A refusal of the gate that ends with `retry` (the gate's instructions already do; any other refusal gets it added). */
function endingWith(result: CallToolResult, retry: string): CallToolResult {
  const [first, ...rest] = result.content;
  if (first?.type !== 'text') return { ...result, content: [{ type: 'text', text: retry }, ...result.content] };
  return first.text.includes(retry) ? result : { ...result, content: [{ ...first, text: `${first.text}\n${retry}` }, ...rest] };
}

/** The reflection gate as a step: a gated tool runs only once the gate allows it. */
export function reflectionStep(guard: ToolGuard): Step {
  return async (call, next) => {
    if (call.target.kind === 'persist' || call.target.kind === 'code' || !guard.isGated(call.name)) return next();
    const retry = call.viaCallTool !== undefined ? retryThroughCallTool(call.name, call.viaCallTool) : undefined;
    const verdict = await gateVerdict(guard, call, retry !== undefined ? { retry } : {});
    if (verdict.ok) return next();
    if (retry !== undefined && !isInputRequired(verdict.result)) return answer(endingWith(verdict.result, retry));
    return answer(verdict.result);
  };
}
