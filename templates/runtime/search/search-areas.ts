/**
 * Browsing in search mode, for when words miss: a `search_tools` call without a query answers the
 * API's areas (a tool's first tag, else the first literal segment of its path), with how many
 * tools each has and the words its tools are about; with a `tag` and no query, the tools of that
 * area, one short line each. Both are paged so that every answer stays small.
 *
 * This file is copied into generated projects that use search mode.
 */
import type { LoadedIndex } from './search-rank.js';
import { term } from './search-text.js';
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
  const norm = (s: string) =>
    s
      .toLowerCase()
      .replace(/[\s_-]+/g, ' ')
      .trim();
  const n = norm(name);
  return index.data.areas.findIndex(([a]) => norm(a) === n);
}

/** Words of a name, for an area's line: camelCase and separators split, lower case; verbs of intent, short words and words with digits (versions, hashes) left out. */
function nameWords(name: string): Set<string> {
  return new Set(
    name
      .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
      .toLowerCase()
      .split(/[^a-z0-9]+/)
      .filter(
        (w) =>
          w.length > 2 && !/\d/.test(w) && !/^(get|list|create|update|delete|put|post|patch|read|replace|watch|fetch|for|the|and|with|by|v\d+\w*)$/.test(w),
      ),
  );
}

/**
 * The areas with at least one tool `keep` accepts, with those tools' count and what they are
 * about: the words of their names that tell the area apart — frequent in it, rare elsewhere (a
 * word's count in the area × its IDF over the tools `keep` accepts) — the area's own name left out
 * unless it is all they say (`actions`: runner, hosted, workflow, … rather than actions,
 * org, repo).
 */
export function areaLines(index: LoadedIndex, keep: (doc: number) => boolean, nameOf: (doc: number) => string): AreaLine[] {
  const counts = index.data.areas.map(() => 0);
  // per area: stem ⇒ how many of its tools' names have it, and in which forms (`label`, `labels`)
  const words = index.data.areas.map(() => new Map<string, { n: number; forms: Map<string, number> }>());
  const df = new Map<string, number>();
  let total = 0;
  index.data.tools.forEach(([, , area], doc) => {
    if (!keep(doc)) return;
    counts[area]!++;
    total++;
    const forms = new Map<string, string>();
    for (const w of nameWords(nameOf(doc))) if (!forms.has(term(w) ?? w)) forms.set(term(w) ?? w, w);
    for (const [stem, w] of forms) {
      const at = words[area]!.get(stem) ?? { n: 0, forms: new Map<string, number>() };
      at.n++;
      at.forms.set(w, (at.forms.get(w) ?? 0) + 1);
      words[area]!.set(stem, at);
      df.set(stem, (df.get(stem) ?? 0) + 1);
    }
  });
  /** The form a stem is shown in: its most frequent, then the first in order. */
  const shown = (forms: Map<string, number>): string => [...forms].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))[0]![0];
  const out: AreaLine[] = [];
  index.data.areas.forEach(([name], i) => {
    if (counts[i] === 0) return;
    // the area's own name, in any form (`issues` says issue)
    const own = new Set([...nameWords(name)].map((w) => term(w) ?? w));
    // an area whose tools' names say only its own name (`emojis`) is about that
    const told = [...words[i]!].filter(([stem]) => !own.has(stem) && df.get(stem)! < total);
    const top = (told.length > 0 ? told : [...words[i]!])
      .map(([stem, { n, forms }]) => [shown(forms), n * Math.log(total / df.get(stem)!)] as const)
      .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
      .slice(0, 5)
      .map(([w]) => w);
    out.push({ area: name, tools: counts[i]!, about: clip(top.join(', '), SEARCH_LIMITS.areaAboutChars) });
  });
  return out;
}
