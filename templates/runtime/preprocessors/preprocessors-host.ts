/**
 * Host-side helper for preprocessors: for a HOST (chat application, agent) built on
 * an MCP SDK `Client`, run the server's preprocessors before each user prompt and inject their
 * output as context. This module depends only on zod (v4): the client is typed structurally
 * (`PreprocessorHostClient`), so the v1 SDK `Client` (`@modelcontextprotocol/sdk`) and the v2
 * `Client` (`@modelcontextprotocol/client`, either protocol era) both fit; copy it into your host.
 *
 * ```ts
 * import { runPreprocessors, toSystemContext } from './preprocessors-host.js';
 *
 * const history: Message[] = [];                 // what the conversation keeps
 * async function turn(userInput: string) {
 *   const { blocks } = await runPreprocessors(client, userInput);
 *   const context = toSystemContext(blocks);     // '' when there is nothing to add
 *   const reply = await llm.chat({
 *     system: context ? `${baseSystemPrompt}\n\n${context}` : baseSystemPrompt,  // this turn only
 *     messages: [...history, { role: 'user', content: userInput }],
 *   });
 *   history.push({ role: 'user', content: userInput }, { role: 'assistant', content: reply });
 * }
 * ```
 *
 * Injecting without persisting: build the context fresh for every turn and pass it only in the
 * request for that turn (the system prompt, or a transient message placed just before the user
 * message); store only the user's own input and the model's reply in the history. The next turn
 * runs the preprocessors again, so stale context never accumulates and never counts twice.
 *
 * Transport: `preprocessors/run` when the server advertises `capabilities.experimental.preprocessors`;
 * otherwise the standard `with_context` prompt if the server lists it (its messages are parsed
 * back into blocks); otherwise no blocks (`via: 'none'`).
 */
import * as z from 'zod/v4';

const BlockSchema = z.object({
  name: z.string(),
  status: z.enum(['ok', 'error', 'timeout', 'skipped']),
  durationMs: z.number().optional(),
  content: z.string().optional(),
  error: z.string().optional(),
});

const RunResultSchema = z.looseObject({ ok: z.boolean(), blocks: z.array(BlockSchema) });

/** Request options both SDK clients accept (a subset). */
export type HostRequestOptions = { signal?: AbortSignal; timeout?: number };

/**
 * What this helper uses of an MCP client: the v1 `Client` and the v2 `Client` both have it.
 * `request` is called with a zod v4 result schema (a Standard Schema, which both accept).
 */
export interface PreprocessorHostClient {
  getServerCapabilities(): { experimental?: { [key: string]: unknown }; prompts?: unknown } | undefined;
  request(request: { method: string; params?: Record<string, unknown> }, resultSchema: typeof RunResultSchema, options?: HostRequestOptions): Promise<unknown>;
  listPrompts(params?: undefined, options?: HostRequestOptions): Promise<{ prompts: ReadonlyArray<{ name: string }> }>;
  getPrompt(
    params: { name: string; arguments?: Record<string, string> },
    options?: HostRequestOptions,
  ): Promise<{ messages: ReadonlyArray<{ content: { type: string; text?: string } }> }>;
}

/** One context block returned by a server's preprocessor (`durationMs` is absent via `with_context`). */
export type HostPreprocessorBlock = z.infer<typeof BlockSchema>;

/** What `runPreprocessors` returns. */
export type HostPreprocessorResult = {
  /** False when a preprocessor with `onError: fail` failed (the server's verdict). */
  ok: boolean;
  blocks: HostPreprocessorBlock[];
  /** How the blocks were obtained. */
  via: 'preprocessors/run' | 'with_context' | 'none';
};

const WITH_CONTEXT = 'with_context';
const BLOCK_RE = /^\[preprocessor ([A-Za-z0-9_.-]+)(?:: (error|timeout|skipped))?\](?: ([\s\S]*))?$/;

/** Parses `with_context` messages back into blocks: all but the last message (the input). */
function parseWithContext(messages: readonly { content: { type: string; text?: string } }[]): HostPreprocessorBlock[] {
  const blocks: HostPreprocessorBlock[] = [];
  for (const m of messages.slice(0, -1)) {
    const match = m.content.type === 'text' ? BLOCK_RE.exec(m.content.text ?? '') : null;
    if (!match) continue;
    const [, name = '', status, body] = match;
    if (status === 'error' || status === 'timeout' || status === 'skipped') blocks.push({ name, status, ...(body ? { error: body } : {}) });
    else blocks.push({ name, status: 'ok', ...(body !== undefined && body !== '(no output)' ? { content: body } : {}) });
  }
  return blocks;
}

/**
 * Runs the server's preprocessors on `input` through `client` (connected), see the module
 * comment. Protocol errors (e.g. a `fail` preprocessor failing inside `with_context`) are thrown.
 */
export async function runPreprocessors(client: PreprocessorHostClient, input: string, options?: HostRequestOptions): Promise<HostPreprocessorResult> {
  if (client.getServerCapabilities()?.experimental?.preprocessors !== undefined) {
    const result = RunResultSchema.parse(await client.request({ method: 'preprocessors/run', params: { input } }, RunResultSchema, options));
    return { ok: result.ok, blocks: result.blocks, via: 'preprocessors/run' };
  }
  if (client.getServerCapabilities()?.prompts === undefined) return { ok: true, blocks: [], via: 'none' };
  const { prompts } = await client.listPrompts(undefined, options);
  if (!prompts.some((p) => p.name === WITH_CONTEXT)) return { ok: true, blocks: [], via: 'none' };
  const prompt = await client.getPrompt({ name: WITH_CONTEXT, arguments: { input } }, options);
  return { ok: true, blocks: parseWithContext(prompt.messages), via: 'with_context' };
}

/**
 * One text to inject as ephemeral context for the current turn: the content of every `ok` block
 * under a heading with its name, then a one-line note per failed block. Empty string when there
 * is nothing to inject.
 */
export function toSystemContext(blocks: readonly HostPreprocessorBlock[]): string {
  const sections = blocks.filter((b) => b.status === 'ok' && b.content !== undefined && b.content.trim() !== '').map((b) => `## ${b.name}\n${b.content ?? ''}`);
  const notes = blocks.filter((b) => b.status !== 'ok').map((b) => `- ${b.name}: ${b.status}${b.error ? ` (${b.error})` : ''}`);
  if (sections.length === 0 && notes.length === 0) return '';
  const parts = ['Context gathered for this message by preprocessors (not part of the conversation):'];
  if (sections.length > 0) parts.push(sections.join('\n\n'));
  if (notes.length > 0) parts.push(`Unavailable context:\n${notes.join('\n')}`);
  return parts.join('\n\n');
}
