/**
 * Search mode: instead of every tool, the server lists `search_tools`, `describe_tool` and
 * `call_tool`. The index over the tools (search-index.ts) is built when the project is generated
 * and loaded here at start-up; `createToolSearch` answers `search_tools` with it: ranked results
 * for a query (search-rank.ts), optionally only of one method or area; without a query, the areas
 * or one area's tools (search-areas.ts). With `MCPGEN_SEARCH_DEBUG` set, each ranked answer also
 * writes why each result scored what it did to stderr.
 *
 * This file is copied into generated projects that use search mode.
 */

import type { CallToolResult } from '@modelcontextprotocol/server';
import { ProtocolError, ProtocolErrorCode } from '@modelcontextprotocol/server';
import { SEARCH_DEBUG_VARIABLE } from '../process/variables.js';
import type { ToolSearch } from '../server/server.js';
import { areaLines, clip, findArea, page } from './search-areas.js';
import { summaryOf } from './search-index.js';
import type { Explanation } from './search-rank.js';
import { loadIndex, rank } from './search-rank.js';
import { queryIntent } from './search-text.js';
import { SEARCH_LIMITS, SEARCH_METHODS, SEARCH_TOOL_NAMES, SEARCH_TOOLS } from './search-tools.js';

export type { Lexicon, SearchSource } from './search-index.js';
export { buildSearchIndex, fieldTexts } from './search-index.js';

/** The `search_tools` arguments, checked. */
type SearchArguments = { query?: string; limit: number; method?: string; tag?: string; page: number };

function searchArguments(args: unknown): SearchArguments {
  const invalid = (why: string) => new ProtocolError(ProtocolErrorCode.InvalidParams, `Invalid arguments for tool ${SEARCH_TOOL_NAMES.search}: ${why}`);
  const { query, limit, method, tag, page: p } = (typeof args === 'object' && args !== null ? args : {}) as Record<string, unknown>;
  if (query !== undefined && (typeof query !== 'string' || query.trim().length === 0)) throw invalid('query must be a non-empty string');
  const positive = (v: unknown, name: string) => {
    if (v !== undefined && (typeof v !== 'number' || !Number.isInteger(v) || v < 1)) throw invalid(`${name} must be a positive integer`);
  };
  positive(limit, 'limit');
  positive(p, 'page');
  if (method !== undefined && (typeof method !== 'string' || !(SEARCH_METHODS as readonly string[]).includes(method.toUpperCase())))
    throw invalid(`method must be one of ${SEARCH_METHODS.join(', ')}`);
  if (tag !== undefined && (typeof tag !== 'string' || tag.trim().length === 0)) throw invalid('tag must be a non-empty string');
  return {
    ...(typeof query === 'string' ? { query: query.slice(0, SEARCH_LIMITS.queryChars) } : {}),
    limit: Math.min((limit as number | undefined) ?? SEARCH_LIMITS.defaultLimit, SEARCH_LIMITS.maxLimit),
    ...(typeof method === 'string' ? { method: method.toUpperCase() } : {}),
    ...(typeof tag === 'string' ? { tag: tag.slice(0, 200) } : {}),
    page: Math.min((p as number | undefined) ?? 1, 1_000_000),
  };
}

/** The most characters of a query or area name an answer repeats back (JSON-escaped, each may take six bytes: the answer stays far within its budget). */
const ECHO_CHARS = 80;

/** `text` (a query or an area name) as an answer repeats it: JSON-quoted, cut to {@link ECHO_CHARS} characters. */
function echoed(text: string | undefined): string {
  const q = text ?? '';
  return JSON.stringify(q.length > ECHO_CHARS ? `${q.slice(0, ECHO_CHARS)}…` : q);
}

/** A description cut to {@link SEARCH_LIMITS}.descriptionChars. */
function cut(text: string, chars: number = SEARCH_LIMITS.descriptionChars): string {
  return text.length > chars ? `${text.slice(0, chars - 1)}…` : text;
}

