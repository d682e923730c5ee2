/**
 * Per-tool OAuth scopes: the scopes an operation's OpenAPI `security` requirement lists for the
 * API description's oauth2/openIdConnect scheme are the scopes an MCP access token must carry to
 * see and call the tool; an extra tool, prompt, resource or resource template needs the
 * `scopes` of its manifest entry. They apply to OAuth access tokens only (oauth-resource.ts marks them with
 * `extra.iss`): static client tokens and stdio are not scoped.
 *
 * - {@link scopeGate}: `tools/list` (and search), `prompts/list`, `resources/list` and
 *   `resources/templates/list` show a token only what its scopes allow.
 * - {@link scopeShortfall}: http.ts answers a `tools/call`, `prompts/get`, `resources/read`,
 *   `resources/subscribe`, `subscriptions/listen` or `completion/complete` of something whose
 *   scopes the token lacks `403 insufficient_scope` before the MCP transport sees it, so that the
 *   host can step up.
 * - {@link missingScopes}: what a nested `ctx.api` call's operation needs and the token lacks
 *   (pipeline/nested-scopes.ts refuses it).
 */

import type { AuthInfo, ServerContext } from '@modelcontextprotocol/server';
import { ProtocolError, ProtocolErrorCode, UriTemplate } from '@modelcontextprotocol/server';
import type { PrimitiveGate, PrimitiveKind } from '../core/primitive-gate.js';
import { OPEN_GATE } from '../core/primitive-gate.js';

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

/** What needs scopes, by kind and id, and how a requested URI resolves (a fixed URI first, then the first matching template, as resources.ts reads). */
export type ScopeNeeds = {
  readonly byKind: ReadonlyMap<PrimitiveKind, ReadonlyMap<string, readonly string[]>>;
  readonly resourceUris: ReadonlySet<string>;
  readonly templates: ReadonlyArray<{ readonly id: string; readonly template: UriTemplate }>;
};

/** The prompts, resources and templates whose scopes count (prompts.ts / resources.ts definitions fit). */
export type ScopedPrimitives = {
  readonly prompts?: readonly { readonly name: string; readonly scopes?: readonly string[] }[];
  readonly resources?: readonly { readonly uri: string; readonly scopes?: readonly string[] }[];
  readonly templates?: readonly { readonly uriTemplate: string; readonly scopes?: readonly string[] }[];
};

/** The scope table of the tools and the manifest's prompts, resources and templates. */
export function scopeNeeds(tools: readonly ScopedTool[], primitives: ScopedPrimitives = {}): ScopeNeeds {
  const table = (items: ReadonlyArray<readonly [string, readonly string[] | undefined]>) =>
    new Map(items.flatMap(([id, scopes]) => (scopes !== undefined && scopes.length > 0 ? [[id, scopes] as const] : [])));
  const templates = primitives.templates ?? [];
  return {
    byKind: new Map<PrimitiveKind, ReadonlyMap<string, readonly string[]>>([
      ['tools', toolScopes(tools)],
      ['prompts', table((primitives.prompts ?? []).map((p) => [p.name, p.scopes]))],
      ['resources', table((primitives.resources ?? []).map((r) => [r.uri, r.scopes]))],
      ['resourceTemplates', table(templates.map((t) => [t.uriTemplate, t.scopes]))],
    ]),
    resourceUris: new Set((primitives.resources ?? []).map((r) => r.uri)),
    // templates are matched only when some template needs a scope
    templates: templates.some((t) => (t.scopes?.length ?? 0) > 0)
      ? templates.map((t) => ({ id: t.uriTemplate, template: new UriTemplate(t.uriTemplate) }))
      : [],
  };
}

/** The kind and id a `resources/read` of `uri` reads (undefined: no declared resource or template has it). */
function resolveUri(needs: ScopeNeeds, uri: string): { kind: PrimitiveKind; id: string } | undefined {
  if (needs.resourceUris.has(uri)) return { kind: 'resources', id: uri };
  const t = needs.templates.find((m) => m.template.match(uri) !== null);
  return t === undefined ? undefined : { kind: 'resourceTemplates', id: t.id };
}

