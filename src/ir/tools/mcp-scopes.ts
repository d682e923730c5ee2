/**
 * Per-tool OAuth scopes for MCP clients: what an operation's OpenAPI `security`
 * requirement lists for the API description's oauth2 / openIdConnect scheme becomes the scopes an
 * MCP access token must carry to see and call the tool (runtime/oauth/oauth-scopes.ts enforces them for
 * OAuth tokens only).
 *
 * The scheme is the first oauth2/openIdConnect scheme (by name) that an included operation's
 * requirement names. An operation with an alternative that does not use it (another credential,
 * or `{}`) needs no scope; otherwise its scopes are those of the alternative naming the fewest.
 * The manifest's `scopeMap` renames API scopes to MCP scopes; `overrides.<op>.scopes` (applied in
 * build.ts) replaces a tool's list.
 */
import { type Diagnostics, escapePointerToken, type Location } from '../../core/diagnostics.js';
import { isObject } from '../../core/json.js';
import { suggest } from '../../core/suggest.js';
import type { LoadedSpec } from '../../openapi/load.js';
import type { RawOperation } from '../../openapi/operations.js';

/** Names of the spec's oauth2 / openIdConnect schemes, sorted. */
function oauthSchemes(spec: LoadedSpec, deref: (node: unknown) => unknown): Set<string> {
  const doc = spec.document;
  const container = spec.version === '2.0' ? doc.securityDefinitions : isObject(doc.components) ? doc.components.securitySchemes : undefined;
  const out = new Set<string>();
  if (!isObject(container)) return out;
  for (const [name, raw] of Object.entries(container)) {
    const node = deref(raw);
    if (isObject(node) && (node.type === 'oauth2' || node.type === 'openIdConnect')) out.add(name);
  }
  return out;
}

/** The requirement alternatives of `op` (its own `security`, else the document's), objects only. */
function alternatives(spec: LoadedSpec, op: RawOperation): Array<Record<string, unknown>> {
  const list = Array.isArray(op.node.security) ? op.node.security : spec.document.security;
  return (Array.isArray(list) ? list : []).filter(isObject);
}

/** Inputs of {@link mcpScopes}. */
export type McpScopesInput = {
  spec: LoadedSpec;
  /** The operations that become tools (or that handlers use). */
  ops: readonly RawOperation[];
  deref: (node: unknown) => unknown;
  /** The manifest's `scopeMap`: API scope ⇒ the MCP scope(s) it becomes. */
  scopeMap?: Record<string, string | string[]>;
  locateManifest: (pointer: string, opts?: { key?: boolean }) => Location;
  diagnostics: Diagnostics;
};

/** The scopes a scheme declares (`flows.*.scopes`, or Swagger 2.0's `scopes`). */
function declaredScopes(node: unknown): string[] {
  if (!isObject(node)) return [];
  const lists = isObject(node.flows) ? Object.values(node.flows).map((f) => (isObject(f) ? f.scopes : undefined)) : [node.scopes];
  return lists.flatMap((l) => (isObject(l) ? Object.keys(l) : []));
}

/**
 * The scopes each operation's tool needs (operations needing none are absent), mapped through
 * `scopeMap`, and the scheme they come from. A `scopeMap` key that is no scope of the scheme
 * (declared, or listed by an operation) is the warning MCPGEN_SCOPE_MAP_UNKNOWN at the key.
 */
export function mcpScopes(input: McpScopesInput): { scheme?: string; scopes: Map<RawOperation, string[]> } {
  const { spec, ops, deref, scopeMap } = input;
  const oauth = oauthSchemes(spec, deref);
  const scopes = new Map<RawOperation, string[]>();
  const used = [...oauth].sort().find((name) => ops.some((op) => alternatives(spec, op).some((alt) => Object.hasOwn(alt, name))));
  const map = (list: readonly string[]): string[] =>
    [...new Set(list.flatMap((s) => (scopeMap !== undefined && Object.hasOwn(scopeMap, s) ? [scopeMap[s]!].flat() : [s])))].sort();
  const known = new Set<string>();
  if (used !== undefined) {
    const container =
      spec.version === '2.0' ? spec.document.securityDefinitions : isObject(spec.document.components) ? spec.document.components.securitySchemes : undefined;
    for (const s of declaredScopes(isObject(container) ? deref(container[used]) : undefined)) known.add(s);
    for (const op of ops) {
      const alts = alternatives(spec, op);
      const lists = alts.map((alt) => {
        const wanted = alt[used];
        return [...new Set(Array.isArray(wanted) ? wanted.filter((s): s is string => typeof s === 'string' && s !== '') : [])].sort();
      });
      for (const l of lists) for (const s of l) known.add(s);
      if (alts.length === 0 || alts.some((alt) => !Object.hasOwn(alt, used))) continue;
      const fewest = lists.reduce((a, b) => (b.length < a.length ? b : a));
      const mapped = map(fewest);
      if (mapped.length > 0) scopes.set(op, mapped);
    }
  }
  for (const key of Object.keys(scopeMap ?? {})) {
    if (known.has(key)) continue;
    const near = suggest(key, known);
    input.diagnostics.warn(
      'MCPGEN_SCOPE_MAP_UNKNOWN',
      used === undefined
        ? `scopeMap maps "${key}", but the API description has no oauth2 or openIdConnect scheme that its operations use`
        : `scopeMap maps "${key}", which is no scope of the API description's scheme "${used}"; the entry does nothing`,
      near !== undefined
        ? `did you mean "${near}"?`
        : used === undefined
          ? 'remove `scopeMap`'
          : `remove the entry, or use one of the scopes "${used}" declares: ${[...known].sort().slice(0, 8).join(', ')}`,
      input.locateManifest(`/scopeMap/${escapePointerToken(key)}`, { key: true }),
    );
  }
  return { ...(used !== undefined ? { scheme: used } : {}), scopes };
}
