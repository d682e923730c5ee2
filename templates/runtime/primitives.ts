/**
 * Shapes shared by the runtime modules that serve prompts, resources, resource templates and
 * extra tools, and by concern filtering, which decides which of them a session sees.
 * This file is copied verbatim into every generated project.
 */
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import type { ServerNotification, ServerRequest } from '@modelcontextprotocol/sdk/types.js';

/**
 * The kinds of primitive concern mappings apply to. Ids are tool names, prompt names, resource
 * URIs and resource URI templates respectively.
 */
export type PrimitiveKind = 'tools' | 'prompts' | 'resources' | 'resourceTemplates';

/** Every primitive kind, in a fixed order. */
export const PRIMITIVE_KINDS: readonly PrimitiveKind[] = ['tools', 'prompts', 'resources', 'resourceTemplates'];

/** What the SDK passes to a request handler of a low-level `Server` (signal, `_meta`, session...). */
export type RequestExtra = RequestHandlerExtra<ServerRequest, ServerNotification>;

/**
 * Decides what a session may see and call. `installConcerns` returns one; `installPrompts` and
 * `installResources` accept one, and the `tools/list` / `tools/call` handlers should use it too.
 */
export interface PrimitiveGate {
  /**
   * Whether the primitive appears in list results for the request described by `extra` (its
   * `_meta` may carry per-request preferences). Throws an `McpError` (-32602) when those
   * per-request preferences are invalid.
   */
  visible(kind: PrimitiveKind, id: string, extra?: RequestExtra): boolean;
  /**
   * Throws an `McpError` (-32602) when the primitive may not be used (called, got, read) in
   * this request; returns normally otherwise. Without enforcement it never throws for a
   * hidden primitive.
   */
  assertAllowed(kind: PrimitiveKind, id: string, extra?: RequestExtra): void;
  /** Returns the list entry to publish for the primitive (e.g. with `_meta.concerns` added). */
  decorate<T extends object>(kind: PrimitiveKind, id: string, item: T): T;
}

/** A gate that shows and allows everything and changes nothing. */
export const OPEN_GATE: PrimitiveGate = {
  visible: () => true,
  assertAllowed: () => undefined,
  decorate: (_kind, _id, item) => item,
};

/** Error message of an unknown error value. */
export function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