/** The primitives one JSON-RPC request uses (tools/call, prompts/get, resources/read and subscribe, completion/complete, subscriptions/listen). */
function usedBy(needs: ScopeNeeds, message: unknown): Array<{ kind: PrimitiveKind; id: string }> {
  const m = message as { method?: unknown; params?: Record<string, unknown> } | null;
  if (typeof m !== 'object' || m === null || typeof m.params !== 'object' || m.params === null) return [];
  const p = m.params;
  const uri = (u: unknown) => (typeof u === 'string' ? resolveUri(needs, u) : undefined);
  const some = (...xs: Array<{ kind: PrimitiveKind; id: string } | undefined>) => xs.filter((x): x is { kind: PrimitiveKind; id: string } => x !== undefined);
  switch (m.method) {
    case 'tools/call':
      return typeof p.name === 'string' ? [{ kind: 'tools', id: p.name }] : [];
    case 'prompts/get':
      return typeof p.name === 'string' ? [{ kind: 'prompts', id: p.name }] : [];
    case 'resources/read':
    case 'resources/subscribe':
      return some(uri(p.uri));
    case 'completion/complete': {
      const ref = p.ref as { type?: unknown; name?: unknown; uri?: unknown } | undefined;
      if (ref?.type === 'ref/prompt' && typeof ref.name === 'string') return [{ kind: 'prompts', id: ref.name }];
      return ref?.type === 'ref/resource' && typeof ref.uri === 'string' ? [{ kind: 'resourceTemplates', id: ref.uri }] : [];
    }
    case 'subscriptions/listen': {
      const wanted = (p.notifications as { resourceSubscriptions?: unknown } | undefined)?.resourceSubscriptions;
      return Array.isArray(wanted) ? some(...wanted.map(uri)) : [];
    }
    default:
      return [];
  }
}

/** A primitive kind as a refusal names it. */
const KIND_NAME: Record<PrimitiveKind, string> = { tools: 'tool', prompts: 'prompt', resources: 'resource', resourceTemplates: 'resource template' };

/**
 * The first request of a JSON-RPC body (one message or a batch) using a primitive whose scopes
 * `auth` lacks: what it is (`tool findPets`, `prompt triage`, `resource docs://x`, `resource
 * template docs://{id}`), what it needs, what is missing.
 */
export function scopeShortfall(
  body: unknown,
  needs: ScopeNeeds,
  auth: AuthInfo | undefined,
): { what: string; needs: readonly string[]; missing: string[] } | undefined {
  if (!isOAuthToken(auth)) return undefined;
  for (const message of Array.isArray(body) ? body : [body]) {
    for (const { kind, id } of usedBy(needs, message)) {
      const required = needs.byKind.get(kind)?.get(id);
      const missing = missingScopes(required, auth);
      if (missing.length > 0) return { what: `${KIND_NAME[kind]} ${id}`, needs: required!, missing };
    }
  }
  return undefined;
}

/** Tool name ⇒ the scopes it needs, for the tools that need some. */
export function toolScopes(tools: readonly ScopedTool[]): Map<string, readonly string[]> {
  return new Map(tools.flatMap((t) => (t.scopes !== undefined && t.scopes.length > 0 ? [[t.name, t.scopes] as const] : [])));
}

/** Every scope some tool, prompt, resource or template needs, sorted: what the server advertises when `<PREFIX>_OAUTH_SCOPES` is unset. */
export function allScopes(needs: ScopeNeeds): string[] {
  return [...new Set([...needs.byKind.values()].flatMap((table) => [...table.values()].flat()))].sort();
}

/** The gate hiding from an OAuth token the primitives whose scopes it lacks; open when nothing needs a scope. */
export function scopeGate(needs: ScopeNeeds): PrimitiveGate {
  if ([...needs.byKind.values()].every((table) => table.size === 0)) return OPEN_GATE;
  const lacking = (kind: PrimitiveKind, id: string, extra?: ServerContext): string[] => missingScopes(needs.byKind.get(kind)?.get(id), extra?.http?.authInfo);
  return {
    visible: (kind, id, extra) => lacking(kind, id, extra).length === 0,
    // http.ts answers such requests 403 before they get here; this refuses what reaches a handler anyway
    assertAllowed: (kind, id, extra) => {
      const missing = lacking(kind, id, extra);
      if (missing.length > 0)
        throw new ProtocolError(
          ProtocolErrorCode.InvalidParams,
          `The ${KIND_NAME[kind]} ${id} needs the scope${missing.length > 1 ? 's' : ''} ${missing.join(' ')}`,
        );
    },
    decorate: (_kind, _id, item) => item,
  };
}
