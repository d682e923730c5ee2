/**
 * Schemas of bounded depth. A spec may nest schemas hundreds of levels deep (generated specs
 * do, and hostile ones can). Every stage that walks a schema recursively — the converter, the
 * emitters, TypeScript, and above all the generated server's validator, which compiles a schema
 * into nested code on a tool's first call — needs stack in proportion to that depth; at 500
 * levels a server built from such a spec failed every call with "Maximum call stack size
 * exceeded". So published schemas are cut at {@link MAX_SCHEMA_DEPTH} levels: a subtree below
 * is replaced by its type only (`{type: "object"}`), which the server validates and the API
 * checks in full, and the build warns naming the tools (MCPGEN_SCHEMA_TOO_DEEP).
 */
import { isObject } from '../core/json.js';

/** Deepest schema level published (the root is level 0; every subschema keyword adds one). */
export const MAX_SCHEMA_DEPTH = 64;

const MAP_KEYWORDS = new Set(['properties', 'patternProperties', 'dependentSchemas', '$defs', 'definitions']);
const LIST_KEYWORDS = new Set(['allOf', 'anyOf', 'oneOf', 'prefixItems']);
const SINGLE_KEYWORDS = new Set([
  'items',
  'additionalProperties',
  'not',
  'if',
  'then',
  'else',
  'propertyNames',
  'contains',
  'unevaluatedProperties',
  'unevaluatedItems',
  'contentSchema',
]);

/**
 * `node` reduced to the JSON types it declares (`{type: "object"}`, an `anyOf` of types, or `{}`
 * for any value when it declares none); boolean schemas stay as they are.
 */
export function typeStandIn(node: unknown): unknown {
  if (!isObject(node)) return typeof node === 'boolean' ? node : {};
  const t = node.type;
  const types =
    typeof t === 'string'
      ? [t]
      : Array.isArray(t)
        ? t.filter((x): x is string => typeof x === 'string')
        : isObject(node.properties)
          ? ['object']
          : node.items !== undefined
            ? ['array']
            : [];
  const one = (type: string): Record<string, unknown> => (type === 'array' ? { type, items: {} } : { type });
  if (types.length === 0) return {};
  return types.length === 1 ? one(types[0]!) : { anyOf: types.map(one) };
}

/**
 * `schema` with every subschema deeper than `max` levels replaced by {@link typeStandIn}; the
 * same object when nothing is that deep. Recursion never goes deeper than `max`.
 */
export function boundDepth<T>(schema: T, max = MAX_SCHEMA_DEPTH): { schema: T; cut: boolean } {
  // nearly every schema is shallower: told without copying it
  if (!deeper(schema, 0, max)) return { schema, cut: false };
  let cut = false;
  const walk = (node: unknown, depth: number): unknown => {
    if (!isObject(node)) return node;
    if (depth >= max) {
      cut = true;
      return typeStandIn(node);
    }
    // built from entries: a property named `__proto__` stays an own property
    return Object.fromEntries(
      Object.entries(node).map(([k, v]): [string, unknown] => {
        if (MAP_KEYWORDS.has(k) && isObject(v)) return [k, Object.fromEntries(Object.entries(v).map(([name, s]) => [name, walk(s, depth + 1)]))];
        if (LIST_KEYWORDS.has(k) && Array.isArray(v)) return [k, v.map((s) => walk(s, depth + 1))];
        if (SINGLE_KEYWORDS.has(k) && isObject(v)) return [k, walk(v, depth + 1)];
        return [k, v];
      }),
    );
  };
  const out = walk(schema, 0) as T;
  return cut ? { schema: out, cut } : { schema, cut };
}

/** Whether `node` has a subschema at `max` levels or deeper (the walk of {@link boundDepth}, reading only). */
function deeper(node: unknown, depth: number, max: number): boolean {
  if (!isObject(node)) return false;
  if (depth >= max) return true;
  for (const k in node) {
    const v = node[k];
    if (v === null || typeof v !== 'object') continue;
    if (MAP_KEYWORDS.has(k) && isObject(v)) {
      for (const name in v) if (deeper(v[name], depth + 1, max)) return true;
    } else if (LIST_KEYWORDS.has(k) && Array.isArray(v)) {
      for (const s of v) if (deeper(s, depth + 1, max)) return true;
    } else if (SINGLE_KEYWORDS.has(k) && isObject(v)) {
      if (deeper(v, depth + 1, max)) return true;
    }
  }
  return false;
}
