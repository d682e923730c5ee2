/**
 * Input schemas that fit: a real API's request bodies can run to hundreds of kilobytes per tool
 * (Kubernetes' workload bodies inline the whole Pod spec), more than any client reads. Every
 * input schema is slimmed in three steps, each only as far as needed:
 *
 * 1. argument descriptions (the tool's arguments and the request body's own properties) are cut
 *    to `maxArgumentDescriptionLength`;
 * 2. when the schema is larger than `maxBytes`, descriptions below those levels are dropped;
 * 3. when it is still larger, `$defs` are inlined and the tree is cut at the deepest level that
 *    fits: a cut subtree keeps only its type (`{type: "object"}`), which the server validates
 *    and the API checks in full. Arguments themselves are never removed.
 *
 * The result is what the server both publishes and validates against.
 */

import { isObject } from '../../core/json.js';
import { jsonFits } from '../../core/json-size.js';
import { plainLinks, truncateDescription } from '../text.js';
import { ANY_VALUE } from '../tools/output-schema.js';
import type { JsonSchema } from '../types.js';

/** Limits of {@link slimInput}. */
export type InputLimits = { maxBytes: number; maxArgumentDescriptionLength: number };

/** What slimming did, for the build report. */
export type SlimResult = { schema: JsonSchema /** Depth the schema was cut at, when it was. */; cutAt?: number };

/** Depth (root = 0) of the levels whose descriptions are kept: arguments (1) and body properties (2). */
const DESCRIBED_LEVELS = 2;
/** Deepest level tried when cutting. */
const MAX_CUT = 12;

/** Slims one input schema (a new object; the input is not changed). */
export function slimInput(schema: JsonSchema, limits: InputLimits): SlimResult {
  // below the described levels nothing changes: those subtrees are shared, not copied
  let out = mapLevels(
    schema,
    0,
    (node, level) => {
      if (level > DESCRIBED_LEVELS || typeof node.description !== 'string') return node;
      const cut = truncateDescription(plainLinks(node.description), limits.maxArgumentDescriptionLength);
      return cut === node.description ? node : { ...node, description: cut };
    },
    DESCRIBED_LEVELS,
  ) as JsonSchema;
  if (jsonFits(out, limits.maxBytes, 4)) return { schema: out };
  out = mapLevels(out, 0, (node, level) => {
    if (level <= DESCRIBED_LEVELS || !('description' in node)) return node;
    const { description: _dropped, ...rest } = node;
    return rest;
  }) as JsonSchema;
  if (jsonFits(out, limits.maxBytes, 4)) return { schema: out };
  // cut deeper and deeper while it still fits; the shallowest cut is the fallback. A cut holds
  // no `$defs` and grows a level at a time, so each is serialised natively (faster at these sizes)
  // once to be measured; two cuts are compared only when the next fits too (a next cut the same
  // as this one fits whenever this one does, and when neither fits both ways end with this one)
  let best: SlimResult | undefined;
  const sizes = new WeakMap<JsonSchema, number>();
  const fits = (c: JsonSchema): boolean => {
    let n = sizes.get(c);
    if (n === undefined) sizes.set(c, (n = Buffer.byteLength(JSON.stringify(c))));
    return n <= limits.maxBytes;
  };
  let cut = cutAt(out, DESCRIBED_LEVELS);
  for (let depth = DESCRIBED_LEVELS; depth <= MAX_CUT; depth++) {
    if (best !== undefined && !fits(cut)) break;
    best = { schema: cut, cutAt: depth };
    const next = cutAt(out, depth + 1);
    if (!cut.$defs && fits(next) && JSON.stringify(cut) === JSON.stringify(next)) break;
    cut = next;
  }
  return best!;
}

/**
 * Applies `fn` to every schema node with its level: the root is 0, its properties 1, their
 * properties (or array items' properties) 2, and so on; combinator branches stay on their
 * node's level. `$defs` entries are not levelled (they are inlined before any cut).
 */
