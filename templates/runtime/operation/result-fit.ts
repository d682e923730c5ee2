/**
 * Compaction and the budget fit of a result (results.ts runs them in order, then writes the note):
 * - Compaction (`compact`) drops `null`s, empty arrays and objects and the keys the `omit` patterns
 *   name, and shortens strings over `maxStringChars` with a marker saying how much was left out.
 * - The fit (`fitBytes`) makes a value fit a number of JSON bytes: a list (the result itself, or
 *   its largest list property) is cut at an item boundary; an object is cut by dropping its largest
 *   fields first, each named. JSON is never cut in the middle of a value.
 *
 * This file is copied verbatim into every generated project.
 */
import type { ResultPolicy } from '../core/types.js';
import { encodedBytes } from './result-size.js';

/** Deepest level compaction walks; deeper values are kept as they are. */
const COMPACT_DEPTH = 64;

const omitCache = new WeakMap<readonly string[], RegExp | undefined>();

/** One regular expression for the `omit` patterns (`*`: any run of characters); `undefined` when there are none. */
function omitPattern(omit: readonly string[]): RegExp | undefined {
  if (omitCache.has(omit)) return omitCache.get(omit);
  const alternatives = omit
    .filter((p) => p !== '')
    .map((p) =>
      p
        .split('*')
        .map((part) => part.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&'))
        .join('.*'),
    );
  const re = alternatives.length === 0 ? undefined : new RegExp(`^(?:${alternatives.join('|')})$`);
  omitCache.set(omit, re);
  return re;
}

/** What compaction left out, for the note. */
export type CompactionReport = { nulls: number; empties: number; omitted: Map<string, number>; shortened: number };

/**
 * A compacted copy of `value` (never mutated): `null`s, empty arrays and objects and keys matching
 * `omit` dropped, strings over `maxStringChars` shortened; `undefined` when nothing is left.
 */
export function compact(
  value: unknown,
  policy: Pick<ResultPolicy, 'omit' | 'maxStringChars'>,
  report: CompactionReport = { nulls: 0, empties: 0, omitted: new Map(), shortened: 0 },
): unknown {
  const omit = omitPattern(policy.omit);
  // the same few dozen keys recur in every item of a list: each is matched once
  const verdicts = new Map<string, boolean>();
  const omitted = (key: string): boolean => {
    let hit = verdicts.get(key);
    if (hit === undefined) verdicts.set(key, (hit = omit!.test(key)));
    return hit;
  };
  const walk = (v: unknown, depth: number): unknown => {
    if (v === null) {
      report.nulls++;
      return undefined;
    }
    if (typeof v === 'string') {
      if (v.length <= policy.maxStringChars) return v;
      report.shortened++;
      return `${v.slice(0, policy.maxStringChars)}…[+${v.length - policy.maxStringChars} characters]`;
    }
    if (typeof v !== 'object' || depth >= COMPACT_DEPTH) return v;
    if (Array.isArray(v)) {
      const out: unknown[] = new Array(v.length);
      let any = false;
      for (let i = 0; i < v.length; i++) {
        const c = walk(v[i], depth + 1);
        // an item of a list keeps its place: an empty item becomes null rather than shifting the others
        out[i] = c === undefined ? null : c;
        if (c !== undefined) any = true;
      }
      if (!any) {
        report.empties++;
        return undefined;
      }
      return out;
    }
    const out: Record<string, unknown> = {};
    let kept = 0;
    for (const key in v) {
      if (!Object.hasOwn(v, key)) continue;
      if (omit !== undefined && omitted(key)) {
        report.omitted.set(key, (report.omitted.get(key) ?? 0) + 1);
        continue;
      }
      const c = walk((v as Record<string, unknown>)[key], depth + 1);
      if (c === undefined) continue;
      // a "__proto__" key stays a key (assignment would set the prototype)
      if (key === '__proto__') Object.defineProperty(out, key, { value: c, enumerable: true, writable: true, configurable: true });
      else out[key] = c;
      kept++;
    }
    if (kept === 0) {
      report.empties++;
      return undefined;
    }
    return out;
  };
  return walk(value, 0);
}

/** Where the list of a result is: the value itself, or one of its top-level properties. */
export type ListAt = { readonly key?: string; readonly items: readonly unknown[] };

/** The list a result is about: the result itself when it is an array, else its largest array property. */
export function findList(value: unknown): ListAt | undefined {
  if (Array.isArray(value)) return { items: value };
  if (value === null || typeof value !== 'object') return undefined;
  let best: ListAt | undefined;
  let bestBytes = -1;
  for (const [key, v] of Object.entries(value)) {
    if (!Array.isArray(v) || v.length === 0) continue;
    const bytes = encodedBytes(v);
    if (bytes > bestBytes) {
      best = { key, items: v };
      bestBytes = bytes;
    }
  }
  return best;
}

/** What fitting did to a value. */
export type Cut = {
  readonly list?: { readonly key?: string; readonly kept: number; readonly total: number; readonly lastKept?: unknown };
  readonly droppedFields?: readonly string[];
};

/** `value` made to fit `maxBytes` of JSON: a list cut at an item boundary, an object's largest fields dropped. */
export function fitBytes(value: unknown, maxBytes: number): { value: unknown; cut?: Cut } {
  // sizes are measured once, part by part: the whole is their sum
  let bytes: number;
  let list: ListAt | undefined;
  let itemSizes: number[] | undefined;
  let listBytes = 0;
  if (Array.isArray(value)) {
    itemSizes = value.map((item) => encodedBytes(item) || 4);
    bytes = 2 + itemSizes.reduce((a, b) => a + b, 0) + Math.max(0, value.length - 1);
    list = value.length > 0 ? { items: value } : undefined;
  } else if (value !== null && typeof value === 'object') {
    bytes = 2;
    let n = 0;
    for (const [k, v] of Object.entries(value)) {
      if (v === undefined) continue;
      const size = encodedBytes(v);
      bytes += Buffer.byteLength(JSON.stringify(k)) + 1 + size + (n++ > 0 ? 1 : 0);
      if (Array.isArray(v) && v.length > 0 && size > listBytes) {
        list = { key: k, items: v };
        listBytes = size;
      }
    }
  } else bytes = encodedBytes(value);
  if (bytes <= maxBytes) return { value };
  if (list !== undefined) {
    const sizes = itemSizes ?? list.items.map((item) => encodedBytes(item) || 4);
    const rest = list.key === undefined ? 2 : bytes - listBytes + 2;
    let used = rest;
    let kept = 0;
    while (kept < sizes.length && used + sizes[kept]! + (kept > 0 ? 1 : 0) <= maxBytes) used += sizes[kept++]! + (kept > 1 ? 1 : 0);
    if (kept > 0 || rest + (sizes[0] ?? 0) <= maxBytes) {
      const items = list.items.slice(0, kept);
      const out = list.key === undefined ? items : replaceKey(value as Record<string, unknown>, list.key, items);
      return {
        value: out,
        cut: {
          list: { ...(list.key !== undefined ? { key: list.key } : {}), kept, total: list.items.length, ...(kept > 0 ? { lastKept: items[kept - 1] } : {}) },
        },
      };
    }
    // not even one item fits: keep the first, cut down like an object
    const first = fitBytes(list.items[0], Math.max(64, maxBytes - rest));
    const out = list.key === undefined ? [first.value] : replaceKey(value as Record<string, unknown>, list.key, [first.value]);
    return {
      value: out,
      cut: {
        list: { ...(list.key !== undefined ? { key: list.key } : {}), kept: 1, total: list.items.length, lastKept: list.items[0] },
        ...(first.cut?.droppedFields ? { droppedFields: first.cut.droppedFields } : {}),
      },
    };
  }
  if (value === null || typeof value !== 'object') {
    // a long string or number alone: shortened with a marker
    const text = typeof value === 'string' ? value : JSON.stringify(value);
    const keep = Math.max(0, Math.floor(maxBytes / 2) - 40);
    return { value: `${text.slice(0, keep)}…[+${text.length - keep} characters]`, cut: {} };
  }
  // an object: its largest fields go first, until it fits
  const entries = Object.entries(value).map(([k, v]) => ({ k, size: encodedBytes(v) + Buffer.byteLength(JSON.stringify(k)) + 2 }));
  entries.sort((a, b) => b.size - a.size || (a.k < b.k ? -1 : 1));
  const dropped: string[] = [];
  let total = bytes;
  for (const e of entries) {
    if (total <= maxBytes) break;
    dropped.push(e.k);
    total -= e.size;
  }
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value))
    if (!dropped.includes(k)) Object.defineProperty(out, k, { value: v, enumerable: true, writable: true, configurable: true });
  return { value: out, cut: { droppedFields: dropped } };
}

function replaceKey(object: Record<string, unknown>, key: string, value: unknown): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(object))
    Object.defineProperty(out, k, { value: k === key ? value : v, enumerable: true, writable: true, configurable: true });
  return out;
}