/** One stderr line per ranked result: its score and what made it (MCPGEN_SEARCH_DEBUG). */
function debugLines(query: string, hits: ReadonlyArray<{ index: number; name: string; score: number }>, why: Map<number, Explanation>): string {
  const lines = [`[search] ${JSON.stringify(query)} intent=${queryIntent(query) ?? 'none'}`];
  hits.forEach((h, i) => {
    const e = why.get(h.index)!;
    const terms = e.terms.map((t) => `${t.term}(idf ${t.idf}; ${t.fields.join(',')})=${t.score}`).join(' ');
    lines.push(
      `[search] #${i + 1} ${h.name} score=${Math.round(h.score * 1000) / 1000} = lexical ${e.lexical} × intent ${e.intent.factor} (query ${e.intent.query ?? '-'}, tool ${e.intent.tool ?? '-'}) × coverage ${e.coverage}; tiebreak ${e.tiebreak}; ${terms}`,
    );
  });
  return `${lines.join('\n')}\n`;
}

/** Longest name a did-you-mean is worked out for: a longer one is no typo, and comparing it would cost. */
const MAX_NAME_FOR_SUGGESTIONS = 128;

/** Edit distance of `a` and `b`, or `limit + 1` as soon as it is sure to exceed `limit`. */
function distance(a: string, b: string, limit: number): number {
  if (Math.abs(a.length - b.length) > limit) return limit + 1;
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    let best = i;
    for (let j = 1; j <= b.length; j++) {
      row[j] = Math.min(prev[j]! + 1, row[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
      best = Math.min(best, row[j]!);
    }
    if (best > limit) return limit + 1;
    prev = row;
  }
  return prev[b.length]!;
}

/**
 * Up to `max` names of `known` close to `name`, closest first: compared without case and
 * separators (`list-pets` ≈ `listPets`), within an edit distance of a third of the length (at
 * least 2), or containing it (4 characters or more).
 */
export function closestNames(name: string, known: Iterable<string>, max = 3): string[] {
  if (name.length > MAX_NAME_FOR_SUGGESTIONS) return [];
  const norm = (s: string) => s.toLowerCase().replace(/[-_.\s/]/g, '');
  const n = norm(name);
  if (n === '') return [];
  const hits: Array<{ name: string; score: number }> = [];
  for (const k of known) {
    const m = norm(k);
    const limit = Math.max(2, Math.floor(Math.max(n.length, m.length) / 3));
    const d = distance(n, m, limit);
    if (d <= limit) hits.push({ name: k, score: d });
    else if (n.length >= 4 && (m.includes(n) || n.includes(m))) hits.push({ name: k, score: limit + 1 + Math.abs(m.length - n.length) / 100 });
  }
  hits.sort((a, b) => a.score - b.score || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return hits.slice(0, max).map((h) => h.name);
}

/**
 * What a model is told when `describe_tool` or `call_tool` names a tool this request cannot see:
 * the closest names it can see, if any, and where to look instead.
 */
export function unknownToolMessage(name: string, known: Iterable<string>): string {
  const near = closestNames(name, known).map((n) => JSON.stringify(n));
  const shown = name.length > 100 ? `${name.slice(0, 99)}…` : name;
  const mean = near.length === 0 ? '' : ` Did you mean ${near.length === 1 ? near[0] : `${near.slice(0, -1).join(', ')} or ${near[near.length - 1]}`}?`;
  return `Unknown tool: ${shown}.${mean} Use ${SEARCH_TOOL_NAMES.search} to find the tools for a task, and ${SEARCH_TOOL_NAMES.describe} for a tool's arguments.`;
}

/** Search mode per concern preset (manifest `discovery` in its object form): the mode without a preset, and the presets whose mode differs. */
export type DiscoveryModes = { readonly mode: 'list' | 'search' | 'code'; readonly presets?: { readonly [preset: string]: 'list' | 'search' | 'code' } };

/**
 * Loads a serialised index: what the server needs to answer in search mode. Without `discovery`,
 * every request lists the search tools; with it, the requests whose active concern preset (or,
 * without one, the server) is in search mode (`modeOf`).
 */
export function createToolSearch(
  serialised: string,
  discovery: DiscoveryModes = { mode: 'search' },
  env: NodeJS.ProcessEnv = process.env,
): ToolSearch & Required<Pick<ToolSearch, 'modeOf'>> {
  const index = loadIndex(serialised);
  const presets = discovery.presets ?? {};
  const debug = (env[SEARCH_DEBUG_VARIABLE] ?? '') !== '' && env[SEARCH_DEBUG_VARIABLE] !== '0';
  const answer = (text: string, structured: Record<string, unknown>): CallToolResult => ({ content: [{ type: 'text', text }], structuredContent: structured });
  return {
    tools: SEARCH_TOOLS,
    names: SEARCH_TOOL_NAMES,
    modeOf: (preset) => (preset !== undefined && Object.hasOwn(presets, preset) ? presets[preset]! : discovery.mode),
    unknown: unknownToolMessage,
    search(args, keep, describe, signature): CallToolResult {
      const a = searchArguments(args);
      const area = a.tag === undefined ? undefined : findArea(index, a.tag);
      if (area === -1) {
        const known = index.data.areas.map(([n]) => n);
        const near = closestNames(a.tag!, known).map((n) => JSON.stringify(n));
        return answer(
          `No area ${echoed(a.tag)}.${near.length > 0 ? ` Did you mean ${near.join(' or ')}?` : ''} Call ${SEARCH_TOOL_NAMES.search} without a query for the areas.`,
          { results: [] },
        );
      }
      const visible = (doc: number): boolean => {
        const [name, , toolArea, method] = index.data.tools[doc]!;
        return (area === undefined || toolArea === area) && (a.method === undefined || method === a.method) && keep(name);
      };
      if (a.query === undefined) {
        if (area === undefined) {
          const all = areaLines(index, visible, (doc) => index.data.tools[doc]![0]);
          const p = page(all, a.page, SEARCH_LIMITS.areaPage);
          const lines = p.items.map((x) => `${x.area} (${x.tools}): ${x.about}`);
          const more = p.page < p.pages ? `\nPage ${p.page} of ${p.pages}: page ${p.page + 1} for more.` : '';
          return answer(`Areas (tools): pass one as tag, with or without a query.\n${lines.join('\n')}${more}`, {
            areas: p.items,
            page: p.page,
            pages: p.pages,
          });
        }
        const docs = index.data.tools.map((_, doc) => doc).filter(visible);
        const p = page(docs, a.page, SEARCH_LIMITS.toolPage);
        const tools = p.items.map((doc) => {
          const name = index.data.tools[doc]![0];
          const tool = describe(name);
          return {
            name,
            summary: clip(
              summaryOf({ ...(tool?.title !== undefined ? { title: tool.title } : {}), description: tool?.description ?? '' }).summary,
              SEARCH_LIMITS.toolLineChars,
            ),
          };
        });
        const more = p.page < p.pages ? `\nPage ${p.page} of ${p.pages}: page ${p.page + 1} for more.` : '';
        const areaName = index.data.areas[area]![0];
        return answer(`${areaName}: ${docs.length} tools.\n${tools.map((t) => `${t.name}: ${t.summary}`).join('\n')}${more}`, {
          area: areaName,
          tools,
          page: p.page,
          pages: p.pages,
        });
      }
      const why = debug ? new Map<number, Explanation>() : undefined;
      const hits = rank(index, a.query, a.limit, visible, why);
      if (why !== undefined) process.stderr.write(debugLines(a.query, hits, why));
      const resultsAt = (chars: number) =>
        hits.map((hit) => {
          const tool = describe(hit.name);
          const area = index.data.areas[index.data.tools[hit.index]![2]]![0];
          // code mode: the operation's TypeScript signature, what the model writes code against
          const sig = signature?.(hit.name);
          return {
            name: hit.name,
            ...(tool?.title !== undefined ? { title: tool.title } : {}),
            description: cut(tool?.description ?? '', chars),
            ...(sig !== undefined ? { signature: sig } : {}),
            ...(index.data.areas.length > 1 ? { area } : {}),
            score: Math.round(hit.score * 100) / 100,
          };
        });
      // at the default limit or below, descriptions are cut shorter until the answer fits answerBytes
      let chars: number = SEARCH_LIMITS.descriptionChars;
      let results = resultsAt(chars);
      while (hits.length <= SEARCH_LIMITS.defaultLimit && chars > 40 && Buffer.byteLength(JSON.stringify(results)) > SEARCH_LIMITS.answerBytes)
        results = resultsAt((chars -= 20));
      const text =
        results.length > 0
          ? JSON.stringify(results)
          : `No tool matches ${echoed(a.query)}; try other words, or call ${SEARCH_TOOL_NAMES.search} without a query to browse the areas.`;
      return answer(text, { results });
    },
  };
}
