/**
 * What a tool publishes about its 2xx results, decided once here: the result shape (the JSON
 * object itself, or the `{status, data}` wrapper) and the output schema in the form the
 * manifest's `outputSchemas` asks for.
 *
 * A lenient output schema is one every body the API plausibly returns satisfies: no
 * `required`, `null` accepted at every level below the root (as `anyOf: [X, {type: "null"}]`,
 * never a `type` array), additional properties allowed, no `format`, `pattern`, `enum`,
 * bounds, descriptions or examples, `$ref`s inlined up to a depth and cut below it to a typed
 * schema such as `{type: "object"}` — never `{}`. It documents the shape for the model; the SDK
 * client, which checks `structuredContent` against it, then never rejects a real answer.
 */

import { isObject } from '../../core/json.js';
import { jsonFits } from '../../core/json-size.js';
import type { JsonSchema } from '../types.js';

/** How output schemas are published (manifest `outputSchemas`). */
export type OutputSchemaMode = 'lenient' | 'strict' | 'none';

/** How a 2xx result's `structuredContent` relates to the response body. */
export type ResultShape = 'object' | 'wrapped';

/** One 2xx response of an operation, as the runtime may receive it. */
export type SuccessBody =
  | {
      kind: 'json' /** Converted schema (with `$defs`), when the spec gives one. */;
      schema?: JsonSchema /** The spec's examples of the body, when it gives any. */;
      examples?: unknown[];
    }
  | { kind: 'empty' }
  | { kind: 'other' };

/** Default depth below which lenient output schemas are cut (the result object's properties, or a listed object's, are depth 1). */
export const DEFAULT_OUTPUT_DEPTH = 2;

/**
 * A schema for "any JSON value" that portability checkers accept: neither an empty `{}` nor a
 * `type` array ("null, or anything that is not null").
 */
export const ANY_VALUE: JsonSchema = Object.freeze({
  anyOf: Object.freeze([Object.freeze({ type: 'null' }), Object.freeze({ not: Object.freeze({ type: 'null' }) })]),
}) as unknown as JsonSchema;

const NULL: JsonSchema = { type: 'null' };

/** The result contract of one tool. */
export type OutputContract = {
  shape: ResultShape;
  /** The published schema (absent with `none`, or when strict has nothing to publish). */
  schema?: JsonSchema;
};

/**
 * Decides the result contract of an operation from its 2xx bodies: an operation whose every
 * 2xx is a JSON object gets the object itself as `structuredContent`; any other (arrays,
 * scalars, empty or non-JSON bodies, or no 2xx described at all) gets `{status, data}`.
 */
export function outputContract(bodies: readonly SuccessBody[], mode: OutputSchemaMode, depth = DEFAULT_OUTPUT_DEPTH, maxBytes = Infinity): OutputContract {
  // the deepest description that fits the size cap (the cap itself is applied by the caller),
  // tried from the top so that a large schema is never built deeper than needed
  if (mode !== 'lenient' || depth < 2) return contractAt(bodies, mode, 1);
  if (depth === 2) {
    // the default depth: the loop below comes to this, without building depth 1 first, and
    // without finishing depth 2 once its property names alone are over the cap
    let deep: OutputContract | undefined;
    keyMeter = { used: 0, max: maxBytes };
    try {
      deep = contractAt(bodies, mode, 2);
    } catch (e) {
      if (e !== OVER_CAP) throw e;
    } finally {
      keyMeter = undefined;
    }
    return deep !== undefined && jsonFits(deep.schema, maxBytes) ? deep : contractAt(bodies, mode, 1);
  }
  let best = contractAt(bodies, mode, 1);
  let bestSize = -1;
  for (let d = 2; d <= depth && best.schema !== undefined && mode === 'lenient'; d++) {
    const c = contractAt(bodies, mode, d);
    const size = Buffer.byteLength(JSON.stringify(c.schema));
    if (size > maxBytes) break;
    if (bestSize < 0) bestSize = Buffer.byteLength(JSON.stringify(best.schema));
    if (size === bestSize) return c;
    best = c;
    bestSize = size;
  }
  return best;
}

function contractAt(bodies: readonly SuccessBody[], mode: OutputSchemaMode, depth: number): OutputContract {
  const objectAlways = bodies.length > 0 && bodies.every((b) => b.kind === 'json' && b.schema !== undefined && lenientRoot(b.schema, 0).type === 'object');
  if (mode === 'none') return { shape: objectAlways ? 'object' : 'wrapped' };
  if (mode === 'strict') {
    // strict keeps the spec's schema as it is, for plain object roots only (as it always did)
    const first = bodies[0];
    return first?.kind === 'json' && first.schema !== undefined && isObjectRoot(first.schema)
      ? { shape: 'object', schema: first.schema }
      : { shape: objectAlways ? 'object' : 'wrapped' };
  }
  if (objectAlways) return { shape: 'object', schema: lenientRoot((bodies[0] as { schema: JsonSchema }).schema, depth) };
  const json = bodies.find((b): b is { kind: 'json'; schema: JsonSchema } => b.kind === 'json' && b.schema !== undefined);
  const properties: Record<string, unknown> = { status: { type: 'integer' } };
  if (json) properties.data = lenient(json.schema, json.schema, depth, 0, new Set());
  return { shape: 'wrapped', schema: { type: 'object', properties } };
}

