/**
 * `ctx.api` across the input rounds of one logical call (2026-07-28). A handler that asks the
 * client something (handler-input.ts) runs again from the top when the client answers, so the
 * API calls it made before the question would be made again — a `POST` twice, audited and
 * counted by the limits twice. Instead, each nested call's outcome is kept in the call's round
 * state (sealed into the encrypted requestState, bound to the call), in the order the handler made
 * them, and a later run that makes the same call (same operation, same arguments, same place in
 * the order) gets the kept outcome without a request. A run that departs from the recorded order
 * makes its calls afresh from that point.
 *
 * Outcomes are kept up to {@link MAX_KEPT_BYTES} of JSON each and {@link MAX_KEPT_TOTAL_BYTES}
 * in all (the state travels with every round, inside a request whose body is limited); a larger
 * one, or one past the total, is remembered as made: a later run gets it again by a new request for a
 * `GET`/`HEAD` operation, and an `isError` result saying so for any other (never a second
 * write). Legacy clients have no rounds (their questions are real requests inside one run):
 * nothing is kept.
 *
 * Code mode's `execute` uses the same replay ({@link replayByName}, under its own state key): when
 * the reflection gate asks the client in an input round, the code runs again on the retry, and its
 * calls before the gated one are replayed (only on a server where some operation code reaches is
 * gated: without a gate, an execute call has no input rounds). An outcome that asks for input, or
 * that waited for another call's question (`parked`), is never kept.
 *
 * Each outcome is encoded once to measure it (when kept, and once per round for those kept
 * before): the total kept is a running sum, so a run of n calls costs n encodings, not n².
 *
 * This file is copied verbatim into every generated project that has extra tools with `uses`.
 */

import { argumentsHash } from '../core/canonical-json.js';
import { errorResult } from '../core/error-result.js';
import { encodedBytes } from '../operation/result-size.js';
import type { NestedRunner } from '../tools/api-client.js';

/** Largest outcome kept across rounds, in bytes of JSON. */
export const MAX_KEPT_BYTES = 64 * 1024;
/** Most bytes of JSON of all the outcomes kept across the rounds of one call. */
export const MAX_KEPT_TOTAL_BYTES = 256 * 1024;

/** Key of the round state the outcomes are kept under. */
const STATE_KEY = 'api';

type Outcome = Awaited<ReturnType<NestedRunner>>;
type Kept = { readonly tool: string; readonly args: string; readonly outcome?: Outcome };

/** The kept calls by their place in the order (`"0"`, `"1"`…): concurrent calls may end in any order. */
function keptOf(state: Record<string, unknown>, key: string): Record<string, Kept> {
  const raw = state[key];
  const out: Record<string, Kept> = {};
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return out;
  for (const [at, k] of Object.entries(raw as Record<string, unknown>)) {
    if (/^\d+$/.test(at) && typeof k === 'object' && k !== null && typeof (k as Kept).tool === 'string' && typeof (k as Kept).args === 'string')
      out[at] = k as Kept;
  }
  return out;
}

/** Bytes of JSON of an outcome; `Infinity` when it is not JSON (remembered as made, never kept). */
function sizeOf(outcome: unknown): number {
  try {
    return encodedBytes(outcome);
  } catch {
    return Infinity;
  }
}

/** `run` with the outcomes of earlier rounds of the call replayed (module comment); `run` itself in the legacy era. */
export function replayAcrossRounds(call: { readonly era: 'legacy' | 'modern'; readonly state: Record<string, unknown> }, run: NestedRunner): NestedRunner {
  if (call.era !== 'modern') return run;
  const replay = replayByName<{ tool: Parameters<NestedRunner>[0] }, Outcome>(
    call,
    ({ tool }, args) => run(tool, args),
    (text) => ({ result: errorResult(text) }),
  );
  return (tool, args) => replay(tool.name, tool.http.method, { tool }, args);
}

/**
 * The replay of {@link replayAcrossRounds} for any runner of named operations (code mode's): calls
 * are told apart by `name`, `method` says whether one may be made again, `refusal` makes the
 * outcome of a write that is not made twice. Outcomes that are objects with an `input` or a
 * `parked` are not kept.
 * `stateKey`: where in the call's round state.
 */
export function replayByName<Extra, O>(
  call: { readonly state: Record<string, unknown> },
  run: (extra: Extra, args: Record<string, unknown>) => Promise<O>,
  refusal: (text: string) => O,
  stateKey = STATE_KEY,
): (name: string, method: string, extra: Extra, args: Record<string, unknown>) => Promise<O> {
  const kept = keptOf(call.state, stateKey) as Record<string, { tool: string; args: string; outcome?: O }>;
  // the bytes of each kept outcome (sizes are not in the state: it is the only record), and their sum
  const sizes = new Map<string, number>();
  let total = 0;
  for (const [at, k] of Object.entries(kept)) {
    if (k.outcome === undefined) continue;
    const size = sizeOf(k.outcome);
    if (!Number.isFinite(size)) continue;
    sizes.set(at, size);
    total += size;
  }
  const drop = (at: string): void => {
    total -= sizes.get(at) ?? 0;
    sizes.delete(at);
  };
  let next = 0;
  return async (name, method, extra, args) => {
    const at = next++;
    const hash = argumentsHash(args);
    const prior = Object.hasOwn(kept, String(at)) ? kept[String(at)] : undefined;
    if (prior !== undefined && prior.tool === name && prior.args === hash) {
      if (prior.outcome !== undefined) return prior.outcome;
      const m = method.toUpperCase();
      if (m !== 'GET' && m !== 'HEAD')
        return refusal(
          `${name} was already called with these arguments in an earlier round of this tool call; its result was too large to keep, and it is not sent again`,
        );
    }
    const outcome = await run(extra, args);
    // a question for the client (or a call waiting for one) is made by the next round's call: nothing to keep
    if (
      typeof outcome === 'object' &&
      outcome !== null &&
      ((outcome as { input?: unknown }).input !== undefined || (outcome as { parked?: unknown }).parked !== undefined)
    )
      return outcome;
    const size = sizeOf(outcome);
    // what follows a departure from the recorded order was made for another path: dropped
    if (prior !== undefined && (prior.tool !== name || prior.args !== hash))
      for (const k of Object.keys(kept))
        if (Number(k) > at) {
          delete kept[k];
          drop(k);
        }
    const place = String(at);
    drop(place);
    const keep = size <= MAX_KEPT_BYTES && total + size <= MAX_KEPT_TOTAL_BYTES;
    kept[place] = { tool: name, args: hash, ...(keep ? { outcome } : {}) };
    if (keep) {
      sizes.set(place, size);
      total += size;
    }
    call.state[stateKey] = kept;
    return outcome;
  };
}
