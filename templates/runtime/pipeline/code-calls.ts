/**
 * Code mode's nested calls (dispatch.ts hands an `execute` call here): each `api.<name>(args)` of
 * the code is a nested call of the execute call through its own steps ({@link createCodeCalls}'s
 * `steps`: the policy's, the OAuth token's scopes, the request's reach, argument validation and the
 * reflection gate) and then the server's dispatch. Here live the gate's handling of a nested call
 * (its turns, gate-turns.ts; a question to the client — legacy: a real request with the run's clock
 * stopped; 2026-07-28: the execute call's input round, its calls replayed on the retry,
 * api-replay.ts), the registry of the nested calls under way (by a `parent` object made for each
 * nested call of each run), the mark of a nested call's request going out (`sent`: the answer names
 * a call the run stops after it as sent, outcome unknown), and the ending of a call the gate asked
 * about that the retry's run no longer makes.
 *
 * This file is copied verbatim into every generated project.
 */
import type { CallToolResult, InputRequiredResult } from '@modelcontextprotocol/server';
import { argumentsHash } from '../core/canonical-json.js';
import { isRecord } from '../core/json-shapes.js';
import type { ToolEntry } from '../core/surface.js';
import { measureArguments, overLimitMessage } from '../operation/argument-limits.js';
import type { Settings } from '../process/settings.js';
import { settingNames } from '../process/variables.js';
import { replayByName } from './api-replay.js';
import { gateTurnsOf } from './gate-turns.js';
import { nestedScopes } from './nested-scopes.js';
import type { Dispatcher, Outcome, PipelineTool, Step, ToolCall, ToolGuard, ToolResult } from './pipeline.js';
import { answer, checkArguments, gateVerdict, isInputRequired, nestedCall, refuse, runPipeline } from './pipeline.js';

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

/** The first text block of a result. */
function textOfResult(result: ToolResult): string {
  const first = (result as CallToolResult).content?.find((c) => c.type === 'text');
  return first?.type === 'text' ? first.text : '';
}

/** What code mode's nested calls need of the server (createDispatch passes them). */
export type CodeCallsOptions = {
  readonly code: CodeFront;
  /** Every tool of the server by name. */
  readonly byName: ReadonlyMap<string, PipelineTool>;
  readonly maxArgumentBytes: number;
  /** The server's variable prefix (the argument-size refusal names its variable). */
  readonly envPrefix: string;
  /** The reflection gate (dispatch.ts's `ReflectionGuard`), if the server has one. */
  readonly reflection?: (ToolGuard & { readonly persistTool: ToolEntry }) | undefined;
  /** The policy layer's steps (telemetry, audit, access, limits), first for every call. */
  readonly policySteps: readonly Step[];
  /** The server's dispatch, which ends each nested call. */
  readonly dispatch: Dispatcher;
};

/** Code mode's nested calls, as the dispatch uses them. */
export type CodeCalls = {
  /** Runs an execute call's code: `args`, its own arguments (the call's are what the audit keeps); `results`, the results policy its answer is fitted to. */
  run(call: ToolCall, args: Record<string, unknown>, results: NonNullable<Settings['results']>): Promise<Outcome>;
  /** The mark of a nested call of code's request going out, if `call` is one under way. */
  sentMark(call: ToolCall): (() => void) | undefined;
};

/** Code mode's nested calls of one server. */
export function createCodeCalls(options: CodeCallsOptions): CodeCalls {
  const { code, byName, maxArgumentBytes, envPrefix, reflection, policySteps, dispatch } = options;
  /** Only what the request can see (its concern preset, access gate) is reachable from code. */
  const reachable: Step = (call, next) =>
    call.gate.visible('tools', call.name, call.ctx)
      ? next()
      : Promise.reject(new Error(`${call.name} is not reachable by this client (its concern preset or access rules hide it)`));

  /** The reflection gate of a nested call of code (the last of `codeSteps`, below). */
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
    // the run ended (the code returned or threw, a bound, a cancellation) while the gate decided,
    // whatever it decided: not sent, and never asked about (no retry would come to continue it)
    if (call.signal.aborted) throw new Error(`${call.name} was not sent: the run ended before the gate had decided`);
    if (verdict.ok) return next();
    // 2026-07-28: the gate asks in an input round; the execute call answers with it
    if (isInputRequired(verdict.result)) return answer(verdict.result);
    const said = textOfResult(verdict.result);
    const reason = `the reflection gate holds ${call.name}: ${said}\nFrom code: get the justification stored first (${reflection.persistTool.name}), then run execute again.`;
    throw refuse(new Error(reason), { kind: 'denied', reason });
  };

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

  /** Whether some operation code reaches is gated: only then may an execute call have input rounds (its calls replayed across them). */
  const codeGated =
    reflection !== undefined && [...byName].some(([name, t]) => t.kind === 'operation' && reflection.isGated(name) && code.signature(name) !== undefined);
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
    if (!size.fits) return { refused: overLimitMessage(name, size, settingNames(envPrefix).maxArgumentBytes) };
    const base = nestedCall(parent, target.tool, args);
    // the call the gate asked about in the last round (2026-07-28) continues as that logical call: audited and counted once
    const gateState = (parent.state.codeGate ??= {}) as Record<string, unknown>;
    const asked = gateState.asked as AskedCall | undefined;
    const again = asked !== undefined && asked.tool === name && asked.args === argumentsHash(args);
    if (again) {
      delete gateState.asked;
      // run() checks this: the asked call was made again in this round, so it is not ended as not made
      gateState.continued = asked;
    }
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
  const closeAsked = async (parent: ToolCall, asked: AskedCall, why: string): Promise<void> => {
    const target = byName.get(asked.tool);
    if (target?.kind !== 'operation' || policySteps.length === 0) return;
    const call: ToolCall = {
      ...nestedCall(parent, target.tool, isRecord(asked.arguments) ? asked.arguments : {}),
      callId: asked.callId,
      firstRound: false,
      parent: { name: parent.name, callId: parent.callId, code: true },
    };
    const notMade = new Error(`${asked.tool} ${why}`);
    await runPipeline(policySteps, () => Promise.reject(notMade), call).catch(() => undefined);
  };

  return {
    async run(call, args, results) {
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
      if (call.state.codeGate !== undefined) delete (call.state.codeGate as Record<string, unknown>).continued;
      // the run counts against the process's bound of runs under way and this client's share of it
      const result = await code.execute(args, runCode, call.signal, results, call.identity);
      const gateState = call.state.codeGate as Record<string, unknown> | undefined;
      if (askedBefore !== undefined && gateState?.continued !== askedBefore) {
        // the retry's code (changed) did not make the asked call again: it ends here, not made (even
        // when another gated call of this run asks now, replacing it as the asked call)
        if (gateState !== undefined && gateState.asked === askedBefore) delete gateState.asked;
        await closeAsked(
          call,
          askedBefore as AskedCall,
          'was not made: the gate asked the client about it, and the code run on the retry did not call it again',
        );
      }
      const askedNow = gateState?.asked as AskedCall | undefined;
      if (gateState !== undefined && askedNow !== undefined && askedNow !== askedBefore && !isInputRequired(result)) {
        // the gate asked about a call of this run, but the run ended otherwise (the code returned or
        // threw, a bound): no retry comes to continue it, so it ends here, never sent
        delete gateState.asked;
        await closeAsked(call, askedNow, 'was not sent: the run ended while the gate was asking the client');
      }
      return answer(result);
    },
    sentMark: (call) => (call.parent?.code === true ? codeRuns.get(call.parent)?.sent : undefined),
  };
}
