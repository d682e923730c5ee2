/**
 * Build-time check of the `x-mcp-header` keywords (SEP-2243) a manifest's JSON Schema carries
 * (extra tools' input schemas): the rules a 2026-07-28 client applies before it trusts a tool
 * (the v2 SDK's `scanXMcpHeaderDeclarations`), so a tool the client would reject is refused here.
 */
import { isObject } from '../../core/json.js';
import { HTTP_TOKEN, X_MCP_HEADER, X_MCP_HEADER_TYPES } from './operation-tool.js';

/** Keywords whose subschemas a `properties` chain does not pass through: an `x-mcp-header` under one is invalid. */
const UNREACHABLE = [
  'items',
  'prefixItems',
  'contains',
  'additionalProperties',
  'unevaluatedProperties',
  'unevaluatedItems',
  'propertyNames',
  'patternProperties',
  'dependentSchemas',
  'oneOf',
  'anyOf',
  'allOf',
  'not',
  'if',
  'then',
  'else',
  '$defs',
  'definitions',
];
/** Of those, the ones whose value maps names to subschemas. */
const BY_NAME = new Set(['patternProperties', 'dependentSchemas', '$defs', 'definitions']);

/** The first problem with the schema's `x-mcp-header` keywords, or undefined. */
export function mcpHeaderProblem(schema: unknown): string | undefined {
  const seen = new Map<string, string>();
  const visit = (node: unknown, path: string[], reachable: boolean): string | undefined => {
    if (!isObject(node)) return undefined;
    const where = path.length === 0 ? 'the root' : path.join('.');
    if (Object.hasOwn(node, X_MCP_HEADER)) {
      const name = node[X_MCP_HEADER];
      if (!reachable || path.length === 0)
        return `${where}: ${X_MCP_HEADER} is allowed only on a property reached through \`properties\` alone (not under items, additionalProperties, anyOf/oneOf/allOf/not, if/then/else or $defs)`;
      if (typeof name !== 'string' || !HTTP_TOKEN.test(name)) return `${where}: ${X_MCP_HEADER} must be an HTTP header name token, got ${JSON.stringify(name)}`;
      if (typeof node.type !== 'string' || !X_MCP_HEADER_TYPES.has(node.type))
        return `${where}: ${X_MCP_HEADER} is allowed only on a string, integer or boolean property, got type ${JSON.stringify(node.type ?? null)}`;
      const other = seen.get(name.toLowerCase());
      if (other !== undefined) return `${where}: ${X_MCP_HEADER} ${JSON.stringify(name)} is also ${other}'s (names must differ ignoring case)`;
      seen.set(name.toLowerCase(), where);
    }
    if (isObject(node.properties)) {
      for (const [key, child] of Object.entries(node.properties)) {
        const problem = visit(child, [...path, key], reachable);
        if (problem) return problem;
      }
    }
    for (const k of UNREACHABLE) {
      const sub = node[k];
      if (sub === undefined) continue;
      const branches = Array.isArray(sub) ? sub : BY_NAME.has(k) && isObject(sub) ? Object.values(sub) : [sub];
      for (const b of branches) {
        const problem = visit(b, [...path, `<${k}>`], false);
        if (problem) return problem;
      }
    }
    return undefined;
  };
  return visit(schema, [], true);
}
