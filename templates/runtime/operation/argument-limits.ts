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
export type ArgumentMeasure =
  | { readonly fits: true; readonly bytes: number }
  | { readonly fits: false; readonly over: 'bytes' | 'depth'; readonly limit: number };

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

/** A container being walked: its entries are visited one at a time, so a list of a million items costs one frame. */
type Frame = { readonly values: readonly unknown[]; readonly keys?: readonly string[]; next: number; readonly depth: number };

/**
 * Measures `args` as compact JSON, stopping at the first byte past `maxBytes` or the first level
 * past `maxDepth`. Iterative, one frame per open container: a value nested a million levels deep
 * uses no stack, and a list of a million items no more memory than a short one.
 */
export function measureArguments(args: unknown, maxBytes: number, maxDepth: number = MAX_ARGUMENT_DEPTH): ArgumentMeasure {
  let bytes = 0;
  const frames: Frame[] = [];
  /** Counts a value; opens a frame for a container. False when a limit is passed. */
  const enter = (value: unknown, depth: number): 'bytes' | 'depth' | undefined => {
    if (value === null || typeof value !== 'object') {
      bytes += scalarBytes(value);
      return bytes > maxBytes ? 'bytes' : undefined;
    }
    if (depth >= maxDepth) return 'depth';
    bytes += 2;
    if (Array.isArray(value)) {
      // the commas between items
      bytes += Math.max(0, value.length - 1);
      frames.push({ values: value, next: 0, depth: depth + 1 });
    } else {
      const keys = Object.keys(value);
      frames.push({ values: keys.map((k) => (value as Record<string, unknown>)[k]), keys, next: 0, depth: depth + 1 });
    }
    return bytes > maxBytes ? 'bytes' : undefined;
  };
  let over = enter(args, 0);
  while (over === undefined && frames.length > 0) {
    const frame = frames[frames.length - 1]!;
    if (frame.next >= frame.values.length) {
      frames.pop();
      continue;
    }
    const i = frame.next++;
    const value = frame.values[i];
    if (frame.keys !== undefined) {
      // JSON leaves out a property whose value is undefined
      if (value === undefined) continue;
      // key, colon and the comma before all but the first
      bytes += stringBytes(frame.keys[i]!) + 1 + (i > 0 ? 1 : 0);
    }
    over = enter(value, frame.depth);
  }
  if (over === 'depth') return { fits: false, over, limit: maxDepth };
  if (over === 'bytes') return { fits: false, over, limit: maxBytes };
  return { fits: true, bytes };
}

/** The -32602 message for arguments over a limit, naming the variable that sets the size limit. */
export function overLimitMessage(tool: string, measure: Extract<ArgumentMeasure, { fits: false }>, variable: string): string {
  if (measure.over === 'depth')
    return `Invalid arguments for tool ${tool}: they are nested more than ${measure.limit} levels deep (the limit of every call); nothing was run`;
  return `Invalid arguments for tool ${tool}: they take more than ${measure.limit} bytes as JSON (the limit, ${variable}); nothing was run`;
}

/** Deepest nesting accepted in an HTTP request body: the arguments' limit plus the JSON-RPC envelope around them. */
export const MAX_BODY_DEPTH = MAX_ARGUMENT_DEPTH + 16;

/**
 * Whether the JSON text `text` nests arrays and objects more than `max` levels deep, read as
 * text in one pass (strings skipped): a body nested 100,000 levels deep is refused before anything
 * walks it recursively (re-serialising it would overflow the stack).
 */
export function jsonNestsDeeper(text: string, max: number): boolean {
  // a body shorter than twice the limit cannot nest that deep
  if (text.length <= 2 * max) return false;
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c)
        i++; // backslash: skip the escaped character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x7b || c === 0x5b) {
      if (++depth > max) return true;
    } else if (c === 0x7d || c === 0x5d) depth--;
  }
  return false;
}
