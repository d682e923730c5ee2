/**
 * The MCP side of preprocessors (see preprocessors.ts): the `preprocessors/list` and
 * `preprocessors/run` methods, the `capabilities.experimental.preprocessors` entry, and the
 * `with_context` prompt for hosts that speak only standard MCP.
 *
 * `with_context` (argument `input`, required) returns one user message per context block, in
 * run order, then the user input as the last user message. Block messages read
 *   `[preprocessor <name>] <content>`             (status ok; `(no output)` when it returned nothing)
 *   `[preprocessor <name>: <status>] <error>`      (error, timeout, skipped)
 * Durations are left out, so the messages depend only on what the preprocessors return. Nothing
 * is stored. When a preprocessor with `onError: fail` fails, `prompts/get` fails with -32603.
 *
 * Logging notifications of runs (level `debug`, logger `preprocessors`) go through the request's
 * `ctx.mcpReq.log`, related to the request being served, in both eras. The SDK sends them only
 * when the server declares the `logging` capability, and only as far as the client's level lets
 * debug through: legacy era, the session's `logging/setLevel` level (none set ⇒ all are sent);
 * modern era (2026-07-28, no `logging/setLevel`), the request's
 * `_meta["io.modelcontextprotocol/logLevel"]` (absent ⇒ none are sent).
 *
 * This file is copied verbatim into every generated project.
 */

import type { GetPromptResult, Server, ServerContext } from '@modelcontextprotocol/server';
import { ProtocolError, ProtocolErrorCode } from '@modelcontextprotocol/server';
import * as z from 'zod/v4';
import type { PromptDefinition } from '../primitives/prompts.js';
import type { LogNotifier, PreprocessorBlock, PreprocessorDefinition } from './preprocessors.js';
import { orderPreprocessors, runPreprocessors } from './preprocessors.js';

/** The custom JSON-RPC methods. */
export const PREPROCESSOR_METHODS = ['preprocessors/list', 'preprocessors/run'] as const;

/** Name of the prompt that returns the context blocks followed by the input. */
export const WITH_CONTEXT_PROMPT = 'with_context';

/** What the server publishes under `capabilities.experimental.preprocessors`. */
export type PreprocessorCapability = {
  methods: string[];
  /** Names in run order. */
  preprocessors: string[];
  /** The `with_context` prompt's name, when the server serves it. */
  prompt?: string;
};

/** One `preprocessors/list` entry. */
export type PreprocessorListing = { name: string; description?: string; after: string[]; order: number; timeoutMs?: number; onError: 'skip' | 'fail' };

/** The value for `capabilities.experimental.preprocessors`; `withContext: false` when the prompt is not served. Throws on a bad `after` graph. */
export function preprocessorCapability(defs: readonly PreprocessorDefinition[], withContext = true): PreprocessorCapability {
  const out: PreprocessorCapability = { methods: [...PREPROCESSOR_METHODS], preprocessors: orderPreprocessors(defs).map((d) => d.name) };
  if (withContext) out.prompt = WITH_CONTEXT_PROMPT;
  return out;
}

/** The `preprocessors/list` entries, in run order. */
export function listPreprocessors(defs: readonly PreprocessorDefinition[]): PreprocessorListing[] {
  return orderPreprocessors(defs).map((d, order) => {
    const entry: PreprocessorListing = { name: d.name, after: [...(d.after ?? [])], order, onError: d.onError ?? 'skip' };
    if (d.description !== undefined) entry.description = d.description;
    if (d.timeoutMs !== undefined) entry.timeoutMs = d.timeoutMs;
    return entry;
  });
}

/** Options of `installPreprocessors`. */
export type InstallPreprocessorsOptions = {
  /** Send a logging notification per preprocessor run (default true; needs the `logging` capability, see the module comment). */
  readonly notify?: boolean;
};

/** Params of both methods: any object (`input` is checked by hand, for a clear message). */
const LooseParams = z.looseObject({}).optional();

/** The notifier for one request: logging notifications related to it (`ctx.mcpReq.log`, both eras). */
export function notifierFor(ctx: ServerContext): LogNotifier {
  return (params) => ctx.mcpReq.log(params.level, params.data, params.logger);
}

/**
 * Registers `preprocessors/list` and `preprocessors/run` on `server` (a v2 SDK `Server`, either
 * era: the handlers keep no state). `run` takes
 * `{ input: string }` (anything else ⇒ JSON-RPC -32602) and answers `{ ok, blocks }`.
 * Throws at once on duplicate names, unknown `after` names or cycles.
 */
export function installPreprocessors(server: Server, defs: readonly PreprocessorDefinition[], opts: InstallPreprocessorsOptions = {}): void {
  const listing = listPreprocessors(defs);
  server.setRequestHandler('preprocessors/list', { params: LooseParams }, () => ({ preprocessors: listing }));
  server.setRequestHandler('preprocessors/run', { params: LooseParams }, async (params, ctx) => {
    const input: unknown = params?.input;
    if (typeof input !== 'string') throw new ProtocolError(ProtocolErrorCode.InvalidParams, 'preprocessors/run needs params.input, a string (the user input)');
    const run = await runPreprocessors(defs, input, { signal: ctx.mcpReq.signal, ...(opts.notify === false ? {} : { notify: notifierFor(ctx) }) });
    return { ok: run.ok, blocks: run.blocks };
  });
}

/** The message text of one context block (format in the module comment). */
export function blockMessage(block: PreprocessorBlock): string {
  if (block.status === 'ok') return `[preprocessor ${block.name}] ${block.content ?? '(no output)'}`;
  return `[preprocessor ${block.name}: ${block.status}] ${block.error ?? ''}`.trimEnd();
}

/** Options of `withContextPrompt`. */
export type WithContextOptions = {
  /** Send a logging notification per preprocessor run (default true; as for `installPreprocessors`). */
  readonly notify?: boolean;
  /** Ignored (v1 leftover: notifications now go through the request's `ctx`). */
  readonly server?: Server;
};

/** The `with_context` prompt (module comment), for `installPrompts`. Throws on a bad `after` graph. */
export function withContextPrompt(defs: readonly PreprocessorDefinition[], opts: WithContextOptions = {}): PromptDefinition {
  orderPreprocessors(defs);
  return {
    name: WITH_CONTEXT_PROMPT,
    title: 'With context',
    description: "Runs this server's preprocessors on your input and returns their context, followed by your input.",
    arguments: [{ name: 'input', description: 'The user input (prompt) to gather context for.', required: true }],
    handler: async (args, ctx): Promise<GetPromptResult> => {
      const input = args.input ?? '';
      const run = await runPreprocessors(defs, input, { signal: ctx.mcpReq.signal, ...(opts.notify === false ? {} : { notify: notifierFor(ctx) }) });
      if (!run.ok) {
        const last = run.blocks[run.blocks.length - 1];
        throw new ProtocolError(
          ProtocolErrorCode.InternalError,
          `Preprocessor ${last?.name ?? '?'} ${last?.status ?? 'failed'}${last?.error ? `: ${last.error}` : ''}`,
        );
      }
      const messages: GetPromptResult['messages'] = run.blocks.map((b) => ({ role: 'user', content: { type: 'text', text: blockMessage(b) } }));
      messages.push({ role: 'user', content: { type: 'text', text: input } });
      return { description: `Context from ${run.blocks.length} preprocessor${run.blocks.length === 1 ? '' : 's'}, then the input`, messages };
    },
  };
}
