/**
 * Extra tools (manifest `extraTools`): tools implemented by a user handler instead of
 * an HTTP operation. The server's pipeline validates the arguments against the tool's input schema
 * (invalid ⇒ `isError` naming each field, handler not called); `callExtraTool` runs the handler and converts
 * what it returns into a `CallToolResult`; it never throws.
 *
 * Handler results: an object with a `content` array is taken as a `CallToolResult` and returned
 * as is. Anything else becomes one text block (strings as they are, other values as JSON);
 * `undefined` becomes an empty `content`. When the tool declares an `outputSchema` the value
 * must be an object matching it and is also returned as `structuredContent`; otherwise the
 * result is `isError` with the data and an explanation (the SDK client rejects a result without
 * `structuredContent` for such a tool, and the data must never be hidden).
 *
 * A tool that declares the operations it calls (manifest `uses`) gets them as `ctx.api`, keyed by
 * operationId, typed from the operations' generated argument and result types (api-client.ts).
 *
 * A handler may ask the client for input while it runs — `ctx.elicit`, `ctx.elicitUrl`,
 * `ctx.sample`, `ctx.roots` (handler-input.ts, both eras). In the 2026-07-28 era a question not
 * answered yet ends the run with an input-required result, and the handler runs again when the
 * client answers; a missing client capability fails the call with JSON-RPC error -32021.
 *
 * This file is copied verbatim into every generated project.
 */

import type { CallToolResult, InputRequiredResult, ToolAnnotations } from '@modelcontextprotocol/server';
import { MissingRequiredClientCapabilityError, ProtocolError } from '@modelcontextprotocol/server';
import { errorMessage, errorResult } from '../core/error-result.js';
import { isPlainObject } from '../core/json-shapes.js';
import type { LogLevel } from '../core/log.js';
import { log } from '../core/log.js';
import type { JsonSchema, OperationTool } from '../core/types.js';
import { validateOutput } from '../validation/validate.js';
import type { ApiClient } from './api-client.js';
import type { HandlerInput, InputSession } from './handler-input.js';
import { InputPending, InputRequestFailed } from './handler-input.js';

/**
 * What a handler gets besides its arguments. `Api` is the type of `ctx.api`: the generated
 * `<Tool>Context` of a tool with `uses` is `ExtraToolContext<<Tool>Api>`, one typed method per
 * operation it declared.
 */
export type ExtraToolContext<Api = ApiClient> = HandlerInput & {
  /** Aborted when the client cancels the call. */
  readonly signal: AbortSignal;
  /**
   * Logs to stderr, prefixed with the tool name, and sends the client a logging notification
   * (`notifications/message`, logger = the tool's name) when its level passes the client's
   * (legacy: `logging/setLevel`; 2026-07-28: the request's `_meta` log level).
   */
  readonly log: (level: LogLevel, message: string, data?: unknown) => void;
  /**
   * Reports progress (`notifications/progress`) when the client asked for it (a `progressToken`
   * in the request's `_meta`); does nothing otherwise. `progress` should grow with each report.
   */
  readonly progress: (progress: number, total?: number, message?: string) => void;
  /**
   * The API operations the tool declared in `uses`, by operationId: `await ctx.api.listPets({ limit: 5 })`.
   * Each runs through the same request code as the operation's tool (base URL, credentials,
   * timeouts, response limits, result conversion) and through the policy's audit and limits as a
   * nested call of this one; it resolves to an {@link ApiResult} and never throws. Empty without `uses`.
   */
  readonly api: Api;
  /**
   * Tells the clients subscribed to the resource at `uri` that it changed (legacy
   * `resources/subscribe`, 2026-07-28 `subscriptions/listen`; with a shared bus, those of every
   * instance), e.g. after the handler changed what a handler resource shows. Does nothing when no
   * resource of the server can change (no handler resource or template).
   */
  readonly notifyResourceUpdated: (uri: string) => void;
  /**
   * A tool with `task: deferred`: from here on the call runs as an MCP task — a 2026-07-28 client
   * that runs tasks gets the task at once and the handler goes on inside it (typically after its
   * questions were answered in input-required rounds). Does nothing otherwise (no such client, or
   * another kind of tool), and nothing the second time.
   */
  readonly runAsTask: () => void;
};

/** Sends a handler's progress report to the MCP client, when it asked for progress. */
export type ClientProgress = (progress: number, total?: number, message?: string) => void;

/** Sends a handler's log line to the MCP client (the server's pipeline supplies one per call). */
export type ClientLog = (level: LogLevel, message: string, data?: unknown) => void;

/** A tool implemented by a handler. `Args` is its argument type, `Result` what the handler returns, `Api` its `ctx.api`. */
export type ExtraTool<Args = Record<string, unknown>, Result = unknown, Api = ApiClient> = {
  readonly kind: 'extra';
  readonly name: string;
  readonly title?: string;
  readonly description?: string;
  readonly inputSchema: JsonSchema;
  readonly outputSchema?: JsonSchema;
  readonly annotations?: ToolAnnotations;
  /** OAuth scopes an MCP access token must carry to see and call the tool (manifest `scopes`; oauth-scopes.ts). */
  readonly scopes?: readonly string[];
  /** The operations `ctx.api` calls, by operationId (manifest `uses`). */
  readonly uses?: Readonly<Record<string, OperationTool>>;
  /** Runs as an MCP task (manifest `task`, tasks.ts): `optional` when the client asks for one, `required` always, `deferred` from the handler's `ctx.runAsTask()` on. */
  readonly task?: 'optional' | 'required' | 'deferred';
  readonly handler: (args: Args, ctx: ExtraToolContext<Api>) => Promise<Result> | Result;
};

/** Any extra tool, whatever its argument, result and API types (for tool tables). */
export type AnyExtraTool = ExtraTool<never, unknown, never>;