function mapLevels(node: unknown, level: number, fn: (node: Record<string, unknown>, level: number) => Record<string, unknown>, maxLevel = Infinity): unknown {
  if (!isObject(node) || level > maxLevel) return node;
  const out = Object.fromEntries(
    Object.entries(node).map(([k, v]): [string, unknown] => {
      if (k === 'properties' && isObject(v)) return [k, Object.fromEntries(Object.entries(v).map(([p, s]) => [p, mapLevels(s, level + 1, fn, maxLevel)]))];
      if ((k === 'items' || k === 'additionalProperties' || k === 'not') && isObject(v)) return [k, mapLevels(v, level, fn, maxLevel)];
      if ((k === 'anyOf' || k === 'oneOf' || k === 'allOf' || k === 'prefixItems') && Array.isArray(v))
        return [k, v.map((s) => mapLevels(s, level, fn, maxLevel))];
      return [k, v];
    }),
  );
  return fn(out, level);
}

/** The schema with `$defs` inlined and every node below `depth` replaced by its type. */
function cutAt(root: JsonSchema, depth: number): JsonSchema {
  const defs = isObject(root.$defs) ? root.$defs : {};
  const { $defs: _defs, ...body } = root;
  return inline(body, 0, depth, defs, []) as JsonSchema;
}

function deref(
  node: Record<string, unknown>,
  defs: Record<string, unknown>,
  trail: readonly string[],
): { node: Record<string, unknown>; trail: readonly string[] } | undefined {
  let cur: unknown = node;
  let t = trail;
  while (isObject(cur) && typeof cur.$ref === 'string') {
    const m = /^#\/\$defs\/(.+)$/.exec(cur.$ref);
    const name = m ? decodeURIComponent(m[1]!).replace(/~1/g, '/').replace(/~0/g, '~') : undefined;
    if (name === undefined || !Object.hasOwn(defs, name) || t.includes(name)) return undefined;
    t = [...t, name];
    const { $ref: _r, ...siblings } = cur;
    const target = defs[name];
    cur = isObject(target) ? { ...target, ...siblings } : target;
  }
  return isObject(cur) ? { node: cur, trail: t } : undefined;
}

function inline(node: unknown, level: number, depth: number, defs: Record<string, unknown>, trail: readonly string[]): unknown {
  if (!isObject(node)) return node;
  const r = deref(node, defs, trail);
  // a reference back into its own cycle, or one that cannot be followed: its type only
  if (!r) return typedStandIn(node, defs);
  if (level >= depth && level > 0) return typedStandIn(r.node, defs);
  return Object.fromEntries(
    Object.entries(r.node).map(([k, v]): [string, unknown] => {
      if (k === 'properties' && isObject(v)) return [k, Object.fromEntries(Object.entries(v).map(([p, s]) => [p, inline(s, level + 1, depth, defs, r.trail)]))];
      if ((k === 'items' || k === 'additionalProperties' || k === 'not' || k === 'contains' || k === 'propertyNames') && isObject(v))
        return [k, inline(v, level + (k === 'items' ? 0 : 1), depth, defs, r.trail)];
      if ((k === 'anyOf' || k === 'oneOf' || k === 'allOf' || k === 'prefixItems') && Array.isArray(v))
        return [k, v.map((s) => inline(s, level, depth, defs, r.trail))];
      if (k === 'patternProperties' && isObject(v))
        return [k, Object.fromEntries(Object.entries(v).map(([p, s]) => [p, inline(s, level + 1, depth, defs, r.trail)]))];
      return [k, v];
    }),
  );
}

/** A node reduced to the JSON types it admits (`null` kept), never `{}`. */
function typedStandIn(node: Record<string, unknown>, defs: Record<string, unknown>): JsonSchema {
  const types = new Set<string>();
  const visit = (n: unknown, trail: readonly string[], hops: number): boolean => {
    if (!isObject(n) || hops > 8) return false;
    const r = deref(n, defs, trail);
    if (!r) return false;
    const t = r.node.type;
    if (typeof t === 'string') types.add(t);
    else if (Array.isArray(t)) t.forEach((x) => typeof x === 'string' && types.add(x));
    else if (isObject(r.node.properties)) types.add('object');
    else if (r.node.items !== undefined) types.add('array');
    else {
      const branches = [...((r.node.anyOf as unknown[]) ?? []), ...((r.node.oneOf as unknown[]) ?? []), ...((r.node.allOf as unknown[]) ?? [])];
      if (branches.length === 0) return false;
      return branches.every((b) => visit(b, r.trail, hops + 1));
    }
    return true;
  };
  if (!visit(node, [], 0) || types.size === 0) return ANY_VALUE;
  const list = [...types].sort().map((t): JsonSchema => (t === 'array' ? { type: 'array', items: ANY_VALUE } : { type: t }));
  return list.length === 1 ? list[0]! : { anyOf: list };
}
