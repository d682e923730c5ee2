/**
 * Per-tool OAuth scopes: the scopes an operation's OpenAPI `security` requirement lists for the
 * API description's oauth2/openIdConnect scheme are the scopes an MCP access token must carry to
 * see and call the tool. They apply to OAuth access tokens only (oauth-resource.ts marks them with
 * `extra.iss`): static client tokens and stdio are not scoped.
 *
 * - {@link scopeGate}: `tools/list` (and search) shows a token only the tools its scopes allow.
 * - {@link missingScopes}: http.ts answers a `tools/call` of a tool whose scopes the token lacks
 *   `403 insufficient_scope` before the MCP transport sees it, so that the host can step up.
 */
import type { AuthInfo, ServerContext } from '@modelcontextprotocol/server';
import { OPEN_GATE } from './primitives.js';
import type { PrimitiveGate } from './primitives.js';

/** A tool as far as scopes go (the generated `OperationTool` fits). */
export type ScopedTool = { readonly name: string; readonly scopes?: readonly string[] };

/** Whether `auth` is an OAuth access token's (not a static client token's). */
export function isOAuthToken(auth: AuthInfo | undefined): auth is AuthInfo {
  return auth !== undefined && typeof auth.extra?.iss === 'string';
}

/** The scopes of `required` that `auth` lacks: none when it has them all, or is no OAuth token. */
export function missingScopes(required: readonly string[] | undefined, auth: AuthInfo | undefined): string[] {
  if (required === undefined || required.length === 0 || !isOAuthToken(auth)) return [];
  const held = new Set(auth.scopes);
  return required.filter((s) => !held.has(s));
}

/** The first `tools/call` of a JSON-RPC body (one message or a batch) whose tool needs scopes `auth` lacks: the tool, what it needs, what is missing. */
export function scopeShortfall(body: unknown, needs: ReadonlyMap<string, readonly string[]>, auth: AuthInfo | undefined): { tool: string; needs: readonly string[]; missing: string[] } | undefined {
  for (const message of Array.isArray(body) ? body : [body]) {
    const m = message as { method?: unknown; params?: { name?: unknown } } | null;
    if (typeof m !== 'object' || m === null || m.method !== 'tools/call' || typeof m.params?.name !== 'string') continue;
    const tool = m.params.name;
    const missing = missingScopes(needs.get(tool), auth);
    if (missing.length > 0) return { tool, needs: needs.get(tool)!, missing };
  }
  return undefined;
}

/** Tool name ⇒ the scopes it needs, for the tools that need some. */
export function toolScopes(tools: readonly ScopedTool[]): Map<string, readonly string[]> {
  return new Map(tools.flatMap((t) => (t.scopes !== undefined && t.scopes.length > 0 ? [[t.name, t.scopes] as const] : [])));
}

/** Every scope some tool needs, sorted: what the server advertises when `<PREFIX>_OAUTH_SCOPES` is unset. */
export function allScopes(tools: readonly ScopedTool[]): string[] {
  return [...new Set(tools.flatMap((t) => t.scopes ?? []))].sort();
}

/** The gate hiding from an OAuth token the tools whose scopes it lacks; open when no tool needs a scope. */
export function scopeGate(tools: readonly ScopedTool[]): PrimitiveGate {
  const needs = toolScopes(tools);
  if (needs.size === 0) return OPEN_GATE;
  const allowed = (id: string, extra?: ServerContext): boolean => missingScopes(needs.get(id), extra?.http?.authInfo).length === 0;
  return {
    visible: (kind, id, extra) => kind !== 'tools' || allowed(id, extra),
    // calls are refused with 403 by http.ts before they get here
    assertAllowed: () => undefined,
    decorate: (_kind, _id, item) => item,
  };
}