/**
 * Identity helper that types an extra tool: with `defineTool<Args, Result>({...})` the handler's
 * parameters are inferred, and a handler of the wrong signature fails to type-check.
 */
export function defineTool<Args = Record<string, unknown>, Result = unknown, Api = ApiClient>(
  tool: ExtraTool<Args, Result, Api>,
): ExtraTool<Args, Result, Api> {
  return tool;
}

/** `ctx.api` of a tool that declared no operations. */
const NO_API: ApiClient = Object.freeze({});

/** The questions of a handler run outside a tool call of a client (nobody to ask). */
const NO_INPUT: HandlerInput = Object.freeze({
  canAsk: () => false,
  elicit: () => Promise.reject(new InputRequestFailed('This run of the handler has no client to ask')),
  elicitUrl: () => Promise.reject(new InputRequestFailed('This run of the handler has no client to ask')),
  sample: () => Promise.reject(new InputRequestFailed('This run of the handler has no client to ask')),
  roots: () => Promise.reject(new InputRequestFailed('This run of the handler has no client to ask')),
});

/** Whether `value` looks like a `CallToolResult` (an object with a `content` array). */
export function isCallToolResult(value: unknown): value is CallToolResult {
  return typeof value === 'object' && value !== null && Array.isArray((value as { content?: unknown }).content);
}

/** The fields of an extra tool that validation and result conversion read. */
export type ToolSchemas = Pick<AnyExtraTool, 'name' | 'inputSchema' | 'outputSchema'>;

/** Converts a handler's return value (see the module comment). */
export function toToolResult(tool: ToolSchemas, value: unknown): CallToolResult {
  if (isCallToolResult(value)) return value;
  if (value === undefined && tool.outputSchema === undefined) return { content: [] };
  let text: string;
  try {
    text = typeof value === 'string' ? value : (JSON.stringify(value) ?? String(value));
  } catch (err) {
    return errorResult(`Tool ${tool.name} returned a value that cannot be serialised: ${errorMessage(err)}`);
  }
  if (tool.outputSchema === undefined) return { content: [{ type: 'text', text }] };
  const problem = (note: string): CallToolResult => errorResult(`${text}\n\n[note: ${note}]`);
  if (!isPlainObject(value))
    return problem(
      `the tool declares an output schema but returned ${value === undefined ? 'nothing' : value === null ? 'null' : Array.isArray(value) ? 'an array' : `a ${typeof value}`}, not an object`,
    );
  let mismatches: string[];
  try {
    mismatches = validateOutput(tool, value);
  } catch (err) {
    return problem(errorMessage(err));
  }
  if (mismatches.length > 0) return problem(`the result does not match the tool's output schema:\n${mismatches.map((m) => `- ${m}`).join('\n')}`);
  return { content: [{ type: 'text', text }], structuredContent: value };
}

/**
 * Runs extra tool `tool` with `args`, which the server's pipeline has validated against the
 * tool's input schema (pipeline.ts checkArguments; validation happens there only); a thrown error ⇒ `isError` with its message (stack logged to stderr). With
 * `input` (the call's questions, handler-input.ts): a run that asked what the client has not
 * answered yet ⇒ the input-required result, whatever the handler did after; a question the
 * client lacks the capability for, not caught by the handler ⇒ that -32021 error is thrown; a
 * `ProtocolError` the handler throws ⇒ thrown as it is (the call fails with that JSON-RPC error).
 * Throws nothing else.
 */
export async function callExtraTool<Args, Result, Api>(
  tool: ExtraTool<Args, Result, Api>,
  args: Record<string, unknown>,
  signal: AbortSignal,
  opts: {
    readonly clientLog?: ClientLog;
    readonly progress?: ClientProgress;
    readonly api?: ApiClient;
    readonly input?: InputSession;
    readonly notifyResourceUpdated?: (uri: string) => void;
    readonly runAsTask?: () => void;
  } = {},
): Promise<CallToolResult | InputRequiredResult> {
  const ctx: ExtraToolContext<Api> = {
    ...(opts.input?.input ?? NO_INPUT),
    signal,
    // the server's pipeline builds the client of the tool's `uses` (api-client.ts)
    api: (opts.api ?? NO_API) as Api,
    log: (level, message, data) => {
      log(level, `${tool.name}: ${message}`, data);
      opts.clientLog?.(level, message, data);
    },
    progress: (progress, total, message) => opts.progress?.(progress, total, message),
    notifyResourceUpdated: (uri) => {
      if (opts.notifyResourceUpdated !== undefined) opts.notifyResourceUpdated(uri);
      else log('debug', `${tool.name}: notifyResourceUpdated(${uri}): no resource of this server can change, so nobody is subscribed`);
    },
    runAsTask: () => opts.runAsTask?.(),
  };
  let value: Result;
  try {
    value = await tool.handler(args as Args, ctx);
  } catch (err) {
    const asked = opts.input?.pending();
    if (asked !== undefined) return asked;
    if (err instanceof MissingRequiredClientCapabilityError) throw err;
    // a JSON-RPC error thrown on purpose fails the call as that error (a task ends `failed` with it)
    if (err instanceof ProtocolError) throw err;
    if (err instanceof InputPending) return errorResult(`Tool ${tool.name} failed: it asked the client for input outside the call's own run`);
    if (err instanceof InputRequestFailed) log('info', `tool ${tool.name}: ${err.message}`);
    else log('error', `tool ${tool.name} failed`, { error: err, stack: err instanceof Error ? err.stack : undefined });
    return errorResult(`Tool ${tool.name} failed: ${errorMessage(err)}`);
  }
  // a handler that caught its question's signal still waits for the answer
  return opts.input?.pending() ?? toToolResult(tool, value);
}
