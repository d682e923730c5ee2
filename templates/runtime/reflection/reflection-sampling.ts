/**
 * Justification checking and the pieces of the server-side way of obtaining one (the host flow is
 * the other): asking the client's model through MCP sampling. The request is an embedded
 * `sampling/createMessage` of an input-required result (`inputRequired.createMessage`), so the
 * same code serves both eras: modern clients answer it and retry the call; for legacy clients the
 * SDK sends a real `sampling/createMessage` and re-runs the handler (reflection.ts drives the
 * rounds; these helpers build the request and judge the reply, without I/O).
 *
 * This file is copied verbatim into every generated project.
 */
import type { CreateMessageRequestParams, CreateMessageResult, CreateMessageResultWithTools, SamplingMessage } from '@modelcontextprotocol/server';
import { isRecord } from '../core/json-shapes.js';
import { embedJustificationSchema } from '../core/surface.js';
import type { JsonSchema, OperationTool } from '../core/types.js';
import { validateArguments } from '../validation/validate.js';

export { DEFAULT_JUSTIFICATION_SCHEMA, embedJustificationSchema } from '../core/surface.js';

/** Checks a justification; returns field-level messages (`justification.confidence: must be <= 1`), `[]` when valid. */
export type JustificationCheck = (justification: unknown) => string[];

let checkers = 0;

/** A compiled checker for `schema` (compiled on first use; throws then if the schema is broken). */
export function justificationChecker(schema: JsonSchema): JustificationCheck {
  const shim: OperationTool = {
    kind: 'operation',
    name: `reflection justification #${++checkers}`,
    inputSchema: { ...embedJustificationSchema(schema), additionalProperties: true },
    http: { method: 'POST', path: '', params: [] },
  };
  return (justification) => validateArguments(shim, { justification });
}

/**
 * The first JSON object in a model reply: the content of a ```json (or bare ```) fence when one
 * parses to an object, else the first balanced `{...}` span that parses. `undefined` if none.
 */
export function extractJsonObject(text: string): Record<string, unknown> | undefined {
  const asObject = (candidate: string): Record<string, unknown> | undefined => {
    try {
      const v: unknown = JSON.parse(candidate);
      return isRecord(v) ? v : undefined;
    } catch {
      return undefined;
    }
  };
  for (const m of text.matchAll(/```[ \t]*(?:json|JSON)?[ \t]*\r?\n([\s\S]*?)```/g)) {
    const v = asObject((m[1] ?? '').trim());
    if (v !== undefined) return v;
  }
  for (let start = text.indexOf('{'); start !== -1; start = text.indexOf('{', start + 1)) {
    let depth = 0;
    let inString = false;
    for (let i = start; i < text.length; i++) {
      const c = text[i];
      if (inString) {
        if (c === '\\') i++;
        else if (c === '"') inString = false;
      } else if (c === '"') inString = true;
      else if (c === '{') depth++;
      else if (c === '}' && --depth === 0) {
        const v = asObject(text.slice(start, i + 1));
        if (v !== undefined) return v;
        break;
      }
    }
  }
  return undefined;
}

/** The system prompt sent with every justification request. */
export const SAMPLING_SYSTEM_PROMPT =
  'You write short, honest justifications for consequential tool calls. Reply with exactly one JSON object and nothing else: no prose, no Markdown.';

/** A previous, invalid reply that the retry quotes. */
export type PreviousReply = { readonly text: string; readonly problems: readonly string[] };

/**
 * The `sampling/createMessage` params asking for a justification of `promptText` (the rendered
 * gate prompt): the prompt and the schema; for the retry (`previous` given), also the invalid
 * reply and its problems, so the model can correct itself.
 */
export function justificationRequest(
  promptText: string,
  schema: JsonSchema,
  options: { maxTokens?: number; previous?: PreviousReply } = {},
): CreateMessageRequestParams {
  const messages: SamplingMessage[] = [
    {
      role: 'user',
      content: { type: 'text', text: `${promptText}\n\nAnswer with only a JSON object that matches this JSON Schema:\n${JSON.stringify(schema)}` },
    },
  ];
  if (options.previous !== undefined) {
    messages.push({ role: 'assistant', content: { type: 'text', text: options.previous.text } });
    messages.push({
      role: 'user',
      content: {
        type: 'text',
        text: `That reply is not a valid justification:\n${options.previous.problems.map((p) => `- ${p}`).join('\n')}\nReply again with only the corrected JSON object.`,
      },
    });
  }
  return { messages, systemPrompt: SAMPLING_SYSTEM_PROMPT, maxTokens: options.maxTokens ?? 800, includeContext: 'none' };
}

/** Verdict on one sampling reply: a valid justification, or the problems and the reply text (for the retry). */
export type ReplyVerdict =
  | { readonly ok: true; readonly justification: Record<string, unknown> }
  | { readonly ok: false; readonly problems: string[]; readonly text: string };

/** Text of a sampling result's content (one block or an array); `undefined` when it has no text block. */
function replyText(result: CreateMessageResult | CreateMessageResultWithTools): string | undefined {
  const content: unknown = (result as { content?: unknown }).content;
  const blocks: unknown[] = Array.isArray(content) ? content : [content];
  const texts = blocks.filter((b) => isRecord(b) && b.type === 'text' && typeof b.text === 'string').map((b) => (b as { text: string }).text);
  return texts.length > 0 ? texts.join('\n') : undefined;
}

/** Judges a sampling reply (untrusted client data): JSON extraction, then schema validation. */
export function judgeReply(result: CreateMessageResult | CreateMessageResultWithTools, check: JustificationCheck): ReplyVerdict {
  const text = replyText(result);
  if (text === undefined) {
    const kind = (result as { content?: { type?: unknown } }).content?.type;
    return { ok: false, problems: ['justification: the reply contained no text'], text: `(${typeof kind === 'string' ? kind : 'non-text'} content)` };
  }
  const value = extractJsonObject(text);
  if (value === undefined) return { ok: false, problems: ['justification: the reply contained no JSON object'], text };
  const problems = check(value);
  return problems.length === 0 ? { ok: true, justification: value } : { ok: false, problems, text };
}
