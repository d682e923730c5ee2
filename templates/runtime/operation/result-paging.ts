/**
 * The next call of a result that does not show everything (results.ts puts it in the note): after
 * a cut list, the call that continues from the last item shown (Stripe's `starting_after`, or
 * `page`/`per_page` arithmetic, or a smaller page size); else the API's own next page (a `Link`
 * header's `rel="next"`, a cursor in the body).
 *
 * This file is copied verbatim into every generated project.
 */
import type { OperationTool } from '../core/types.js';
import type { Cut } from './result-fit.js';
import { findList } from './result-fit.js';

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
