/**
 * Browsing in search mode, for when words miss: a `search_tools` call without a query answers the
 * API's areas (a tool's first tag, else the first literal segment of its path), with how many
 * tools each has and the words its tools are about; with a `tag` and no query, the tools of that
 * area, one short line each. Both are paged so that every answer stays small.
 *
 * This file is copied into generated projects that use search mode.
 */
import type { LoadedIndex } from './search-rank.js';
import { SEARCH_LIMITS } from './search-tools.js';

/** An area as listed: its name, how many tools the request may use there, what they are about. */
export type AreaLine = { area: string; tools: number; about: string };

/** A page of `items` (1-based), and how many pages there are. */
export function page<T>(items: readonly T[], pageNumber: number, size: number): { items: T[]; page: number; pages: number } {
  const pages = Math.max(1, Math.ceil(items.length / size));
  const p = Math.min(pageNumber, pages);
  return { items: items.slice((p - 1) * size, p * size), page: p, pages };
}

/** `text` cut to `max` characters, with an ellipsis when cut. */
export function clip(text: string, max: number): string {
  const one = text.replace(/\s+/g, ' ').trim();
  return one.length > max ? `${one.slice(0, max - 1)}…` : one;
}

/** The index of the area called `name` (case and separators aside), or -1. */
export function findArea(index: LoadedIndex, name: string): number {
  const norm = (s: string) => s.toLowerCase().replace(/[\s_-]+/g, ' ').trim();
  const n = norm(name);
  return index.data.areas.findIndex(([a]) => norm(a) === n);
}

/** The areas with at least one tool `keep` accepts, with those tools' count and the words of their names most of them share. */
export function areaLines(index: LoadedIndex, keep: (doc: number) => boolean, nameOf: (doc: number) => string): AreaLine[] {
  const counts = index.data.areas.map(() => 0);
  const words = index.data.areas.map(() => new Map<string, number>());
  index.data.tools.forEach(([, , area], doc) => {
    if (!keep(doc)) return;
    counts[area]!++;
    for (const w of new Set(nameOf(doc).replace(/([a-z0-9])([A-Z])/g, '$1 $2').toLowerCase().split(/[^a-z0-9]+/))) {
      if (w.length > 2 && !/^(get|list|create|update|delete|put|post|patch|for|the|and|with|by|v\d+\w*)$/.test(w)) words[area]!.set(w, (words[area]!.get(w) ?? 0) + 1);
    }
  });
  const out: AreaLine[] = [];
  index.data.areas.forEach(([name], i) => {
    if (counts[i] === 0) return;
    const top = [...words[i]!].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).slice(0, 5).map(([w]) => w);
    out.push({ area: name, tools: counts[i]!, about: clip(top.join(', '), SEARCH_LIMITS.areaAboutChars) });
  });
  return out;
}
