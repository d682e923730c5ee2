/**
 * Per-tool limits (manifest `policy.limits`): a timeout on the whole logical call, the most calls
 * running at once, calls per minute per client and overall, and the largest response passed back.
 *
 * Limits apply once per logical call, however many input rounds it takes: rates are counted on the
 * first round only, the deadline is set on the first round and kept in the call's state (so the
 * time the client takes to answer an input request counts), and a concurrency slot is held while a
 * round runs. Over a limit ⇒ an `isError` result naming the limit and when to retry, returned
 * with its `refusal` for the audit step around this one. A call past its deadline is aborted (its
 * signal, which the upstream request follows) and answered as limited, with the upstream status
 * when the response's headers had arrived.
 *
 * The counters are per instance by default (counters.ts); with `<PREFIX>_REDIS_URL` they are shared
 * by every instance (redis-counters.ts). A shared store that cannot answer refuses the call
 * (`SharedStateError` ⇒ an `isError` naming the cause) unless `<PREFIX>_REDIS_FAIL_OPEN=limits`.
 * This file is copied verbatim into every generated project with `policy.limits`.
 */
import { errorResult } from '../core/error-result.js';
import type { Outcome, Step, ToolCall } from '../pipeline/pipeline.js';
import { SharedStateError } from '../shared/shared-state.js';
import type { Counters } from './counters.js';
import { MemoryCounters } from './counters.js';
import type { LimitsConfig, ToolLimits } from './policy-types.js';

/** A limit's field, as named in messages. */
type Field = 'timeoutMs' | 'maxConcurrent' | 'perMinute.perClient' | 'perMinute.overall' | 'maxResponseBytes';

/** A tool's limits, with where each field came from (`policy.limits.default`, an entry's source). */
type Resolved = { readonly limits: ToolLimits; readonly from: Readonly<Partial<Record<Field, string>>> };

/** Where the default limits are in the manifest. */
const DEFAULT_SOURCE = 'policy.limits.default';

/** The key in `call.state` of a call's deadline (epoch ms), kept across its input rounds. */
export const DEADLINE_STATE_KEY = 'policy.deadline';

/** One minute, the window of `perMinute`. */
const MINUTE_MS = 60_000;

/** The fields `limits` sets, attributed to `source`. */
function sources(limits: ToolLimits | undefined, source: string): Partial<Record<Field, string>> {
  const out: Partial<Record<Field, string>> = {};
  if (limits?.timeoutMs !== undefined) out.timeoutMs = source;
  if (limits?.maxConcurrent !== undefined) out.maxConcurrent = source;
  if (limits?.perMinute?.perClient !== undefined) out['perMinute.perClient'] = source;
  if (limits?.perMinute?.overall !== undefined) out['perMinute.overall'] = source;
  if (limits?.maxResponseBytes !== undefined) out.maxResponseBytes = source;
  return out;
}

/**
 * The limits of every tool. A tool's limits are the default's, with the fields of the first
 * per-tool entry naming the tool overriding them one by one (`perMinute.perClient` and
 * `perMinute.overall` separately): an entry that sets only `timeoutMs` keeps the default rates.
 */
export class Limits {
  readonly counters: Counters;
  readonly #config: LimitsConfig;
  readonly #resolved = new Map<string, Resolved | undefined>();

  constructor(config: LimitsConfig, counters: Counters = new MemoryCounters()) {
    this.#config = config;
    this.counters = counters;
  }

