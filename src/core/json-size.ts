/**
 * Whether a value's JSON fits a byte budget, told without writing the JSON out when it does not:
 * the size is added up value by value and the walk stops as soon as it is over. For a 300 kB
 * schema checked against 4 kB that reads about 4 kB of it instead of serialising all of it.
 */

/**
 * `Buffer.byteLength(JSON.stringify(value)) <= limit`, stopping early when it is not. Values at
 * `nativeFrom` levels and below are serialised whole (natively): faster when they are small, as
 * the subtrees of a schema that usually fits are.
 */
export function jsonFits(value: unknown, limit: number, nativeFrom = Infinity): boolean {
  return measure(value, limit, 0, bytes, nativeFrom) <= limit;
}

/** `JSON.stringify(value).length <= limit` (UTF-16 units), stopping early when it is not. */
export function jsonLengthFits(value: unknown, limit: number): boolean {
  return measure(value, limit, 0, units, Infinity) <= limit;
}

type Unit = (json: string) => number;
const bytes: Unit = (json) => Buffer.byteLength(json);
const units: Unit = (json) => json.length;

/** Printable ASCII that JSON writes as it is (no `"`, no `\\`): one byte and one unit per character. */
const PLAIN = /^[ !#-[\]-~]*$/;

/** Size of a string's JSON (quotes and escapes included). */
function stringSize(s: string, size: Unit): number {
  return PLAIN.test(s) ? s.length + 2 : size(JSON.stringify(s));
}

/** UTF-8 bytes of the JSON of `value`, or some number over `budget` once it exceeds it. */
function measure(value: unknown, budget: number, level: number, size: Unit, nativeFrom: number): number {
  if (level >= nativeFrom && value !== undefined && typeof value !== 'function' && typeof value !== 'symbol') return size(JSON.stringify(value));
  switch (typeof value) {
    case 'string':
      return stringSize(value, size);
    case 'number':
    case 'boolean':
      return JSON.stringify(value).length;
    case 'object':
      break;
    default:
      // undefined, functions and symbols: JSON.stringify leaves them out (a caller handles lists)
      return 0;
  }
  if (value === null) return 4;
  if (typeof (value as { toJSON?: unknown }).toJSON === 'function') return size(JSON.stringify(value) ?? '');
  let n = 2; // the brackets
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const v = value[i];
      // a list keeps a place for every item: what JSON cannot carry is written `null`
      n += (i > 0 ? 1 : 0) + (v === undefined || typeof v === 'function' || typeof v === 'symbol' ? 4 : measure(v, budget - n, level + 1, size, nativeFrom));
      if (n > budget) return n;
    }
    return n;
  }
  let first = true;
  for (const k in value) {
    if (!Object.hasOwn(value, k)) continue;
    const v = (value as Record<string, unknown>)[k];
    if (v === undefined || typeof v === 'function' || typeof v === 'symbol') continue;
    n += (first ? 0 : 1) + stringSize(k, size) + 1 + measure(v, budget - n, level + 1, size, nativeFrom);
    first = false;
    if (n > budget) return n;
  }
  return n;
}
