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
 * Logging notifications of runs go through `server.sendLoggingMessage`, which sends them only
 * when the server declares the `logging` capability (and the session's level lets debug through).
 *
 * This file is copied verbatim into every generated project.
 */
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import type { GetPromptResult } from '@modelcontextprotocol/sdk/types.js';
import * as z from 'zod/v4';
import { orderPreprocessors, runPreprocessors } from './preprocessors.js';
import type { LogNotifier, PreprocessorBlock, PreprocessorDefinition } from './preprocessors.js';
import type { RequestExtra } from './primitives.js';
import type { PromptDefinition } from './prompts.js';

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
  /** Send a logging notification per preprocessor run (default true; needs the `logging` capability). */
  readonly notify?: boolean;
};

const LooseParams = z.looseObject({}).optional();
const ListRequest = z.object({ method: z.literal('preprocessors/list'), params: LooseParams });
const RunRequest = z.object({ method: z.literal('preprocessors/run'), params: LooseParams });

/** The notifier for one request: logging notifications to the requesting session. */
function notifierFor(server: Server, extra: RequestExtra): LogNotifier {
  return (params) => server.sendLoggingMessage(params, extra.sessionId);
}

/**
 * Registers `preprocessors/list` and `preprocessors/run` on `server`. `run` takes
 * `{ input: string }` (anything else ⇒ JSON-RPC -32602) and answers `{ ok, blocks }`.
 * Throws at once on duplicate names, unknown `after` names or cycles.
 */
export function installPreprocessors(server: Server, defs: readonly PreprocessorDefinition[], opts: InstallPreprocessorsOptions = {}): void {
  const listing = listPreprocessors(defs);
  server.setRequestHandler(ListRequest, () => ({ preprocessors: listing }));
  server.setRequestHandler(RunRequest, async (request, extra) => {
    const input: unknown = request.params?.input;
    if (typeof input !== 'string') throw new McpError(ErrorCode.InvalidParams, 'preprocessors/run needs params.input, a string (the user input)');
    const run = await runPreprocessors(defs, input, { signal: extra.signal, ...(opts.notify === false ? {} : { notify: notifierFor(server, extra) }) });
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
  /** The session's server, to send logging notifications of the run (none without it). */
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
    handler: async (args, extra): Promise<GetPromptResult> => {
      const input = args.input ?? '';
      const run = await runPreprocessors(defs, input, { signal: extra.signal, ...(opts.server ? { notify: notifierFor(opts.server, extra) } : {}) });
      if (!run.ok) {
        const last = run.blocks[run.blocks.length - 1];
        throw new McpError(ErrorCode.InternalError, `Preprocessor ${last?.name ?? '?'} ${last?.status ?? 'failed'}${last?.error ? `: ${last.error}` : ''}`);
      }
      const messages: GetPromptResult['messages'] = run.blocks.map((b) => ({ role: 'user', content: { type: 'text', text: blockMessage(b) } }));
      messages.push({ role: 'user', content: { type: 'text', text: input } });
      return { description: `Context from ${run.blocks.length} preprocessor${run.blocks.length === 1 ? '' : 's'}, then the input`, messages };
    },
  };
}