  /** The limits of `tool` and where each came from; `undefined` when none applies. */
  resolve(tool: string): Resolved | undefined {
    if (this.#resolved.has(tool)) return this.#resolved.get(tool);
    const base = this.#config.default;
    const entry = this.#config.tools.find((e) => e.tools.includes(tool));
    let resolved: Resolved | undefined;
    if (entry) {
      const own = entry.limits;
      const perMinute = base?.perMinute || own.perMinute ? { ...base?.perMinute, ...own.perMinute } : undefined;
      const limits: ToolLimits = { ...base, ...own, ...(perMinute ? { perMinute } : {}) };
      resolved = { limits, from: { ...sources(base, DEFAULT_SOURCE), ...sources(own, entry.source) } };
    } else if (base) {
      resolved = { limits: base, from: sources(base, DEFAULT_SOURCE) };
    }
    // tool names are the server's own (the pipeline looks a call up before any step runs)
    this.#resolved.set(tool, resolved);
    return resolved;
  }

  /** The limits of `tool`: the first per-tool entry naming it over the default, field by field; `undefined` when none. */
  for(tool: string): ToolLimits | undefined {
    return this.resolve(tool)?.limits;
  }
}

/** The limited outcome of a call: the `isError` result, its refusal (for the audit step), and the upstream status when one arrived before the deadline. */
function limited(reason: string, text: string, status?: number): Outcome {
  return { result: errorResult(text), refusal: { kind: 'limited', reason }, ...(status !== undefined ? { status } : {}) };
}

/** The limited outcome of a call whose limits cannot be checked (the shared store cannot answer). */
function unchecked(call: ToolCall, err: SharedStateError): Outcome {
  return limited(
    `limits unchecked: ${err.message}`,
    `Tool ${call.name} cannot be checked against its limits: ${err.message}. The call was not run; retry shortly.`,
  );
}

/** `ms` as whole seconds to wait, at least 1. */
function seconds(ms: number): number {
  return Math.max(1, Math.ceil(ms / 1000));
}

/** Counter keys: JSON arrays, so no tool name or identity can collide with another's key. */
const key = (...parts: string[]): string => JSON.stringify(parts);

/** The error a deadline aborts a call with. */
function deadlineError(tool: string, timeoutMs: number): Error {
  const err = new Error(`Tool ${tool} did not finish within ${timeoutMs} ms`);
  err.name = 'TimeoutError';
  return err;
}

/**
 * Limits as a pipeline step (after access control: a denied call counts against nothing).
 * `now` is the clock of rates and deadlines (tests pass a fake one; the deadline's timer is real).
 */
export function limitsStep(limits: Limits, now: () => number = Date.now): Step {
  const counters = limits.counters;
  return async (call, next) => {
    const resolved = limits.resolve(call.name);
    if (resolved === undefined) return next();
    const { limits: l, from } = resolved;
    const tool = call.name;

    // the deadline of the whole logical call: set on its first round, carried in its state
    let deadline: number | undefined;
    if (l.timeoutMs !== undefined) {
      const kept = call.state[DEADLINE_STATE_KEY];
      if (call.firstRound || typeof kept !== 'number') call.state[DEADLINE_STATE_KEY] = deadline = now() + l.timeoutMs;
      else deadline = kept;
    }
    const timeoutText = (): string =>
      `Tool ${tool} did not finish within ${l.timeoutMs} ms, its time limit (${from.timeoutMs}.timeoutMs): the call was cancelled. Retry later, or with a smaller request.`;
    const timeoutReason = (): string => `timeoutMs ${l.timeoutMs} (${from.timeoutMs})`;
    if (deadline !== undefined && deadline - now() <= 0) return limited(timeoutReason(), timeoutText());

    // a concurrency slot for this round; nothing else is counted when none is free
    let release: (() => void) | undefined;
    if (l.maxConcurrent !== undefined) {
      try {
        release = await counters.acquire(key('running', tool), l.maxConcurrent);
      } catch (err) {
        if (err instanceof SharedStateError) return unchecked(call, err);
        throw err;
      }
      if (release === undefined) {
        const n = l.maxConcurrent;
        return limited(
          `maxConcurrent ${n} (${from.maxConcurrent})`,
          `Tool ${tool} already has ${n} call${n === 1 ? '' : 's'} running, its limit of calls at once (${from.maxConcurrent}.maxConcurrent); retry shortly.`,
        );
      }
    }
    let settled = true;
    try {
      // rates: counted once per logical call, on its first round; per client first, so that a
      // client over its own rate takes nothing from the overall one
      if (call.firstRound && l.perMinute) {
        try {
          const t = now();
          const { perClient, overall } = l.perMinute;
          if (perClient !== undefined) {
            const hit = await counters.hit(key('rate', tool, 'client', call.identity), perClient, MINUTE_MS, t);
            if (!hit.ok)
              return limited(
                `perMinute.perClient ${perClient} (${from['perMinute.perClient']})`,
                `Tool ${tool} is over its limit of ${perClient} call${perClient === 1 ? '' : 's'} per minute for client ${JSON.stringify(call.identity)} (${from['perMinute.perClient']}.perMinute.perClient); retry in ${seconds(hit.retryAfterMs)} s.`,
              );
          }
          if (overall !== undefined) {
            const hit = await counters.hit(key('rate', tool, 'all'), overall, MINUTE_MS, t);
            if (!hit.ok)
              return limited(
                `perMinute.overall ${overall} (${from['perMinute.overall']})`,
                `Tool ${tool} is over its limit of ${overall} call${overall === 1 ? '' : 's'} per minute over all clients (${from['perMinute.overall']}.perMinute.overall); retry in ${seconds(hit.retryAfterMs)} s.`,
              );
          }
        } catch (err) {
          if (err instanceof SharedStateError) return unchecked(call, err);
          throw err;
        }
      }

      if (deadline === undefined && l.maxResponseBytes === undefined) return await next();
      const bounds: { timeoutMs?: number; maxResponseBytes?: number } = { ...call.bounds };
      if (l.maxResponseBytes !== undefined) bounds.maxResponseBytes = Math.min(bounds.maxResponseBytes ?? Infinity, l.maxResponseBytes);
      if (deadline === undefined) return await next({ ...call, bounds });

      // the rest of the call runs with a signal that aborts at the deadline
      const remaining = Math.max(1, deadline - now());
      bounds.timeoutMs = Math.min(bounds.timeoutMs ?? Infinity, remaining);
      const timer = new AbortController();
      let expired!: () => void;
      const expiry = new Promise<'expired'>((resolve) => (expired = () => resolve('expired')));
      const handle = setTimeout(() => {
        timer.abort(deadlineError(tool, l.timeoutMs!));
        expired();
      }, remaining);
      handle.unref?.();
      // the upstream status, heard when the response's headers arrive: a round the deadline ends still has it
      let status: number | undefined;
      const told = call.onHttpStatus;
      const onHttpStatus = (s: number): void => {
        status = s;
        told?.(s);
      };
      const running = next({ ...call, signal: AbortSignal.any([call.signal, timer.signal]), bounds, onHttpStatus });
      // the slot is held until the round really ends, even when the deadline answers first
      settled = false;
      const done = running.then(
        () => undefined,
        () => undefined,
      );
      void done.finally(() => release?.());
      try {
        const outcome = await Promise.race([running, expiry]);
        // a round that ends after the deadline fired (typically with an abort error) is a timeout
        if (outcome === 'expired' || timer.signal.aborted) return limited(timeoutReason(), timeoutText(), status);
        return outcome;
      } catch (err) {
        if (timer.signal.aborted && !call.signal.aborted) return limited(timeoutReason(), timeoutText(), status);
        throw err;
      } finally {
        clearTimeout(handle);
      }
    } finally {
      if (settled) release?.();
    }
  };
}
