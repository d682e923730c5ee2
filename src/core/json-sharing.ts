/**
 * A JSON value that holds one object at several places (a bundled `$ref`, a YAML alias, a schema
 * the model put in two tools) kept as JSON and read back with the same sharing: code that tells
 * objects apart by identity sees what it saw. Used by the build cache (../openapi/cache.ts,
 * ../ir/model-memo.ts).
 */

/**
 * Every place that holds an object met before, in `JSON.stringify`'s order, with the first place
 * that holds it; `undefined` for a document JSON cannot carry as it is (a cycle, `-0`, a value
 * JSON leaves out or changes).
 */
export function sharing(doc: unknown): Array<[string[], string[]]> | undefined {
  const first = new Map<object, string[]>();
  const out: Array<[string[], string[]]> = [];
  const walk = (v: unknown, at: string[]): boolean => {
    if (v === null || typeof v === 'string' || typeof v === 'boolean') return true;
    if (typeof v === 'number') return Number.isFinite(v) && !Object.is(v, -0);
    if (typeof v !== 'object') return false;
    const seen = first.get(v);
    if (seen) {
      // a cycle passes through an object whose place is a prefix of this one
      if (seen.length < at.length && seen.every((t, i) => t === at[i])) return false;
      out.push([at, seen]);
      return true;
    }
    first.set(v, at);
    if (Array.isArray(v)) return v.every((x, i) => walk(x, [...at, String(i)]));
    if (Object.getPrototypeOf(v) !== Object.prototype && Object.getPrototypeOf(v) !== null) return false;
    for (const k of Object.keys(v)) if (!walk((v as Record<string, unknown>)[k], [...at, k])) return false;
    return true;
  };
  return walk(doc, []) ? out : undefined;
}

/** Puts back the sharing {@link sharing} recorded into a document parsed from its JSON; false when the places do not exist. */
export function share(doc: object, shared: Array<[string[], string[]]>): boolean {
  const at = (tokens: string[]): unknown => {
    let cur: unknown = doc;
    for (const t of tokens) {
      if (cur === null || typeof cur !== 'object' || !Object.hasOwn(cur, t)) return undefined;
      cur = (cur as Record<string, unknown>)[t];
    }
    return cur;
  };
  for (const [place, firstPlace] of shared) {
    const parent = at(place.slice(0, -1));
    const target = at(firstPlace);
    const key = place.at(-1);
    if (key === undefined || parent === null || typeof parent !== 'object' || !Object.hasOwn(parent, key) || target === null || typeof target !== 'object')
      return false;
    // defined, not assigned: a `__proto__` key is an own property here
    Object.defineProperty(parent, key, { value: target, writable: true, enumerable: true, configurable: true });
  }
  return true;
}
