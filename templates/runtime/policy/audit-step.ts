/**
 * The audit trail around what clients ask: the step of a tool call, and the same for a
 * `prompts/get`, `resources/read` or `preprocessors/run` — both write the events observed.ts makes
 * of a request and its ending, so a line of the trail is written in one way whatever it records.
 *
 * This file is copied into every generated project that has `policy.audit`.
 */
import { ProtocolError, ProtocolErrorCode } from '@modelcontextprotocol/server';
import { log as logLine } from '../core/log.js';
import type { Outcome, Step } from '../pipeline/pipeline.js';
import type { AuditLog } from './audit.js';
import type { Ending, Observed } from './observed.js';
import { answerEnding, callEnding, endEvent, invokedEvent, observedCall, thrownEnding } from './observed.js';

/** What the audit step keeps in `call.state` across input rounds. */
type AuditState = { readonly startedAt: number };

/** The -32603 a call fails with when its audit line cannot be written. */
function cannotWrite(err: unknown): ProtocolError {
  return new ProtocolError(ProtocolErrorCode.InternalError, `audit trail cannot be written: ${err instanceof Error ? err.message : String(err)}`);
}

/**
 * The audit step, outermost in the pipeline (after the span). A logical call writes `tool.invoked`
 * (before it runs) in its first round and one terminal event when it ends — `tool.denied` /
 * `tool.limited` (a step's refusal), `tool.failed` (an `isError` result or a thrown error) or
 * `tool.completed`; an input-required round writes nothing more. The duration spans every round. A
 * `tool.invoked` that cannot be written refuses the call (-32603) under `onWriteError: fail`; a
 * terminal event that cannot be written is logged, and the call's own result or error goes back
 * unchanged.
 */
export function auditStep(log: AuditLog): Step {
  return async (call, next) => {
    const request = observedCall(call);
    const kept = call.state.audit as Partial<AuditState> | undefined;
    let startedAt = typeof kept?.startedAt === 'number' ? kept.startedAt : undefined;
    if (call.firstRound || startedAt === undefined) {
      startedAt = Date.now();
      call.state.audit = { startedAt } satisfies AuditState;
    }
    if (call.firstRound) {
      try {
        await log.record(invokedEvent(request, call.argumentBytes));
      } catch (err) {
        throw cannotWrite(err);
      }
    }
    let outcome: Outcome | undefined;
    let error: { readonly thrown: unknown } | undefined;
    try {
      outcome = await next();
    } catch (thrown) {
      error = { thrown };
    }
    const ending = error ? thrownEnding(error.thrown) : callEnding(outcome!);
    if (ending.outcome === 'input_required') return outcome!;
    const event = endEvent(request, ending, Math.max(0, Date.now() - startedAt), (text) => log.hide(text, call.args));
    try {
      await log.record(event, { essential: true });
    } catch (err) {
      // the call ran: reporting it as failed would invite a retry that repeats its effect (after
      // close, at shutdown, what was left is counted in one line instead)
      if (!log.isClosed)
        logLine('error', `audit: the ${event.name} event of a call that ran could not be written; its result is returned all the same`, {
          tool: call.name,
          callId: call.callId,
          message: err instanceof Error ? err.message : String(err),
        });
    }
    if (error) throw error.thrown;
    return outcome!;
  };
}

/**
 * Runs `serve` (a `prompts/get`, `resources/read` or `preprocessors/run`) and writes its event
 * when it ends, with its outcome, duration and, when it failed, why; an input round is not its end
 * and writes nothing. When the event cannot be written the request fails (`onWriteError: fail`),
 * unless it failed already: its own error goes back.
 *
 * This differs from a tool call on purpose (and as before these requests shared the tool path's
 * builders): a tool call writes its `tool.invoked` line before it runs, so a trail that cannot be
 * written refuses it there, and its ending is only logged, since failing a call that ran would
 * invite a retry that repeats its effect. These requests write one event, at their end, so failing
 * then is the only way an unwritable trail keeps them out. A prompt or a resource only reads, and
 * preprocessors gather context for the host's next prompt (handlers meant to read, as a prompt's).
 */
export async function auditRequest<T>(log: AuditLog, request: Observed, serve: () => Promise<T>): Promise<T> {
  const started = Date.now();
  const write = (ending: Ending): Promise<void> => log.record(endEvent(request, ending, Date.now() - started, (text) => log.hide(text, request.arguments)));
  let value: T;
  try {
    value = await serve();
  } catch (err) {
    await write(thrownEnding(err)).catch(() => undefined);
    throw err;
  }
  const ending = answerEnding(value);
  if (ending.outcome !== 'input_required') await write(ending);
  return value;
}