/** Whether a converted schema's root is a plain object (no top-level combinators), as strict schemas must be. */
export function isObjectRoot(schema: JsonSchema): boolean {
  return schema.type === 'object' && !('anyOf' in schema || 'oneOf' in schema || 'allOf' in schema);
}

/**
 * The lenient form of a result schema, without `null` at the root. For a schema whose values are
 * always objects (an object, or `allOf`/`oneOf`/`anyOf` of objects) it is `{type: "object", …}`.
 */
export function lenientRoot(schema: JsonSchema, depth = DEFAULT_OUTPUT_DEPTH): JsonSchema {
  const r = resolve(schema, schema, new Set());
  return isObject(r.node) ? lenientInner(r.node, schema, depth, 0, r.seen) : ANY_VALUE;
}

type Defs = Record<string, unknown>;

/** Follows `#/$defs/X` references of `root`; `undefined` when dangling or cyclic beyond `seen`. */
function resolve(node: unknown, root: JsonSchema, seen: Set<string>): { node: unknown; seen: Set<string>; cycle?: true } {
  let cur = node;
  let s = seen;
  while (isObject(cur) && typeof cur.$ref === 'string') {
    const m = /^#\/\$defs\/(.+)$/.exec(cur.$ref);
    const defs = (isObject(root.$defs) ? root.$defs : {}) as Defs;
    const name = m ? decodeURIComponent(m[1]!).replace(/~1/g, '/').replace(/~0/g, '~') : undefined;
    if (name === undefined || !Object.hasOwn(defs, name)) return { node: undefined, seen: s };
    // back into a definition being described: its type only
    if (s.has(name)) return { node: defs[name], seen: s, cycle: true };
    s = new Set(s).add(name);
    const { $ref: _ignored, ...siblings } = cur;
    cur = Object.keys(siblings).length > 0 && isObject(defs[name]) ? { ...(defs[name] as object), ...siblings } : defs[name];
  }
  return { node: cur, seen: s };
}

/** JSON types a schema node admits, as far as can be told without evaluating it. */
function typesOf(node: Record<string, unknown>): string[] {
  if (typeof node.type === 'string') return [node.type];
  if (Array.isArray(node.type)) return node.type.filter((t): t is string => typeof t === 'string');
  if (isObject(node.properties) || isObject(node.additionalProperties)) return ['object'];
  if (node.items !== undefined || node.prefixItems !== undefined) return ['array'];
  if (Array.isArray(node.enum) || 'const' in node) {
    const values = Array.isArray(node.enum) ? node.enum : [node.const];
    return [...new Set(values.map((v) => (v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v === 'object' ? 'object' : typeof v)))].filter((t) =>
      ['string', 'number', 'boolean', 'object', 'array', 'null'].includes(t),
    );
  }
  return [];
}

/** Adds `null` to a lenient schema (never as a `type` array). */
function orNull(schema: JsonSchema): JsonSchema {
  if (schema.type === 'null') return schema;
  if (Array.isArray(schema.type)) return schema.type.includes('null') ? schema : { ...schema, type: [...schema.type, 'null'] };
  if (Array.isArray(schema.anyOf) && Object.keys(schema).length === 1) {
    return schema.anyOf.some((b) => isObject(b) && b.type === 'null') ? schema : { anyOf: [...schema.anyOf, NULL] };
  }
  return { anyOf: [schema, NULL] };
}

/** Lenient form of any node below the root (it accepts `null` too). */
function lenient(node: unknown, root: JsonSchema, depth: number, level: number, seen: Set<string>): JsonSchema {
  const r = resolve(node, root, seen);
  if (!isObject(r.node)) return ANY_VALUE;
  if (r.cycle) return orNull(typedOnly(r.node));
  return orNull(lenientInner(r.node, root, depth, level, r.seen));
}

/** Lenient form of a resolved node, without the `null` branch. */
function lenientInner(node: Record<string, unknown>, root: JsonSchema, depth: number, level: number, seen: Set<string>): JsonSchema {
  const branches = [
    ...(Array.isArray(node.allOf) ? node.allOf : []),
    ...(Array.isArray(node.anyOf) ? node.anyOf : []),
    ...(Array.isArray(node.oneOf) ? node.oneOf : []),
  ];
  const own = typesOf(node);
  if (branches.length > 0) {
    const resolved = branches.map((b) => resolve(b, root, seen)).filter((b): b is { node: Record<string, unknown>; seen: Set<string> } => isObject(b.node));
    const branchTypes = resolved.map((b) => typesOf(b.node));
    // objects combined by allOf/anyOf/oneOf: one object with the properties of all of them
    if (own.every((t) => t === 'object') && resolved.length > 0 && branchTypes.every((t) => t.length > 0 && t.every((x) => x === 'object' || x === 'null'))) {
      return lenientObject(node, root, depth, level, seen, resolved);
    }
    if (own.length === 0) {
      // variants may be merged or dropped below: their names are not counted (a lower bound stays one)
      const meter = keyMeter;
      keyMeter = undefined;
      try {
        return alternativesOf(resolved, root, depth, level);
      } finally {
        keyMeter = meter;
      }
    }
  }
  const types = own.filter((t) => t !== 'null');
  if (types.length === 0) return own.includes('null') ? NULL : ANY_VALUE;
  if (types.length > 1) return { anyOf: types.map((t) => lenientTyped(t, node, root, depth, level, seen)) };
  return lenientTyped(types[0]!, node, root, depth, level, seen);
}

