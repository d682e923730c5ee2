/**
 * What the policy layer records of a request a client made — a round of a tool call, or a
 * `prompts/get`, `resources/read` or `preprocessors/run` — made in one place for every kind: the
 * request's facts ({@link Observed}: {@link observedCall} for a tool call), how it ended
 * ({@link Ending}), and the audit events it is written as ({@link invokedEvent}, {@link endEvent}).
 * The audit steps (audit-step.ts) write these events, and the span of the same request
 * (telemetry.ts) is made of the same facts and ending.
 *
 * This file is copied into every generated project that has `policy`.
 */
import type { Era } from '../core/era.js';
import type { Outcome, ToolCall, ToolResult } from '../pipeline/pipeline.js';
import { isInputRequired, refusalOf } from '../pipeline/pipeline.js';
import type { AuditInput } from './audit.js';

/** The requests the policy layer records. */
export type ObservedMethod = 'tools/call' | 'prompts/get' | 'resources/read' | 'preprocessors/run';

/** The facts of one request (a tool call: one round of it), as its audit events and span carry them. */
export type Observed = {
  readonly method: ObservedMethod;
  /** Tool or prompt name, resource URI; `preprocessors` for a run of them. */
  readonly primitive?: string;
  /** The legacy session (`null` in the modern era, which has none, and over stdio). */
  readonly session: string | null;
  /** The client's identity. */
  readonly client: string;
  /** The OAuth client (`client_id`) of the request's access token (tool calls). */
  readonly oauthClient?: string;
  readonly era: Era;
  /** The logical call (tool calls), the same in each of its rounds. */
  readonly callId?: string;
  /** A nested call's: the `callId` of the call that made it. */
  readonly parentCallId?: string;
  /** Whether this is the call's first round (tool calls). */
  readonly firstRound?: boolean;
  /** The arguments (a tool call's, a prompt's), redacted when written. */
  readonly arguments?: unknown;
};

/** How a request ended. */
export type Ending = {
  readonly outcome: 'completed' | 'failed' | 'denied' | 'limited' | 'input_required';
  /** HTTP status of the upstream API's response (operation tools that got one). */
  readonly status?: number;
  /** Why it failed or was refused, as said (hidden before it is written). */
  readonly detail?: string;
  /** A failed or refused request's kind of error: `tool_error` (an `isError` result), the refusal's kind, the JSON-RPC code or the error's class name. */
  readonly errorType?: string;
};

/** The facts of a round of tool call `call`. */
export function observedCall(call: ToolCall): Observed {
  const oauthClient = call.ctx?.http?.authInfo?.extra?.client_id;
  return {
    method: 'tools/call',
    primitive: call.name,
    session: call.era === 'legacy' ? (call.ctx.sessionId ?? null) : null,
    client: call.identity,
    ...(typeof oauthClient === 'string' ? { oauthClient } : {}),
    era: call.era,
    callId: call.callId,
    ...(call.parent ? { parentCallId: call.parent.callId } : {}),
    firstRound: call.firstRound,
    arguments: call.args,
  };
}

/** `error.type` of a thrown error: its JSON-RPC code, else its class name. */
function errorType(err: unknown): string {
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code === 'number' || typeof code === 'string') return String(code);
  return err instanceof Error ? err.name : typeof err;
}

/** The first text block of a result, cut to 500 characters (the `detail` of a failed call). */
function resultText(result: ToolResult): string {
  const content = (result as { content?: ReadonlyArray<{ type: string; text?: unknown }> }).content ?? [];
  const text = content.find((c) => c.type === 'text' && typeof c.text === 'string')?.text as string | undefined;
  if (text === undefined) return 'isError result';
  return text.length > 500 ? `${text.slice(0, 500)}…` : text;
}

/** The ending of a request that threw `err`: refused (a step's refusal, pipeline.ts `refuse`), else failed. */
export function thrownEnding(err: unknown): Ending {
  const refusal = refusalOf(err);
  if (refusal) return { outcome: refusal.kind, detail: refusal.reason, errorType: refusal.kind };
  return { outcome: 'failed', detail: err instanceof Error ? err.message : String(err), errorType: errorType(err) };
}

