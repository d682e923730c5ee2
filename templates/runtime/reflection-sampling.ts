/**
 * Justification checking and the server-side way of obtaining one (the host flow is the other):
 * asking the client's model through MCP sampling (`sampling/createMessage`), which works over
 * stdio and stateful Streamable HTTP when the client advertised `capabilities.sampling`.
 *
 * This file is copied verbatim into every generated project.
 */
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { CreateMessageRequest, RequestId, SamplingMessage } from '@modelcontextprotocol/sdk/types.js';
import type { JsonSchema, OperationTool } from './types.js';
import { embedJustificationSchema } from './surface.js';
import { validateArguments } from './validate.js';

export { DEFAULT_JUSTIFICATION_SCHEMA, embedJustificationSchema } from './surface.js';

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
      return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
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

/** Settings of one sampling exchange. */
export type SamplingRequest = {
  /** The rendered gate prompt. */
  readonly promptText: string;
  readonly schema: JsonSchema;
  readonly check: JustificationCheck;
  readonly signal: AbortSignal;
  /** The tools/call request this runs inside (ties the request to it on Streamable HTTP). */
  readonly relatedRequestId?: RequestId;
  /** Default 800. */
  readonly maxTokens?: number;
  /** Per-request timeout in ms (SDK default 60 s when unset). */
  readonly timeoutMs?: number;
};

/** Outcome: a valid justification, or the problems of the last reply. */
export type SamplingOutcome = { readonly ok: true; readonly justification: Record<string, unknown> } | { readonly ok: false; readonly problems: readonly string[] };

/** The system prompt sent with every justification request. */
export const SAMPLING_SYSTEM_PROMPT =
  'You write short, honest justifications for consequential tool calls. Reply with exactly one JSON object and nothing else: no prose, no Markdown.';

/** Problems of one reply text: extraction, then schema validation. */
function judge(text: string | undefined, check: JustificationCheck): { value?: Record<string, unknown>; problems: string[] } {
  if (text === undefined) return { problems: ['justification: the reply contained no text'] };
  const value = extractJsonObject(text);
  if (value === undefined) return { problems: ['justification: the reply contained no JSON object'] };
  return { value, problems: check(value) };
}

/**
 * Asks the client's model for a justification: one request, and if the reply is not a valid
 * justification, one retry that quotes the reply and lists its problems. Errors of the sampling
 * request itself (client refused, timeout, cancelled) are thrown.
 */
export async function sampleJustification(server: Server, req: SamplingRequest): Promise<SamplingOutcome> {
  const first: SamplingMessage = {
    role: 'user',
    content: { type: 'text', text: `${req.promptText}\n\nAnswer with only a JSON object that matches this JSON Schema:\n${JSON.stringify(req.schema)}` },
  };
  const messages: SamplingMessage[] = [first];
  let problems: string[] = [];
  for (let attempt = 0; attempt < 2; attempt++) {
    const params: CreateMessageRequest['params'] = { messages: [...messages], systemPrompt: SAMPLING_SYSTEM_PROMPT, maxTokens: req.maxTokens ?? 800, includeContext: 'none' };
    const options: { signal: AbortSignal; relatedRequestId?: RequestId; timeout?: number } = { signal: req.signal };
    if (req.relatedRequestId !== undefined) options.relatedRequestId = req.relatedRequestId;
    if (req.timeoutMs !== undefined) options.timeout = req.timeoutMs;
    const reply = await server.createMessage(params, options);
    const text = reply.content.type === 'text' ? reply.content.text : undefined;
    const verdict = judge(text, req.check);
    if (verdict.value !== undefined && verdict.problems.length === 0) return { ok: true, justification: verdict.value };
    problems = verdict.problems;
    messages.push({ role: 'assistant', content: { type: 'text', text: text ?? `(${reply.content.type} content)` } });
    messages.push({
      role: 'user',
      content: { type: 'text', text: `That reply is not a valid justification:\n${problems.map((p) => `- ${p}`).join('\n')}\nReply again with only the corrected JSON object.` },
    });
  }
  return { ok: false, problems };
}
