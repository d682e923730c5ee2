/**
 * Configuration types of the reflection gate (reflection.ts) and the `persist_justification`
 * tool descriptor.
 *
 * This file is copied verbatim into every generated project.
 */
import type { CallToolResult, InputRequiredResult, Server, ServerContext } from '@modelcontextprotocol/server';
import type { ToolEntry } from '../core/surface.js';
import { persistToolFor as surfacePersistToolFor } from '../core/surface.js';
import type { JsonSchema } from '../core/types.js';
import type { JustificationStoreOptions, JustificationsFactory } from './reflection-store.js';

/** `auto`: sampling when the client supports it, else the host flow; `sampling` / `host`: only that; `elicit`: the user answers a form when the client can elicit, else as `auto`. */
export type ReflectionMode = 'auto' | 'sampling' | 'host' | 'elicit';
/** `domain`: a justification is shared by every tool of the domain; `tool`: keyed per tool too. */
export type ReflectionScope = 'domain' | 'tool';

/** One gate of a tool. */
export type GateDefinition = {
  readonly domain: string;
  /** Name of the prompt `prompts/get` serves for this gate. */
  readonly prompt: string;
  /** The prompt's template text (Handlebars over the prompt arguments). */
  readonly template: string;
  /** Prompt argument ⇒ Handlebars template over the TOOL's arguments, e.g. `{{petId}}`. */
  readonly promptArgs?: Readonly<Record<string, string>>;
  /** Overrides the config's `scope` for this gate. */
  readonly scope?: ReflectionScope;
  /** Overrides the config's `mode` for this gate. */
  readonly mode?: ReflectionMode;
  /** Description of the prompt in `prompts/list`. */
  readonly description?: string;
};

/** What the gate redacts from a justification before storing it. */
export type JustificationRedaction = { readonly fields: readonly string[]; readonly secrets: () => readonly string[] };

/** Configuration of `ReflectionGate` (from the manifest). */
export type ReflectionConfig = {
  /** Store directory, relative to the working directory; manifest default `.preflight/justifications`. */
  readonly storeDir: string;
  /** Default: `DEFAULT_JUSTIFICATION_SCHEMA`. */
  readonly justificationSchema?: JsonSchema;
  /** Default `auto`. */
  readonly mode?: ReflectionMode;
  /** Default `domain`. */
  readonly scope?: ReflectionScope;
  /** Declared domains; gates and `persist_justification` accept only these. */
  readonly domains: readonly string[];
  /** Tool name ⇒ its gates, satisfied in order. */
  readonly gates: Readonly<Record<string, readonly GateDefinition[]>>;
  /** Tools that declare an `outputSchema`: their hint carries no `structuredContent` (the SDK client would check it against that schema); it stays in the text. */
  readonly toolsWithOutputSchema?: readonly string[];
  /** Sampling request settings. */
  readonly sampling?: { readonly maxTokens?: number; readonly timeoutMs?: number };
  /** Store options (size cap, test hooks). */
  readonly store?: JustificationStoreOptions;
  /** Lifetime of a host-flow hint (its signed `hash`), in ms; default 24 h (`<PREFIX>_HINT_TTL_MS` overrides). */
  readonly hintTtlMs?: number;
};

/**
 * What `ReflectionGate` is built from: the manifest's `ReflectionConfig` plus the state key
 * (state.ts `stateKey`) that signs hint hashes, so every instance with the same key accepts them.
 */
export type ReflectionGateConfig = ReflectionConfig & {
  readonly stateKey: Buffer;
  /** What a stored justification must not hold, as in the audit trail: field names (the policy's `audit.redact`) and secret values. */
  readonly redact?: JustificationRedaction;
  /** Makes the justification store instead of the file store under `storeDir` (main.ts: Redis, with `<PREFIX>_REDIS_URL`). */
  readonly makeStore?: JustificationsFactory;
};

/**
 * One logical `tools/call` as the gate sees it (the pipeline builds it on every input round).
 * The SDK re-runs the handler on each round (modern: the client retries with `inputResponses`;
 * legacy stdio / sessionful HTTP: the SDK's shim sends a real `sampling/createMessage` and re-runs
 * in process), so `state` is how one round tells the next what happened.
 */
export type GateCall = {
  /** This request's / session's server instance. */
  readonly server: Server;
  /** The SDK request context (`ctx.mcpReq.inputResponses`, `ctx.mcpReq.signal`, envelope…). */
  readonly ctx: ServerContext;
  readonly era: 'legacy' | 'modern';
  readonly signal: AbortSignal;
  /** One logical call across its input rounds. */
  readonly callId: string;
  /** JSON data kept across the input rounds of this logical call (the pipeline seals it into requestState); mutate it. */
  readonly state: Record<string, unknown>;
  /**
   * How the caller retries once the justification is stored, the last step of the gate's
   * instructions (default {@link retryDirectly}: the tool again with the same arguments); search
   * mode's `call_tool` and code mode's `execute` say their own.
   */
  readonly retry?: string;
};

/** The last step of the gate's instructions for a direct call of `tool`. */
export function retryDirectly(tool: string): string {
  return `Then call ${tool} again with the same arguments.`;
}

/** `ok`: run the tool; otherwise return `result` (an `isError` hint or failure, or an input-required round) instead. */
export type GateOutcome = { readonly ok: true } | { readonly ok: false; readonly result: CallToolResult | InputRequiredResult };

/** The structured hint of a miss (host flow). */
export type GateHint = { prompt: string; prompt_args: Record<string, string>; hash: string; domain: string; remaining: number };

export { PERSIST_TOOL, PERSIST_TOOL_NAME } from '../core/surface.js';

/**
 * The `hash` property of `persist_justification`: a signed hint (state.ts `signHint`).
 * (surface.ts's `HASH_PROPERTY` should read the same, so build-time sizes match.)
 */
export const HINT_HASH_PROPERTY = {
  type: 'string',
  pattern: '^[0-9a-f]{64}\\.[0-9]+\\.[A-Za-z0-9_-]+$',
  description: 'The `hash` from the gate hint, exactly as given.',
} as const;

/** surface.ts's `persistToolFor` with the `hash` property of a signed hint. */
export function persistToolFor(schema: JsonSchema, domains: readonly string[]): ToolEntry {
  const tool = surfacePersistToolFor(schema, domains);
  const inputSchema = tool.inputSchema as { properties?: Record<string, unknown> };
  return {
    ...tool,
    inputSchema: { ...tool.inputSchema, properties: { ...inputSchema.properties, hash: { ...HINT_HASH_PROPERTY } } } as ToolEntry['inputSchema'],
  };
}
