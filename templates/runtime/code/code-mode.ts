/**
 * Code mode (manifest `discovery: code`): the server lists `search_tools`, `describe_tool` and
 * `execute`. A model finds operations with `search_tools`, reads each one's TypeScript signature
 * (`api.<name>(args): Promise<Result>`, generated at build time from the same schemas as the
 * typed client `ctx.api`), and sends code to `execute`: the body of an async function, in
 * TypeScript or JavaScript. Types are stripped with sucrase; the code runs in a QuickJS sandbox
 * (sandbox.ts) on a worker thread (sandbox-host.ts) that sees `api`, `console` and the language only. Every `api.<name>(args)` is a
 * nested call of the `execute` call through the server's pipeline (the server's runner: access
 * rules, limits, audit, concern reach, argument validation, the reflection gate); credentials are
 * added there, outside the sandbox. The answer is what the code returns (made to fit the results
 * budget) and what it logged; a crossed bound is an `isError` naming the bound and the calls made
 * before it (code-mode-answer.ts writes it).
 *
 * This file is copied into generated projects that use code mode.
 */
import { createHash } from 'node:crypto';
import type { CallToolResult, InputRequiredResult } from '@modelcontextprotocol/server';
import { transform } from 'sucrase';
import { errorResult } from '../core/error-result.js';
import { isRecord } from '../core/json-shapes.js';
import type { ToolEntry } from '../core/surface.js';
import type { ResultPolicy } from '../core/types.js';
import { readPositiveInteger } from '../process/settings.js';
import { CODE_DEFAULTS, settingNames } from '../process/variables.js';
import { CODE_TOOL_NAMES, CODE_TOOLS } from '../search/search-tools.js';
import type { CallRecord } from './code-mode-answer.js';
import { ASKING, answer, dataOf, IN_FLIGHT, PARKED, textOf } from './code-mode-answer.js';
import { codeName } from './code-mode-name.js';
import type { HostCallOutcome, SandboxLimits } from './sandbox.js';
import type { WaitForClient } from './sandbox-host.js';
import { runIsolated } from './sandbox-host.js';

/**
 * Bounds of code mode: those of each run, and `maxRuns`, the most runs under way at once in the
 * process (each holds a WebAssembly memory of up to `memoryBytes` until it ends), named by
 * `maxRunsVariable` in the refusal.
 */
export type CodeLimits = SandboxLimits & {
  readonly maxRuns: number;
  readonly maxRunsVariable?: string;
  /** Most characters of the code its audit record keeps (`<PREFIX>_CODE_AUDIT_TEXT`); unset: none, only its hash and length. */
  readonly auditTextChars?: number;
};

/** Bounds of code mode when no setting says otherwise. */
export const DEFAULT_CODE_LIMITS: CodeLimits = Object.freeze({ ...CODE_DEFAULTS });

/** The runs one client identity may hold at once: half of `maxRuns`, rounded up, so one client never holds them all (unless the bound is 1). */
export function runsPerIdentity(maxRuns: number): number {
  return Math.max(1, Math.ceil(maxRuns / 2));
}

/** Most characters of a failed API response's body the code (and the answer) sees. */
export const ERROR_BODY_CHARS = 2000;

export { codeName } from './code-mode-name.js';
/** Most characters of code one `execute` takes. */
export const MAX_CODE_CHARS = 100_000;

/** What each bound counts, for the message of a malformed value. */
const UNITS: Record<keyof SandboxLimits | 'maxRuns', string> = {
  timeoutMs: 'milliseconds',
  memoryBytes: 'bytes',
  maxCalls: 'calls',
  maxOutputBytes: 'bytes',
  maxConsoleBytes: 'bytes',
  maxRuns: 'runs',
};

