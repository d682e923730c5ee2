/**
 * Results that fit: a 2xx JSON body is made to fit the model's context before it is returned.
 *
 *   projection (the tool's `fields` argument: a JMESPath expression) → compaction → the budget
 *
 * - Compaction (`compact`, on by default) drops `null`s, empty arrays and objects and the keys the
 *   `omit` patterns name (`*_url`, `node_id`, …: hypermedia noise), and shortens strings over
 *   `maxStringChars` with a marker saying how much was left out. It never turns a 2xx into an error.
 * - The budget (`maxTokens`, o200k tokens, 8,000 by default) is estimated from the JSON's bytes
 *   with the tool's build-time calibrated `bytesPerToken`. Over it, a list (the result itself, or
 *   its largest list property: `items`, `data`…) is cut at an item boundary; an object is cut by
 *   dropping its largest fields first, each named. JSON is never cut in the middle of a value.
 * - What was cut and how to get the rest is said in a note after the JSON: how many items were
 *   kept of how many, and the exact arguments of the next call when the API pages (a `Link`
 *   header's `rel="next"`, a cursor in the body, `page`/`per_page` arithmetic, or a page size).
 *
 * This file is copied verbatim into every generated project.
 */
import type { OperationTool, ResultPolicy } from '../core/types.js';
import { DEFAULT_BYTES_PER_TOKEN } from '../core/types.js';
import { encodedBytes } from './result-size.js';

/** Defaults when the generated config carries no `results` (projects built before it existed, tests). */
export const DEFAULT_RESULT_POLICY: ResultPolicy = Object.freeze({
  maxTokens: 8000,
  compact: true,
  omit: Object.freeze(['*_url', 'url', 'node_id', '_links', 'gravatar_id']),
  maxStringChars: 1000,
});

/** Evaluates projections (projection.ts registers JMESPath here when the project has projection). */
export type Projector = {
  /** Why an expression is refused (it does not parse, or is too complex); `undefined` when it may run. */
  check(expression: string): string | undefined;
  /** The expression applied to the data; throws on an evaluation error (an unknown function…). */
  apply(expression: string, data: unknown): unknown;
};

let projector: Projector | undefined;

/** Registers the projection implementation (projection.ts does, when imported). */
export function setProjector(p: Projector): void {
  projector = p;
}

/** The registered projection implementation, if any. */
export function getProjector(): Projector | undefined {
  return projector;
}

/** The share of the budget a result is fitted to, so that an estimate that is a little low still fits. */
const ESTIMATE_MARGIN = 0.85;
/** Tokens kept free for the note that follows the JSON in the text. */
const NOTE_TOKENS = 200;
/** Deepest level compaction walks; deeper values are kept as they are. */
const COMPACT_DEPTH = 64;

/** The effective policy of `tool`: its own settings over the server's. */
export function policyFor(tool: Pick<OperationTool, 'results'>, server: ResultPolicy | undefined): ResultPolicy {
  const base = server ?? DEFAULT_RESULT_POLICY;
  return tool.results === undefined ? base : { ...base, ...tool.results };
}

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
type ListAt = { readonly key?: string; readonly items: readonly unknown[] };

