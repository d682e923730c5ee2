/**
 * The reflection gate asking the client's model for a justification (reflection.ts, modes
 * `auto`/`sampling`): the request built and the reply judged by reflection-sampling.ts, sent here —
 * 2026-07-28: as an input round ({@link modelRound}: the request travels in an input-required
 * result, its deadline in the call's round memory, and the retry carries the reply); legacy: as
 * real `sampling/createMessage` requests inside the call ({@link askModelInCall}). An invalid
 * reply is asked once more, quoting its problems. A valid one is handed to `keep`.
 *
 * This file is copied verbatim into every generated project.
 */
import type { InputRequiredResult, ServerContext } from '@modelcontextprotocol/server';
import { DEFAULT_REQUEST_TIMEOUT_MSEC, inputRequired, inputResponse, SdkError, SdkErrorCode } from '@modelcontextprotocol/server';
import { errorMessage } from '../core/error-result.js';
import { log } from '../core/log.js';
import type { JsonSchema } from '../core/types.js';
import type { GateCall } from './reflection-config.js';
import type { JustificationCheck } from './reflection-sampling.js';
import { judgeReply, justificationRequest } from './reflection-sampling.js';

/** One sampling step's outcome: the gate is satisfied, a round must be asked, or sampling gave up with these problems. */
export type SamplingStep = { kind: 'done' } | { kind: 'ask'; result: InputRequiredResult } | { kind: 'failed'; problems: readonly string[] };

/** What the gate keeps of the request in flight (its round memory's `pending`): the gate key, which attempt, its deadline (unix ms) if any. */
export type ModelMemory = { pending?: { hash: string; attempt: number; deadline?: number; via?: 'user' } };

/** One gate's question to the model. */
export type ModelQuestion = {
  readonly tool: string;
  readonly domain: string;
  /** The gate key. */
  readonly hash: string;
  /** The gate's prompt, rendered. */
  readonly promptText: string;
  readonly schema: JsonSchema;
  readonly validate: JustificationCheck;
  /** The manifest's `reflection.sampling` (timeout of each request, most tokens of the reply). */
  readonly sampling?: { readonly maxTokens?: number; readonly timeoutMs?: number };
  /** Stores a valid justification (a failure there is the gate's to log). */
  keep(justification: Record<string, unknown>): Promise<void>;
};

/** The input key of a sampling request (unique per gate and attempt within the call). */
const inputKey = (hash: string, attempt: number): string => `reflection-${hash.slice(0, 16)}-${attempt}`;

/** The request of attempt 1, or 2 quoting the invalid reply. */
function requestOf(q: ModelQuestion, previous?: { text: string; problems: readonly string[] }) {
  return justificationRequest(q.promptText, q.schema, {
    ...(q.sampling?.maxTokens !== undefined ? { maxTokens: q.sampling.maxTokens } : {}),
    ...(previous !== undefined ? { previous } : {}),
  });
}

/** An input round asking the client's model for the justification (attempt 1, or 2 quoting the invalid reply). */
function askRound(q: ModelQuestion, memory: ModelMemory, attempt: 1 | 2, previous?: { text: string; problems: readonly string[] }): SamplingStep {
  const timeoutMs = q.sampling?.timeoutMs;
  memory.pending = { hash: q.hash, attempt, ...(timeoutMs !== undefined ? { deadline: Date.now() + timeoutMs } : {}) };
  return { kind: 'ask', result: inputRequired({ inputRequests: { [inputKey(q.hash, attempt)]: inputRequired.createMessage(requestOf(q, previous)) } }) };
}

/**
 * Legacy era: asks the client's model with real `sampling/createMessage` requests inside this
 * handler run (attempt 1, then 2 quoting the invalid reply), each bounded by
 * `sampling.timeoutMs` (the SDK's default otherwise). A refusal, an error or a timeout gives up
 * with that reason, so mode `auto` falls back to the hint instead of failing the call (the SDK's
 * input-required shim would fail the whole call, and bounds each round only by its own timeout).
 */
export async function askModelInCall(q: ModelQuestion, call: GateCall): Promise<Exclude<SamplingStep, { kind: 'ask' }>> {
  const timeoutMs = q.sampling?.timeoutMs;
  let previous: { text: string; problems: readonly string[] } | undefined;
  for (const attempt of [1, 2] as const) {
    if (call.signal.aborted) throw call.signal.reason ?? new Error('The tool call was cancelled');
    let reply: Awaited<ReturnType<ServerContext['mcpReq']['requestSampling']>>;
    try {
      reply = await call.ctx.mcpReq.requestSampling(requestOf(q, previous), {
        signal: call.signal,
        ...(timeoutMs !== undefined ? { timeout: timeoutMs } : {}),
      });
    } catch (err) {
      if (call.signal.aborted) throw call.signal.reason ?? err;
      const timedOut = err instanceof SdkError && err.code === SdkErrorCode.RequestTimeout;
      const problem = timedOut
        ? `sampling: the client's model did not answer within ${timeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MSEC} ms`
        : `sampling: the client refused or failed the request: ${errorMessage(err)}`;
      log(
        'info',
        `reflection: ${timedOut ? 'no sampled justification in time' : 'sampling refused or failed'} for ${q.tool} (${q.domain}), attempt ${attempt}`,
        { problem },
      );
      return { kind: 'failed', problems: [problem] };
    }
    const verdict = judgeReply(reply, q.validate);
    if (verdict.ok) {
      await q.keep(verdict.justification);
      return { kind: 'done' };
    }
    if (attempt === 2) {
      log('info', `reflection: sampled justification for ${q.tool} (${q.domain}) invalid twice`, { problems: verdict.problems });
      return { kind: 'failed', problems: verdict.problems };
    }
    previous = { text: verdict.text, problems: verdict.problems };
  }
  return { kind: 'failed', problems: [] }; // not reached
}

/** 2026-07-28: one round of sampling for the gate: judge the reply to the pending request, or ask. */
export async function modelRound(q: ModelQuestion, call: GateCall, memory: ModelMemory): Promise<SamplingStep> {
  if (call.signal.aborted) throw call.signal.reason ?? new Error('The tool call was cancelled');
  const pending = memory.pending;
  if (pending === undefined || pending.hash !== q.hash) return askRound(q, memory, 1);
  delete memory.pending;
  const reply = inputResponse(call.ctx.mcpReq.inputResponses, inputKey(q.hash, pending.attempt));
  if (reply.kind !== 'sampling') {
    log('info', `reflection: no sampling reply for ${q.tool} (${q.domain}) in the retried call`, { got: reply.kind });
    return { kind: 'failed', problems: ['sampling: the client retried the call without the reply of its model'] };
  }
  if (pending.deadline !== undefined && Date.now() > pending.deadline) {
    log('info', `reflection: sampled justification for ${q.tool} (${q.domain}) came after the ${q.sampling?.timeoutMs ?? 0} ms timeout`);
    return { kind: 'failed', problems: [`sampling: the client's model did not answer within ${q.sampling?.timeoutMs ?? 0} ms`] };
  }
  const verdict = judgeReply(reply.result, q.validate);
  if (!verdict.ok) {
    if (pending.attempt === 1) return askRound(q, memory, 2, { text: verdict.text, problems: verdict.problems });
    log('info', `reflection: sampled justification for ${q.tool} (${q.domain}) invalid twice`, { problems: verdict.problems });
    return { kind: 'failed', problems: verdict.problems };
  }
  await q.keep(verdict.justification);
  return { kind: 'done' };
}
