/**
 * Canonical JSON: one walk of a value as `JSON.stringify` would see it (`toJSON` honoured,
 * non-finite numbers `null`, -0 as 0, `undefined`, functions and symbols dropped from objects and
 * `null` in arrays, bigints as decimal strings, cycles refused), object keys sorted by UTF-16 code
 * unit (as `Array.prototype.sort`). The walk builds either a JSON-safe value (`jsonSafe`) or the
 * canonical text itself (`canonicalJson`), sorting each object's keys once. Used by the reflection
 * gate's keys and by the hash that binds an input round's state to its call's arguments.
 *
 * This file is copied verbatim into every generated project.
 */
import { createHash } from 'node:crypto';

/** A JSON value. */
export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };

/** What one walk builds from the leaves, arrays and objects (keys sorted) of a value. */
type Builder<T> = {
  leaf(value: null | boolean | number | string): T;
  array(items: T[]): T;
  object(members: [string, T][]): T;
};

/**
 * `value` walked with `build`, each string passed through `text`; `undefined` when `value` is
 * dropped (object member) or becomes `null` (array element). `what` names the caller in errors.
 */
function walk<T>(value: unknown, seen: Set<object>, text: (s: string) => string, what: string, build: Builder<T>): T | undefined {
  if (value === null) return build.leaf(null);
  switch (typeof value) {
    case 'string':
      return build.leaf(text(value));
    case 'number':
      return build.leaf(Number.isFinite(value) ? (Object.is(value, -0) ? 0 : value) : null);
    case 'boolean':
      return build.leaf(value);
    case 'bigint':
      return build.leaf(value.toString());
    case 'object':
      break;
    default:
      return undefined;
  }
  const obj = value as object;
  const toJSON: unknown = (obj as { toJSON?: unknown }).toJSON;
  if (typeof toJSON === 'function') return walk((toJSON as () => unknown).call(obj), seen, text, what, build);
  if (seen.has(obj)) throw new TypeError(`${what}: circular structure`);
  seen.add(obj);
  try {
    if (Array.isArray(obj)) return build.array(obj.map((item: unknown) => walk(item, seen, text, what, build) ?? build.leaf(null)));
    const members: [string, T][] = [];
    for (const key of Object.keys(obj).sort()) {
      const v = walk((obj as Record<string, unknown>)[key], seen, text, what, build);
      if (v !== undefined) members.push([key, v]);
    }
    return build.object(members);
  } finally {
    seen.delete(obj);
  }
}

const asValue: Builder<JsonValue> = {
  leaf: (value) => value,
  array: (items) => items,
  object: (members) => {
    const out: { [key: string]: JsonValue } = {};
    // (a member named `__proto__` sets the prototype of `out` rather than a key: it is left out, as it always was)
    for (const [key, v] of members) out[key] = v;
    return out;
  },
};

const asText: Builder<string> = {
  leaf: (value) => JSON.stringify(value),
  array: (items) => `[${items.join(',')}]`,
  // `__proto__` left out as in the value form, so that both forms agree
  object: (members) => `{${members.flatMap(([key, v]) => (key === '__proto__' ? [] : [`${JSON.stringify(key)}:${v}`])).join(',')}}`,
};

/** `value` in JSON-safe form (see the module comment), each string passed through `text`; `null` for a value JSON cannot represent. */
export function jsonSafe(value: unknown, text: (s: string) => string, what: string): JsonValue {
  return walk(value, new Set(), text, what, asValue) ?? null;
}

/**
 * Canonical JSON: object keys sorted recursively, no whitespace between tokens, strings and
 * numbers as `JSON.stringify` writes them (strings as given). Throws on cycles.
 */
export function canonicalJson(value: unknown): string {
  return walk(value, new Set(), (s) => s, 'canonicalJson', asText) ?? 'null';
}

/** The hash of a call's arguments that binds its round state to them (key order does not matter). */
export function argumentsHash(args: Record<string, unknown>): string {
  return createHash('sha256').update(canonicalJson(args)).digest('hex');
}
