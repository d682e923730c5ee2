/**
 * Shapes shared by the runtime modules that serve prompts, resources, resource templates and
 * extra tools, and by concern filtering, which decides which of them a session sees.
 * This file is copied verbatim into every generated project.
 */
import type { ServerContext } from '@modelcontextprotocol/server';

/**
 * The kinds of primitive concern mappings apply to. Ids are tool names, prompt names, resource
 * URIs and resource URI templates respectively.
 */
export type PrimitiveKind = 'tools' | 'prompts' | 'resources' | 'resourceTemplates';

/** Every primitive kind, in a fixed order. */
export const PRIMITIVE_KINDS: readonly PrimitiveKind[] = ['tools', 'prompts', 'resources', 'resourceTemplates'];

/**
 * What the v2 SDK passes to a request handler of a low-level `Server` (`ctx.mcpReq._meta`,
 * `ctx.mcpReq.signal`, `ctx.mcpReq.log`, `ctx.http?.authInfo`...). The name is kept for the
 * generated handler stubs; it is the SDK's `ServerContext`.
 */
export type RequestExtra = ServerContext;

/** The request's own `_meta` (reserved `io.modelcontextprotocol/*` keys already lifted out by the SDK). */
export function requestMeta(extra: ServerContext | undefined): Record<string, unknown> | undefined {
  return extra?.mcpReq._meta as Record<string, unknown> | undefined;
}

/**
 * Decides what a session may see and call. `installConcerns` returns one; `installPrompts` and
 * `installResources` accept one, and the `tools/list` / `tools/call` handlers should use it too.
 */
export interface PrimitiveGate {
  /**
   * Whether the primitive appears in list results for the request described by `extra` (its
   * `ctx.mcpReq._meta` may carry per-request preferences). Throws a `ProtocolError` (-32602) when those
   * per-request preferences are invalid.
   */
  visible(kind: PrimitiveKind, id: string, extra?: ServerContext): boolean;
  /**
   * Throws a `ProtocolError` (`ProtocolErrorCode.InvalidParams`, -32602) when the primitive may not be used (called, got, read) in
   * this request; returns normally otherwise. Without enforcement it never throws for a
   * hidden primitive.
   */
  assertAllowed(kind: PrimitiveKind, id: string, extra?: ServerContext): void;
  /** Returns the list entry to publish for the primitive (e.g. with `_meta.concerns` added). */
  decorate<T extends object>(kind: PrimitiveKind, id: string, item: T): T;
}

/** A gate that shows and allows everything and changes nothing. */
export const OPEN_GATE: PrimitiveGate = {
  visible: () => true,
  assertAllowed: () => undefined,
  decorate: (_kind, _id, item) => item,
};

/**
 * Several gates as one (concern filtering and access control): a primitive is visible when every
 * gate shows it, allowed when every gate allows it (the first refusal is thrown), and decorated by
 * each gate in order. Open gates are left out.
 */
export function composeGates(...gates: PrimitiveGate[]): PrimitiveGate {
  const active = gates.filter((g) => g !== OPEN_GATE);
  if (active.length === 0) return OPEN_GATE;
  if (active.length === 1) return active[0]!;
  return {
    visible: (kind, id, extra) => active.every((g) => g.visible(kind, id, extra)),
    assertAllowed: (kind, id, extra) => {
      for (const g of active) g.assertAllowed(kind, id, extra);
    },
    decorate: (kind, id, item) => active.reduce((current, g) => g.decorate(kind, id, current), item),
  };
}
