/**
 * Per-tool OAuth scopes for MCP clients (issue 25): what an operation's OpenAPI `security`
 * requirement lists for the API description's oauth2 / openIdConnect scheme becomes the scopes an
 * MCP access token must carry to see and call the tool (runtime/oauth-scopes.ts enforces them for
 * OAuth tokens only).
 *
 * The scheme is the first oauth2/openIdConnect scheme (by name) that an included operation's
 * requirement names. An operation with an alternative that does not use it (another credential,
 * or `{}`) needs no scope; otherwise its scopes are those of the alternative naming the fewest.
 */
import { isObject } from '../json.js';
import type { LoadedSpec } from '../openapi/load.js';
import type { RawOperation } from '../openapi/operations.js';

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

/** The scopes each operation's tool needs (operations needing none are absent), and the scheme they come from. */
export function mcpScopes(spec: LoadedSpec, ops: readonly RawOperation[], deref: (node: unknown) => unknown): { scheme?: string; scopes: Map<RawOperation, string[]> } {
  const oauth = oauthSchemes(spec, deref);
  const scopes = new Map<RawOperation, string[]>();
  const used = [...oauth].sort().find((name) => ops.some((op) => alternatives(spec, op).some((alt) => Object.hasOwn(alt, name))));
  if (used === undefined) return { scopes };
  for (const op of ops) {
    const alts = alternatives(spec, op);
    if (alts.length === 0 || alts.some((alt) => !Object.hasOwn(alt, used))) continue;
    const lists = alts.map((alt) => {
      const wanted = alt[used];
      return [...new Set(Array.isArray(wanted) ? wanted.filter((s): s is string => typeof s === 'string' && s !== '') : [])].sort();
    });
    const fewest = lists.reduce((a, b) => (b.length < a.length ? b : a));
    if (fewest.length > 0) scopes.set(op, fewest);
  }
  return { scheme: used, scopes };
}