/** The bounds of `execute`: the defaults, each overridden by its `<PREFIX>_CODE_*` variable (declared in variables.ts; a positive integer, anything else throws naming it). */
export function codeLimitsFromEnv(envPrefix: string, env: NodeJS.ProcessEnv): CodeLimits {
  const names = settingNames(envPrefix);
  const variables: Record<keyof SandboxLimits | 'maxRuns', string> = {
    timeoutMs: names.codeTimeoutMs,
    memoryBytes: names.codeMemoryBytes,
    maxCalls: names.codeMaxCalls,
    maxOutputBytes: names.codeMaxOutputBytes,
    maxConsoleBytes: names.codeMaxConsoleBytes,
    maxRuns: names.codeMaxRuns,
  };
  const out: Record<string, number | string> = { ...DEFAULT_CODE_LIMITS, maxRunsVariable: names.codeMaxRuns };
  for (const [key, name] of Object.entries(variables)) out[key] = readPositiveInteger(env, name, out[key] as number, UNITS[key as keyof typeof variables]);
  const auditText = readPositiveInteger(env, names.codeAuditText, 0, 'characters');
  if (auditText > 0) out.auditTextChars = Math.min(auditText, MAX_CODE_CHARS);
  return out as CodeLimits;
}

/** What one nested call gave, as the server's runner reports it. */
export type NestedOutcome = {
  readonly result?: CallToolResult;
  readonly status?: number;
  /** The tool wraps its results as `{status, data}` (results that are not always objects): code gets `data`. */
  readonly wrapped?: boolean;
  /** Set when a step refused the call (access, limits, the gate, reach): why. */
  readonly refused?: string;
  /**
   * Set when the reflection gate asks the client for the call's justification in an input round
   * (2026-07-28): the run ends and `execute` answers with this request; the client's retry runs
   * the code again, its earlier calls replayed (api-replay.ts), and the gate judges the answer.
   */
  readonly input?: InputRequiredResult;
  /**
   * Set when the call was not made because another call of the same run is asking the client (the
   * gate asks about one call at a time): it waits for the retry's run, like the asking call.
   */
  readonly parked?: true;
};

/**
 * Runs operation `tool` with `args` as a nested call of the `execute` call; never rejects.
 * `waiting`: runs a question to the client (the reflection gate asking mid-run, legacy era) with
 * the run's wall time stopped. `sent`: the dispatch's mark that the call's request went out.
 */
export type CodeRunner = (
  tool: string,
  args: Record<string, unknown>,
  signal: AbortSignal,
  waiting?: WaitForClient,
  /** Called by the dispatch when the call's request goes out (the answer then never says "not made"). */
  sent?: () => void,
) => Promise<NestedOutcome>;

/** The sucrase-transformed code, or where its syntax is wrong (line:column in the user's code). */
function stripTypes(code: string): { js: string } | { error: string } {
  try {
    // wrapped as the sandbox will run it, so a top-level `return` and `await` parse; one line added
    const out = transform(`async function __mcpgen_body() {\n${code}\n}`, { transforms: ['typescript'], disableESTransforms: true }).code;
    const start = out.indexOf('{');
    const end = out.lastIndexOf('}');
    return { js: out.slice(start + 2, end - 1) };
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    const at = /\((\d+):(\d+)\)\s*$/.exec(message);
    // sucrase's line counts the wrapper's first line; its column is already 1-based
    if (at) return { error: `SyntaxError at line ${Number(at[1]) - 1}:${Number(at[2])}: ${message.replace(/\s*\(\d+:\d+\)\s*$/, '')}` };
    return { error: `SyntaxError: ${message}` };
  }
}

/** Code mode as the server uses it. */
export interface CodeMode {
  /** The tools listed instead of the catalogue, in list order. */
  readonly tools: readonly ToolEntry[];
  /** Name of the execute tool. */
  readonly executeName: string;
  /** The TypeScript signature of tool `name`'s operation (`api.<name>(args): Promise<…>`), if it has one. */
  signature(name: string): string | undefined;
  /** The tool an `api.<name>` of the code means: a tool name itself, or its {@link codeName}. */
  toolOf(name: string): string | undefined;
  /** What the audit trail keeps of an `execute` call's arguments: the code's SHA-256 and size; its text only as `<PREFIX>_CODE_AUDIT_TEXT` allows (its first characters). */
  auditArguments(args: Record<string, unknown>): Record<string, unknown>;
  /**
   * Runs `execute` for client `identity`: never throws for anything the code does. Past the bound
   * of runs under way (or the identity's share of it), refused at once with an `isError` naming it.
   */
  execute(
    args: Record<string, unknown>,
    run: CodeRunner,
    signal: AbortSignal,
    results?: ResultPolicy,
    identity?: string,
  ): Promise<CallToolResult | InputRequiredResult>;
}

