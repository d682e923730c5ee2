/**
 * Configuration types of the reflection gate (reflection.ts) and the `persist_justification`
 * tool descriptor.
 *
 * This file is copied verbatim into every generated project.
 */
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { CallToolResult, RequestId } from '@modelcontextprotocol/sdk/types.js';
import type { JustificationStoreOptions } from './reflection-store.js';
import type { JsonSchema } from './types.js';

/** `auto`: sampling when the client supports it, else the host flow; `sampling` / `host`: only that. */
export type ReflectionMode = 'auto' | 'sampling' | 'host';
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
  /** Description of the prompt in `prompts/list`. */
  readonly description?: string;
};

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
};

/** What `check` needs of the request it runs in. */
export type GateContext = {
  /** The session's low-level server (client capabilities, `createMessage`). */
  readonly server: Server;
  readonly signal: AbortSignal;
  /** Id of the tools/call request (`extra.requestId`), to tie sampling requests to it. */
  readonly requestId?: RequestId;
};

/** `ok`: run the tool; otherwise return `result` (an `isError` hint or failure) instead. */
export type GateOutcome = { readonly ok: true } | { readonly ok: false; readonly result: CallToolResult };

/** The structured hint of a miss (host flow). */
export type GateHint = { prompt: string; prompt_args: Record<string, string>; hash: string; domain: string; remaining: number };

export { PERSIST_TOOL, PERSIST_TOOL_NAME, persistToolFor } from './surface.js';
