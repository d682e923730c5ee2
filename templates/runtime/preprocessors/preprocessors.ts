/**
 * Preprocessors (manifest `preprocessors`): handlers a host runs before each
 * user prompt to gather context. They are NOT tools: they never appear in `tools/list` and
 * `tools/call` refuses them (the server assembly keeps them out of its tool table; see
 * `preprocessorNames`). They are served on their own methods:
 *  - `preprocessors/list` ⇒ `{ preprocessors: [{ name, description?, after, order, timeoutMs, onError }] }`;
 *  - `preprocessors/run { input }` ⇒ `{ ok, blocks }`, one context block per preprocessor run;
 * advertised under `capabilities.experimental.preprocessors` (`preprocessorCapability`), and for
 * hosts that speak only standard MCP through the `with_context` prompt (all three in
 * preprocessors-protocol.ts; the host-side helper is preprocessors-host.ts).
 *
 * Running: sequentially in dependency order (`after`; ties by declaration order). Each gets an
 * `AbortSignal` that fires at its timeout (default 10 s) or when the request is cancelled; a
 * handler that ignores it is cut off anyway (its late result is discarded). On an error or
 * timeout, `onError: 'skip'` (default) records the block and goes on, `'fail'` stops the run
 * with `ok: false` (blocks so far). A preprocessor whose `after` dependency failed still runs:
 * `after` orders, it does not make one output an input of another. A cancelled run stops with
 * the current preprocessor marked `skipped`. Each run is logged at debug level to stderr and, if
 * the caller passes `notify`, as an MCP logging notification (logger `preprocessors`).
 *
 * Output: a string is the block's content as is; a `CallToolResult`-like `{ content: [...] }`
 * gives its text blocks joined by newlines (`isError` ⇒ an error); `undefined`/`null` gives no
 * content; anything else is JSON.
 *
 * This file is copied verbatim into every generated project.
 */
import type { LoggingMessageNotificationParams } from '@modelcontextprotocol/server';
import { errorMessage } from '../core/error-result.js';
import type { LogLevel } from '../core/log.js';
import { log } from '../core/log.js';

/** What a preprocessor handler gets besides the input. */
export type PreprocessorContext = {
  /** Fires at the timeout or when the run is cancelled. */
  readonly signal: AbortSignal;
  /** Logs to stderr, prefixed with the preprocessor name. */
  readonly log: (level: LogLevel, message: string, data?: unknown) => void;
};

/** One preprocessor. */
export type PreprocessorDefinition = {
  readonly name: string;
  readonly description?: string;
  /** Names of preprocessors that must run before this one. */
  readonly after?: readonly string[];
  /** Default `DEFAULT_PREPROCESSOR_TIMEOUT_MS`. */
  readonly timeoutMs?: number;
  /** Default `skip`. */
  readonly onError?: 'skip' | 'fail';
  readonly handler: (input: { input: string }, ctx: PreprocessorContext) => Promise<unknown> | unknown;
};

/** Outcome of one preprocessor in a run. */
export type PreprocessorStatus = 'ok' | 'error' | 'timeout' | 'skipped';

/** One context block. */
export type PreprocessorBlock = {
  name: string;
  status: PreprocessorStatus;
  durationMs: number;
  /** The output as text (status `ok` only; absent when the handler returned nothing). */
  content?: string;
  /** What went wrong (other statuses). */
  error?: string;
};

/** Result of a run: `ok` is false when a `fail` preprocessor failed or the run was cancelled. */
export type PreprocessorRunResult = { ok: boolean; blocks: PreprocessorBlock[] };

/** Sends an MCP logging notification (e.g. `(p) => ctx.mcpReq.log(p.level, p.data, p.logger)`). */
export type LogNotifier = (params: LoggingMessageNotificationParams) => Promise<void> | void;

/** Options of `runPreprocessors`. */
export type RunOptions = {
  /** Cancels the run (the request's signal). */
  readonly signal?: AbortSignal;
  /** Also report each preprocessor run as an MCP logging notification. */
  readonly notify?: LogNotifier;
};

/** Timeout of a preprocessor that sets none. */
export const DEFAULT_PREPROCESSOR_TIMEOUT_MS = 10_000;

/**
 * The definitions in run order: topological by `after`, ties broken by declaration order
 * (Kahn's algorithm always taking the earliest-declared ready one). Throws on duplicate names,
 * unknown `after` names and cycles (the compiler checks these too).
 */