/** Lenient form of a node with alternatives and no type of its own: the distinct non-null variants. */
function alternativesOf(
  resolved: ReadonlyArray<{ node: Record<string, unknown>; seen: Set<string> }>,
  root: JsonSchema,
  depth: number,
  level: number,
): JsonSchema {
  const parts: JsonSchema[] = [];
  const keys = new Set<string>();
  for (const b of resolved) {
    const part = lenientInner(b.node, root, depth, level, b.seen);
    const variants = Array.isArray(part.anyOf) && Object.keys(part).length === 1 ? (part.anyOf as JsonSchema[]) : [part];
    for (const v of variants) {
      const key = JSON.stringify(v);
      if (!keys.has(key) && v.type !== 'null') {
        keys.add(key);
        parts.push(v);
      }
    }
  }
  if (parts.length === 0 || parts.some((p) => p === ANY_VALUE)) return ANY_VALUE;
  return parts.length === 1 ? parts[0]! : { anyOf: parts };
}

function lenientTyped(type: string, node: Record<string, unknown>, root: JsonSchema, depth: number, level: number, seen: Set<string>): JsonSchema {
  if (type === 'object') return lenientObject(node, root, depth, level, seen);
  if (type === 'array') {
    // items stay on the array's level: a list of objects shows the objects' properties
    return { type: 'array', items: node.items === undefined ? ANY_VALUE : lenient(node.items, root, depth, level, seen) };
  }
  // integers drift into floats and back: one numeric type
  if (type === 'integer' || type === 'number') return { type: 'number' };
  if (type === 'string' || type === 'boolean') return { type };
  return ANY_VALUE;
}

/** A node reduced to its JSON type(s), e.g. `{type: "object"}`; "any value" when unknown. */
function typedOnly(node: Record<string, unknown>): JsonSchema {
  const types = typesOf(node).filter((t) => t !== 'null');
  if (types.length === 0) return ANY_VALUE;
  const list = [...new Set(types.map((t) => (t === 'integer' ? 'number' : t)))].map(
    (t): JsonSchema => (t === 'array' ? { type: 'array', items: ANY_VALUE } : { type: t }),
  );
  return list.length === 1 ? list[0]! : { anyOf: list };
}

/**
 * While set, the bytes of the property names lenient schemas have written so far: a lower bound
 * of their JSON's size (every name is written as `"name":`, escapes only add). Past `max`, the
 * schema being built cannot fit its cap and {@link OVER_CAP} is thrown.
 */
let keyMeter: { used: number; max: number } | undefined;
const OVER_CAP = Symbol('over the output schema cap');

/** An object node: its properties (from `extra` branches too) up to the depth, nothing required. */
function lenientObject(
  node: Record<string, unknown>,
  root: JsonSchema,
  depth: number,
  level: number,
  seen: Set<string>,
  extra: ReadonlyArray<{ node: Record<string, unknown>; seen: Set<string> }> = [],
): JsonSchema {
  if (level >= depth) return { type: 'object' };
  const props = new Map<string, { schema: unknown; seen: Set<string> }>();
  const conflicts = new Set<string>();
  const add = (n: Record<string, unknown>, s: Set<string>) => {
    if (!isObject(n.properties)) return;
    for (const [k, v] of Object.entries(n.properties)) {
      const known = props.get(k);
      if (known && known.schema !== v && JSON.stringify(known.schema) !== JSON.stringify(v)) conflicts.add(k);
      else if (!known) props.set(k, { schema: v, seen: s });
    }
  };
  add(node, seen);
  for (const b of extra) {
    add(b.node, b.seen);
    // nested combinators inside a branch (allOf of allOf) contribute their properties too
    for (const key of ['allOf', 'anyOf', 'oneOf'] as const) {
      const list = b.node[key];
      if (Array.isArray(list))
        for (const sub of list) {
          const rs = resolve(sub, root, b.seen);
          if (isObject(rs.node)) add(rs.node, rs.seen);
        }
    }
  }
  const out: JsonSchema = { type: 'object' };
  const entries: Array<[string, unknown]> = [];
  for (const [k, v] of props) {
    // a property two branches type differently may hold either: leave it unconstrained
    if (conflicts.has(k)) continue;
    if (keyMeter !== undefined && (keyMeter.used += Buffer.byteLength(k) + 3) > keyMeter.max) throw OVER_CAP;
    entries.push([k, lenient(v.schema, root, depth, level + 1, v.seen)]);
  }
  if (entries.length > 0) out.properties = Object.fromEntries(entries);
  return out;
}