/** The list a result is about: the result itself when it is an array, else its largest array property. */
function findList(value: unknown): ListAt | undefined {
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

/** What the note about a result says, and the arguments of the next call when there is one. */
export type ResultNote = { readonly text?: string; readonly next?: Record<string, unknown> };

/** Names of page-size parameters, by wire name (lower case). */
const PAGE_SIZE = new Set([
  'per_page',
  'perpage',
  'page_size',
  'pagesize',
  'limit',
  'max_results',
  'maxresults',
  'count',
  'size',
  'top',
  '$top',
  'maxitems',
  'max_items',
]);
/** Names of cursor parameters, by wire name (lower case), and where APIs put the next cursor in their bodies. */
const CURSOR_PARAMS = ['cursor', 'page_token', 'pagetoken', 'continue', 'next_token', 'nexttoken', 'after', 'next_cursor', 'nextcursor', 'marker'];
const CURSOR_FIELDS: ReadonlyArray<readonly string[]> = [
  ['next_cursor'],
  ['nextCursor'],
  ['next_page_token'],
  ['nextPageToken'],
  ['metadata', 'continue'],
  ['response_metadata', 'next_cursor'],
  ['next_token'],
  ['nextToken'],
  ['pagination', 'next_cursor'],
  ['meta', 'next_cursor'],
  ['cursor', 'next'],
];

/** The tool's query parameters: wire name (lower case) ⇒ argument. */
function queryArgs(tool: OperationTool): Map<string, string> {
  const out = new Map<string, string>();
  for (const p of tool.http.params) if (p.in === 'query' && p.fixed === undefined) out.set(p.name.toLowerCase(), p.arg);
  return out;
}

/** The URL of `rel="next"` in a Link header. */
function linkNext(link: string | null): URL | undefined {
  if (!link) return undefined;
  for (const part of link.split(/,(?=\s*<)/)) {
    const m = /^\s*<([^>]*)>\s*;(.*)$/.exec(part);
    if (m && /(?:^|;)\s*rel\s*=\s*"?(?:[^";]*\s)?next(?:\s[^";]*)?"?\s*(?:;|$)/i.test(m[2]!)) {
      try {
        return new URL(m[1]!);
      } catch {
        return undefined;
      }
    }
  }
  return undefined;
}

/** `value` at `path` when it is a non-empty string or a number. */
function at(value: unknown, path: readonly string[]): string | number | undefined {
  let cur: unknown = value;
  for (const k of path) {
    if (cur === null || typeof cur !== 'object' || Array.isArray(cur)) return undefined;
    cur = (cur as Record<string, unknown>)[k];
  }
  return (typeof cur === 'string' && cur !== '') || typeof cur === 'number' ? cur : undefined;
}

/** The largest d ≤ max dividing n (at least 1). */
function divisorUpTo(n: number, max: number): number {
  for (let d = Math.min(max, n); d > 1; d--) if (n % d === 0) return d;
  return 1;
}

/**
 * The arguments of the call that continues after what this result shows, when the API pages:
 * after a cut list, from the last item shown (Stripe's `starting_after`, or `page`/`per_page`
 * arithmetic); else the API's own next page (a `Link` header, a cursor in the body).
 */
export function nextCall(
  tool: OperationTool,
  args: Record<string, unknown>,
  original: unknown,
  cut: Cut | undefined,
  link: string | null,
): { next?: Record<string, unknown>; smaller?: Record<string, unknown> } {
  const params = queryArgs(tool);
  const with_ = (extra: Record<string, unknown>): Record<string, unknown> => ({ ...args, ...extra });
  const list = cut?.list;
  if (list !== undefined && list.kept < list.total) {
    // what follows the last item shown
    const startingAfter = params.get('starting_after');
    const id = list.lastKept !== null && typeof list.lastKept === 'object' ? (list.lastKept as Record<string, unknown>).id : undefined;
    if (startingAfter !== undefined && (typeof id === 'string' || typeof id === 'number')) return { next: with_({ [startingAfter]: id }) };
    const pageArg = params.get('page');
    const sizeEntry = [...params].find(([name]) => PAGE_SIZE.has(name));
    if (pageArg !== undefined && sizeEntry !== undefined && list.kept > 0) {
      const page = Number(args[pageArg] ?? 1);
      const size = Number(args[sizeEntry[1]] ?? list.total);
      if (Number.isInteger(page) && page >= 1 && Number.isInteger(size) && size >= 1) {
        const offset = (page - 1) * size + list.kept;
        const k = divisorUpTo(offset, list.kept);
        return { next: with_({ [pageArg]: offset / k + 1, [sizeEntry[1]]: k }) };
      }
    }
    // a page size the model can lower: the same call returns a page that fits
    if (sizeEntry !== undefined && list.kept > 0) return { smaller: with_({ [sizeEntry[1]]: list.kept }) };
    return {};
  }
  const url = linkNext(link);
  if (url !== undefined) {
    const extra: Record<string, unknown> = {};
    for (const [name, value] of url.searchParams) {
      const arg = params.get(name.toLowerCase());
      if (arg === undefined) return {};
      extra[arg] = /^\d+$/.test(value) && Number.isSafeInteger(Number(value)) ? Number(value) : value;
    }
    return Object.keys(extra).length > 0 ? { next: with_(extra) } : {};
  }
  for (const path of CURSOR_FIELDS) {
    const cursor = at(original, path);
    if (cursor === undefined) continue;
    const arg = CURSOR_PARAMS.map((n) => params.get(n)).find((a) => a !== undefined);
    if (arg !== undefined) return { next: with_({ [arg]: cursor }) };
  }
  // Stripe: has_more and a list of objects with ids
  if (original !== null && typeof original === 'object' && (original as Record<string, unknown>).has_more === true) {
    const startingAfter = params.get('starting_after');
    const items = findList(original)?.items;
    const last = items?.[items.length - 1] as Record<string, unknown> | undefined;
    if (startingAfter !== undefined && last !== undefined && (typeof last.id === 'string' || typeof last.id === 'number'))
      return { next: with_({ [startingAfter]: last.id }) };
  }
  return {};
}

/** The shaped result: the value to return, the note (with `next`) to add, and the URI of the whole result when it was kept. */
export type Shaped = { readonly value: unknown; readonly note?: ResultNote; readonly link?: string };

/**
 * Shapes a parsed 2xx JSON body for `tool`: compaction, then the budget, then the note. `args` are
 * the call's arguments (without the projection argument); `link` the response's `Link` header.
 */
export function shapeResult(
  tool: OperationTool,
  parsed: unknown,
  policy: ResultPolicy,
  args: Record<string, unknown>,
  link: string | null,
  keep?: (whole: unknown) => string | undefined,
): Shaped {
  const report: CompactionReport = { nulls: 0, empties: 0, omitted: new Map(), shortened: 0 };
  let value = policy.compact ? compact(parsed, policy, report) : parsed;
  if (value === undefined) value = Array.isArray(parsed) ? [] : {};
  const ratio = tool.bytesPerToken ?? DEFAULT_BYTES_PER_TOKEN;
  // the estimate errs both ways (about ±15% for most results, more for odd ones): fitted with that much room
  const maxBytes = Math.max(256, Math.floor((policy.maxTokens * ESTIMATE_MARGIN - NOTE_TOKENS) * ratio));
  const fitted = fitBytes(value, maxBytes);
  const { next, smaller } = nextCall(tool, args, parsed, fitted.cut, link);
  const parts: string[] = [];
  const list = fitted.cut?.list;
  if (list !== undefined) {
    const where = list.key !== undefined ? ` of "${list.key}"` : '';
    parts.push(`${list.kept} of ${list.total} items${where} shown, cut to fit ${policy.maxTokens} tokens`);
  }
  if (fitted.cut?.droppedFields !== undefined && fitted.cut.droppedFields.length > 0)
    parts.push(`fields left out to fit ${policy.maxTokens} tokens: ${fitted.cut.droppedFields.join(', ')}`);
  if (next !== undefined) parts.push(`${list !== undefined ? 'the rest' : 'next page'}: call ${tool.name} with ${JSON.stringify(next)}`);
  else if (smaller !== undefined) parts.push(`for the rest, call ${tool.name} with ${JSON.stringify(smaller)} and page on`);
  // cut, and the API does not page: the whole result is kept for the client to read
  const cut = list !== undefined || (fitted.cut?.droppedFields?.length ?? 0) > 0;
  const kept = cut && next === undefined && smaller === undefined ? keep?.(value) : undefined;
  if (kept !== undefined) parts.push(`the whole result: read the resource ${kept} (resources/read; kept for 10 minutes, for this client only)`);
  if ((list !== undefined || fitted.cut?.droppedFields !== undefined) && tool.projection !== undefined)
    parts.push(`or select fewer fields with the ${tool.projection.arg} argument (JMESPath)`);
  if (report.omitted.size > 0)
    parts.push(
      `left out: ${[...report.omitted.keys()].sort().slice(0, 12).join(', ')}${report.omitted.size > 12 ? ', …' : ''} (link and id noise), and empty values`,
    );
  const text = parts.length > 0 ? `[results: ${parts.join('; ')}]` : undefined;
  return {
    value: fitted.value,
    ...(text !== undefined || next !== undefined ? { note: { ...(text !== undefined ? { text } : {}), ...(next !== undefined ? { next } : {}) } } : {}),
    ...(kept !== undefined ? { link: kept } : {}),
  };
}