export function orderPreprocessors<T extends PreprocessorDefinition>(defs: readonly T[]): T[] {
  const index = new Map<string, number>();
  defs.forEach((d, i) => {
    if (index.has(d.name)) throw new Error(`Duplicate preprocessor name: ${d.name}`);
    index.set(d.name, i);
  });
  const pending = defs.map((d) => {
    const deps = new Set<number>();
    for (const a of d.after ?? []) {
      const j = index.get(a);
      if (j === undefined) throw new Error(`Preprocessor ${d.name}: "after" names unknown preprocessor ${JSON.stringify(a)}`);
      deps.add(j);
    }
    return deps;
  });
  const done = new Set<number>();
  const out: T[] = [];
  while (out.length < defs.length) {
    const next = defs.findIndex((_d, i) => !done.has(i) && [...(pending[i] ?? [])].every((j) => done.has(j)));
    if (next === -1) {
      const stuck = defs.filter((_d, i) => !done.has(i)).map((d) => d.name);
      throw new Error(`Preprocessors form a cycle through "after": ${stuck.join(', ')}`);
    }
    done.add(next);
    out.push(defs[next] as T);
  }
  return out;
}

/** The names of the preprocessors, for the server assembly (never tools; refuse them in `tools/call`). */
export function preprocessorNames(defs: readonly PreprocessorDefinition[]): ReadonlySet<string> {
  return new Set(defs.map((d) => d.name));
}

/** Converts a handler's return value to block content (module comment). */
function toContent(value: unknown): { content?: string; error?: string } {
  if (value === undefined || value === null) return {};
  if (typeof value === 'string') return { content: value };
  const blocks: unknown = (value as { content?: unknown }).content;
  if (typeof value === 'object' && Array.isArray(blocks)) {
    const text = blocks
      .map((b: unknown) =>
        typeof b === 'object' && b !== null && (b as { type?: unknown }).type === 'text' ? String((b as { text?: unknown }).text ?? '') : JSON.stringify(b),
      )
      .join('\n');
    return (value as { isError?: unknown }).isError === true ? { error: text || 'the preprocessor reported an error' } : { content: text };
  }
  const json = JSON.stringify(value);
  return json === undefined ? {} : { content: json };
}

class PreprocessorTimeout extends Error {}

/** Runs one preprocessor with its timeout, linked to the run's signal. */
async function runOne(def: PreprocessorDefinition, input: string, outer: AbortSignal | undefined): Promise<PreprocessorBlock> {
  const started = performance.now();
  const block = (status: PreprocessorStatus, extra: { content?: string; error?: string }): PreprocessorBlock => ({
    name: def.name,
    status,
    durationMs: Math.round(performance.now() - started),
    ...extra,
  });
  if (outer?.aborted) return block('skipped', { error: 'the run was cancelled' });
  const timeoutMs = def.timeoutMs ?? DEFAULT_PREPROCESSOR_TIMEOUT_MS;
  const controller = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  let onAbort: (() => void) | undefined;
  const cutOff = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => {
      const err = new PreprocessorTimeout(`timed out after ${timeoutMs} ms`);
      controller.abort(err);
      reject(err);
    }, timeoutMs);
    onAbort = () => {
      controller.abort(outer?.reason);
      reject(new Error('the run was cancelled'));
    };
    outer?.addEventListener('abort', onAbort, { once: true });
  });
  const ctx: PreprocessorContext = { signal: controller.signal, log: (level, message, data) => log(level, `preprocessor ${def.name}: ${message}`, data) };
  try {
    const work = Promise.resolve().then(() => def.handler({ input }, ctx));
    work.catch(() => undefined); // a late failure after a cut-off must not go unhandled
    const value: unknown = await Promise.race([work, cutOff]);
    const out = toContent(value);
    return out.error !== undefined ? block('error', out) : block('ok', out);
  } catch (err) {
    if (err instanceof PreprocessorTimeout) return block('timeout', { error: err.message });
    if (outer?.aborted) return block('skipped', { error: 'the run was cancelled' });
    return block('error', { error: errorMessage(err) });
  } finally {
    clearTimeout(timer);
    if (onAbort) outer?.removeEventListener('abort', onAbort);
  }
}

/** Runs the preprocessors (module comment). Never throws for handler failures; throws on a bad `after` graph. */
export async function runPreprocessors(defs: readonly PreprocessorDefinition[], input: string, opts: RunOptions = {}): Promise<PreprocessorRunResult> {
  const blocks: PreprocessorBlock[] = [];
  let ok = true;
  for (const def of orderPreprocessors(defs)) {
    const b = await runOne(def, input, opts.signal);
    blocks.push(b);
    const data = {
      preprocessor: def.name,
      status: b.status,
      durationMs: b.durationMs,
      contentChars: b.content?.length ?? 0,
      ...(b.error !== undefined ? { error: b.error } : {}),
    };
    log('debug', `preprocessor ${def.name}: ${b.status} in ${b.durationMs} ms`, data);
    if (opts.notify) {
      try {
        await opts.notify({ level: 'debug', logger: 'preprocessors', data });
      } catch (err) {
        log('debug', 'preprocessors: cannot send a logging notification', err);
      }
    }
    if (b.status === 'skipped' || (b.status !== 'ok' && def.onError === 'fail')) {
      ok = false;
      break;
    }
  }
  return { ok, blocks };
}
