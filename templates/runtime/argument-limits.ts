/**
 * The size and depth limits of a tool call's arguments, checked before anything else touches
 * them (the audit trail, access control, validation, the reflection gate): one walk that stops as
 * soon as either limit is passed, so that an argument of a million empty objects costs no more
 * than the limit allows, and nothing after it walks arguments larger than the limit.
 *
 * The size is the length of the arguments written as compact JSON, in UTF-8 bytes.
 *
 * This file is copied verbatim into every generated project.
 */

/** Deepest nesting of arrays and objects accepted in a call's arguments (the arguments object itself is level 1); the schemas' own limit. */
export const MAX_ARGUMENT_DEPTH = 64;

/** What {@link measureArguments} found: the size when both limits hold, else which limit was passed. */
export type ArgumentMeasure = { readonly fits: true; readonly bytes: number } | { readonly fits: false; readonly over: 'bytes' | 'depth'; readonly limit: number };

/** Characters JSON writes escaped. */
const ESCAPED = /["\\\u0000-\u001f]/;

/** Bytes of `s` written as a JSON string (quotes included). */
function stringBytes(s: string): number {
  return ESCAPED.test(s) ? Buffer.byteLength(JSON.stringify(s), 'utf8') : Buffer.byteLength(s, 'utf8') + 2;
}

/** Bytes of a scalar written as JSON. */
function scalarBytes(v: unknown): number {
  if (typeof v === 'string') return stringBytes(v);
  if (typeof v === 'number') return Number.isFinite(v) ? String(v).length : 4;
  if (typeof v === 'boolean') return v ? 4 : 5;
  if (typeof v === 'bigint') return v.toString().length;
  return 4; // null (and what JSON cannot hold, written as null)
}

/**
 * Measures `args` as compact JSON, stopping at the first byte past `maxBytes` or the first level
 * past `maxDepth`. Iterative: a value nested a million levels deep uses no stack.
 */
export function measureArguments(args: unknown, maxBytes: number, maxDepth: number = MAX_ARGUMENT_DEPTH): ArgumentMeasure {
  let bytes = 0;
  const stack: Array<[unknown, number]> = [[args, 0]];
  while (stack.length > 0) {
    const [value, depth] = stack.pop()!;
    if (value === null || typeof value !== 'object') bytes += scalarBytes(value);
    else if (depth >= maxDepth) return { fits: false, over: 'depth', limit: maxDepth };
    else if (Array.isArray(value)) {
      // brackets and commas
      bytes += 2 + Math.max(0, value.length - 1);
      for (let i = value.length - 1; i >= 0; i--) stack.push([value[i], depth + 1]);
    } else {
      bytes += 2;
      let count = 0;
      for (const key in value) {
        if (!Object.prototype.hasOwnProperty.call(value, key)) continue;
        const item = (value as Record<string, unknown>)[key];
        if (item === undefined) continue;
        // key, colon, comma
        bytes += stringBytes(key) + 1 + (count++ > 0 ? 1 : 0);
        if (bytes > maxBytes) return { fits: false, over: 'bytes', limit: maxBytes };
        stack.push([item, depth + 1]);
      }
    }
    if (bytes > maxBytes) return { fits: false, over: 'bytes', limit: maxBytes };
  }
  return { fits: true, bytes };
}

/** The -32602 message for arguments over a limit, naming the variable that sets the size limit. */
export function overLimitMessage(tool: string, measure: Extract<ArgumentMeasure, { fits: false }>, variable: string): string {
  if (measure.over === 'depth') return `Invalid arguments for tool ${tool}: they are nested more than ${measure.limit} levels deep (the limit of every call); nothing was run`;
  return `Invalid arguments for tool ${tool}: they take more than ${measure.limit} bytes as JSON (the limit, ${variable}); nothing was run`;
}