/** The ending of a tool call round whose pipeline returned `outcome`. */
export function callEnding(outcome: Outcome): Ending {
  const { result, refusal, status } = outcome;
  const withStatus = status !== undefined ? { status } : {};
  if (isInputRequired(result)) return { outcome: 'input_required', ...withStatus };
  if (refusal) return { outcome: refusal.kind, detail: refusal.reason, errorType: refusal.kind, ...withStatus };
  if (result.isError === true) return { outcome: 'failed', detail: resultText(result), errorType: 'tool_error', ...withStatus };
  return { outcome: 'completed', ...withStatus };
}

/** The ending of another request that answered with `result` (an input round of a prompt or resource is not its end). */
export function answerEnding(result: unknown): Ending {
  return { outcome: (result as { resultType?: unknown } | null)?.resultType === 'input_required' ? 'input_required' : 'completed' };
}

/** The audit event of each request other than a tool call. */
const REQUEST_EVENT = {
  'prompts/get': 'prompt.get',
  'resources/read': 'resource.read',
  'preprocessors/run': 'preprocessor.run',
} as const satisfies Record<Exclude<ObservedMethod, 'tools/call'>, AuditInput['name']>;

/** The terminal event of a tool call, by how it ended. */
const CALL_EVENT = {
  completed: { name: 'tool.completed', outcome: 'ok' },
  failed: { name: 'tool.failed', outcome: 'error' },
  denied: { name: 'tool.denied', outcome: 'denied' },
  limited: { name: 'tool.limited', outcome: 'limited' },
} as const satisfies Record<Exclude<Ending['outcome'], 'input_required'>, { name: AuditInput['name']; outcome: string }>;

/** The fields every event of `request` starts with. */
function base(request: Observed): Omit<AuditInput, 'name'> {
  return {
    session: request.session,
    client: request.client,
    ...(request.oauthClient !== undefined ? { oauthClient: request.oauthClient } : {}),
    era: request.era,
    ...(request.primitive !== undefined ? { primitive: request.primitive } : {}),
    ...(request.callId !== undefined ? { callId: request.callId } : {}),
    ...(request.parentCallId !== undefined ? { parentCallId: request.parentCallId } : {}),
  };
}

/** The `tool.invoked` event of a tool call (its first round), with its arguments and their size. */
export function invokedEvent(call: Observed, argumentBytes?: number): AuditInput {
  return { name: 'tool.invoked', ...base(call), arguments: call.arguments, ...(typeof argumentBytes === 'number' ? { argumentBytes } : {}) };
}

/**
 * The audit event of a request's end (`ending` is not `input_required`: an input round is not an
 * end): a tool call's terminal event — `tool.completed`, `tool.failed`, `tool.denied`,
 * `tool.limited`, with the upstream status; its arguments are in its `tool.invoked` — or the event
 * of another request, with a prompt's arguments, `ok` or `error`. `hide` removes secrets and
 * redacted values from the detail (AuditLog `hide`).
 */
export function endEvent(request: Observed, ending: Ending, durationMs: number, hide: (text: string) => string): AuditInput {
  const detail = ending.detail !== undefined && ending.outcome !== 'completed' ? { detail: hide(ending.detail) } : {};
  if (request.method === 'tools/call') {
    const event = CALL_EVENT[ending.outcome === 'input_required' ? 'completed' : ending.outcome];
    return { name: event.name, ...base(request), httpStatus: ending.status, durationMs, outcome: event.outcome, ...detail };
  }
  return {
    name: REQUEST_EVENT[request.method],
    ...base(request),
    ...(request.arguments !== undefined ? { arguments: request.arguments } : {}),
    outcome: ending.outcome === 'completed' ? 'ok' : 'error',
    durationMs,
    ...detail,
  };
}