/** Options of {@link createCodeMode}. */
export type CodeModeOptions = {
  /** Bounds of each run (default {@link DEFAULT_CODE_LIMITS}). */
  readonly limits?: CodeLimits | (() => CodeLimits);
};

/** Code mode over `signatures` (tool name ⇒ its signature, generated at build time). */
export function createCodeMode(signatures: Readonly<Record<string, string>>, options: CodeModeOptions = {}): CodeMode {
  // read when the first execute runs: an invalid <PREFIX>_CODE_* value then fails that call, naming
  // the variable, instead of the whole server at import (--help and --print-config still work)
  let resolved: CodeLimits | undefined;
  const limitsNow = (): CodeLimits => (resolved ??= typeof options.limits === 'function' ? options.limits() : (options.limits ?? DEFAULT_CODE_LIMITS));
  const byCodeName = new Map<string, string>();
  for (const name of Object.keys(signatures)) if (!byCodeName.has(codeName(name))) byCodeName.set(codeName(name), name);
  // runs under way in this process, in all and per client identity: each holds its sandbox's memory until it ends
  let running = 0;
  const runningBy = new Map<string, number>();
  return {
    tools: CODE_TOOLS,
    executeName: CODE_TOOL_NAMES.execute,
    signature: (name) => (Object.hasOwn(signatures, name) ? signatures[name] : undefined),
    toolOf: (name) => (Object.hasOwn(signatures, name) ? name : byCodeName.get(name)),
    auditArguments(args) {
      const code = typeof args.code === 'string' ? args.code : '';
      let keep = 0;
      try {
        keep = limitsNow().auditTextChars ?? 0;
      } catch {
        // an invalid setting: execute itself fails naming it; the audit keeps no text
      }
      // the audit scrubs credentials from it and cuts it to its bound on arguments, as any argument;
      // the scrubbing knows whole credentials only, so a cut never splits a word (one could be a credential)
      const text = keep > 0 ? (code.length > keep ? cutAtWord(code, keep) : code) : '[redacted]';
      return { code: text, codeSha256: createHash('sha256').update(code).digest('hex'), codeChars: code.length };
    },
    async execute(args, run, signal, results, identity = 'local') {
      const code = args.code;
      if (typeof code !== 'string' || code.trim() === '')
        return errorResult(`Invalid arguments for tool ${CODE_TOOL_NAMES.execute}: code must be a non-empty string`);
      if (code.length > MAX_CODE_CHARS)
        return errorResult(`Invalid arguments for tool ${CODE_TOOL_NAMES.execute}: code is ${code.length} characters, over the bound of ${MAX_CODE_CHARS}`);
      const stripped = stripTypes(code);
      if ('error' in stripped) return errorResult(`${stripped.error}\nNo code ran; no API calls were made.`);
      const calls: CallRecord[] = [];
      // a question for the client (the gate, 2026-07-28): the run ends with it once the calls in flight have answered
      const ended = new AbortController();
      let asking: InputRequiredResult | undefined;
      const inFlight = new Set<Promise<unknown>>();
      const host = async (name: string, callArgs: unknown, callSignal: AbortSignal, waiting?: WaitForClient): Promise<HostCallOutcome> => {
        // once the run asks, later calls are not made (the retry's run makes them)
        if (asking !== undefined) return new Promise<HostCallOutcome>(() => undefined);
        const tool = byCodeName.has(name) || Object.hasOwn(signatures, name) ? (Object.hasOwn(signatures, name) ? name : byCodeName.get(name)!) : undefined;
        if (tool === undefined) {
          calls.push({ name, status: 'unknown' });
          return {
            ok: false,
            message: `api.${name} is not an operation of this server; use ${CODE_TOOL_NAMES.search} to find one and ${CODE_TOOL_NAMES.describe} for its signature`,
          };
        }
        const a = isRecord(callArgs) ? callArgs : {};
        const record: CallRecord = { name: tool, status: IN_FLIGHT };
        calls.push(record);
        // legacy: while the gate asks the client (a real request), the call is marked as asking
        const asks: WaitForClient | undefined =
          waiting &&
          (async (work) => {
            record.status = ASKING;
            try {
              return await waiting(work);
            } finally {
              // stopped with the run (the code returned, a bound): it stays asking, never made
              if (record.status === ASKING && !callSignal.aborted) record.status = IN_FLIGHT;
            }
          });
        const made = run(tool, a, callSignal, asks, () => {
          record.sent = true;
        });
        inFlight.add(made);
        const outcome = await made.finally(() => inFlight.delete(made));
        // stopped with the run (the code returned, a bound, a cancellation): the code never sees it, the record keeps what it was
        if (callSignal.aborted) return new Promise<HostCallOutcome>(() => undefined);
        if (outcome.parked === true) {
          // another call of the run is asking the client: this one is made by the retry's run
          record.status = PARKED;
          return new Promise<HostCallOutcome>(() => undefined);
        }
        if (outcome.input !== undefined) {
          record.status = ASKING;
          if (asking === undefined) {
            asking = outcome.input;
            // the other calls in flight finish (their outcomes kept for the retry), then the run ends
            void (async () => {
              while (inFlight.size > 0) await Promise.allSettled([...inFlight]);
              ended.abort();
            })();
          }
          return new Promise<HostCallOutcome>(() => undefined);
        }
        if (outcome.refused !== undefined) {
          record.status = 'refused';
          return { ok: false, message: `${tool} was refused: ${outcome.refused}` };
        }
        const result = outcome.result!;
        const status = outcome.status;
        if (result.isError === true) {
          record.status = status !== undefined ? String(status) : 'error';
          const text = textOf(result);
          return {
            ok: false,
            message: `${tool} failed${status !== undefined ? ` with HTTP ${status}` : ''}: ${text.split('\n', 1)[0]!.slice(0, 300)}`,
            ...(status !== undefined ? { status } : {}),
            body: text.slice(0, ERROR_BODY_CHARS),
          };
        }
        record.status = status !== undefined ? String(status) : 'ok';
        return { ok: true, data: dataOf(result, outcome.wrapped === true) };
      };
      let bounds: CodeLimits;
      try {
        bounds = limitsNow();
      } catch (err) {
        return errorResult(`Code mode cannot run: ${err instanceof Error ? err.message : String(err)}`);
      }
      const { maxRuns, maxRunsVariable, auditTextChars: _text, ...limits } = bounds;
      const variable = maxRunsVariable ?? '<PREFIX>_CODE_MAX_RUNS';
      const share = runsPerIdentity(maxRuns);
      const mine = runningBy.get(identity) ?? 0;
      if (mine >= share)
        return errorResult(
          `Code mode is busy for this client: it has ${mine} execute runs under way, its share (half, rounded up) of the ${variable}=${maxRuns} runs at once on this server. No code ran; no API calls were made. Try again when one of its runs has ended.`,
        );
      if (running >= maxRuns)
        return errorResult(
          `Code mode is busy: ${running} execute runs are under way, the bound of ${variable}=${maxRuns} runs at once on this server. No code ran; no API calls were made. Try again when a run has ended.`,
        );
      running += 1;
      runningBy.set(identity, mine + 1);
      try {
        // the owner: a sandbox instance is used again only by the same client's runs
        const outcome = await runIsolated(stripped.js, host, limits, AbortSignal.any([signal, ended.signal]), identity, maxRuns);
        // the run ended to ask the client (its calls in flight answered first): the question is the
        // answer. A run that ended otherwise — the code returned or threw first, its wall time or
        // thread stopped it — answers with that, as any such run: the round ends there, so no
        // outcome aborted with the run is kept for a retry and no write is sent again
        if (asking !== undefined && outcome.kind === 'cancelled' && ended.signal.aborted && !signal.aborted) return asking;
        return answer(outcome, calls, results);
      } finally {
        running -= 1;
        const left = (runningBy.get(identity) ?? 1) - 1;
        if (left > 0) runningBy.set(identity, left);
        else runningBy.delete(identity);
      }
    },
  };
}

/** The first `keep` characters of `code`, moved back to the start of a word the cut would split, and how much was left out. */
function cutAtWord(code: string, keep: number): string {
  let end = keep;
  if (/\S/.test(code[end] ?? '')) while (end > 0 && /\S/.test(code[end - 1]!)) end -= 1;
  return `${code.slice(0, end)}…[+${code.length - end} characters]`;
}
