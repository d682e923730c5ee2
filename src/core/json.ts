/** Small helpers for untyped JSON values. */

/** True for a plain (non-array, non-null) object. */
export function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
