/**
 * Three-way merge of a generated JSON file (package.json) with the user's edits, on parsed JSON:
 * `base` is what mcpgen generated last time (kept in `.mcpgen.json`), `ours` what it generates
 * now, `theirs` the file on disk. Key by key, recursively through objects:
 *
 * - unchanged on disk since `base` ⇒ mcpgen's value now (an update, an addition or a removal);
 * - unchanged by mcpgen since `base` ⇒ the user's value (added, changed or removed: kept);
 * - both the same ⇒ that value;
 * - otherwise a conflict naming the key (nothing is written then).
 *
 * Arrays and scalars are compared whole. Formatting and key order are not content: `npm install`
 * rewrites both, and a file that differs from the merge only in them is left alone.
 */
import { escapePointerToken } from '../core/diagnostics.js';

/** A parsed JSON value. */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type JsonObject = { [key: string]: Json };

/** A key both sides changed differently; `undefined` means the key is absent on that side. */
export type MergeConflict = { pointer: string; base: Json | undefined; ours: Json | undefined; theirs: Json | undefined };

/** What {@link mergeJson} gives. */
export type MergeResult = {
  /** The merged object (the user's values wherever there was a conflict). */
  merged: JsonObject;
  /** True when `merged` differs from `theirs` in content (key order aside): the file must be written. */
  changed: boolean;
  conflicts: MergeConflict[];
};

/** Maps of package name ⇒ version, which npm keeps sorted by name: the merge keeps them sorted too. */
const SORTED_MAPS = new Set(['/dependencies', '/devDependencies', '/optionalDependencies', '/peerDependencies']);

const isJsonObject = (v: Json | undefined): v is JsonObject => typeof v === 'object' && v !== null && !Array.isArray(v);
const has = (o: JsonObject, k: string) => Object.prototype.hasOwnProperty.call(o, k);
const byCodeUnit = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/**
 * Deep equality of JSON values, key order aside. It descends only as deep as both values are
 * objects or arrays, so comparing with one of mcpgen's shallow values never walks a deeply
 * nested user value.
 */
export function jsonEqual(a: Json | undefined, b: Json | undefined): boolean {
  if (a === b) return true;
  if (a === undefined || b === undefined || a === null || b === null || typeof a !== 'object' || typeof b !== 'object') return false;
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    return a.every((v, i) => jsonEqual(v, b[i]));
  }
  const ka = Object.keys(a);
  if (ka.length !== Object.keys(b).length) return false;
  return ka.every((k) => has(b, k) && jsonEqual(a[k], b[k]));
}

/**
 * Merges three parsed JSON objects (see the module comment).
 *
 * @example
 * mergeJson({ base: { a: 1 }, ours: { a: 2 }, theirs: { a: 1, b: 3 } });
 * // { merged: { a: 2, b: 3 }, changed: true, conflicts: [] }
 */
export function mergeJson(opts: { base: JsonObject; ours: JsonObject; theirs: JsonObject }): MergeResult {
  const conflicts: MergeConflict[] = [];
  const state = { changed: false };
  const merged = mergeObject({ base: opts.base, ours: opts.ours, theirs: opts.theirs, pointer: '', conflicts, state });
  return { merged, changed: state.changed, conflicts };
}

type Step = { pointer: string; conflicts: MergeConflict[]; state: { changed: boolean } };

function mergeValue(opts: Step & { base: Json | undefined; ours: Json | undefined; theirs: Json | undefined }): Json | undefined {
  const { base, ours, theirs } = opts;
  if (jsonEqual(theirs, base) || jsonEqual(ours, theirs)) {
    if (!jsonEqual(ours, theirs)) opts.state.changed = true;
    return ours;
  }
  if (jsonEqual(ours, base)) return theirs;
  // both changed an object (or both added one): merge inside it
  if (isJsonObject(ours) && isJsonObject(theirs) && (base === undefined || isJsonObject(base))) {
    return mergeObject({ ...opts, base: base ?? {}, ours, theirs });
  }
  opts.conflicts.push({ pointer: opts.pointer, base, ours, theirs });
  return theirs;
}

/** mcpgen's keys in its order, then the user's other keys in theirs; package maps sorted by name. */
function mergeObject(opts: Step & { base: JsonObject; ours: JsonObject; theirs: JsonObject }): JsonObject {
  const { base, ours, theirs } = opts;
  const keys = [...new Set([...Object.keys(ours), ...Object.keys(theirs), ...Object.keys(base)])];
  if (SORTED_MAPS.has(opts.pointer)) keys.sort(byCodeUnit);
  const entries: Array<[string, Json]> = [];
  for (const k of keys) {
    const value = mergeValue({
      ...opts,
      pointer: `${opts.pointer}/${escapePointerToken(k)}`,
      base: has(base, k) ? base[k] : undefined,
      ours: has(ours, k) ? ours[k] : undefined,
      theirs: has(theirs, k) ? theirs[k] : undefined,
    });
    if (value !== undefined) entries.push([k, value]);
  }
  // fromEntries defines own properties, so a key such as "__proto__" stays a key
  return Object.fromEntries(entries) as JsonObject;
}
