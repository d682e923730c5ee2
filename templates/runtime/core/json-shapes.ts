/**
 * Shapes of parsed JSON values, shared by every runtime module that inspects untrusted input
 * (arguments, results, preferences, schemas). One definition, so "an object" means the same
 * thing everywhere: not null and not an array.
 */

/** Whether `value` is a JSON object: a non-null, non-array object. */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The same test as {@link isRecord}, under the name some modules use for "a plain JSON object". */
export const isPlainObject = isRecord;
