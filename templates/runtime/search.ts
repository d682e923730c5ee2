/**
 * Search mode: instead of every tool, the server lists `search_tools`, `describe_tool` and
 * `call_tool`. The full-text index over the tools (search-index.ts) is built when the project is
 * generated and loaded here at start-up; `createToolSearch` answers `search_tools` with it.
 *
 * This file is copied into generated projects that use search mode.
 */
import MiniSearch from 'minisearch';
import { ProtocolError, ProtocolErrorCode } from '@modelcontextprotocol/server';
import type { CallToolResult } from '@modelcontextprotocol/server';
import { INDEX_OPTIONS, rankTools } from './search-index.js';
import type { SearchDocument } from './search-index.js';
import { SEARCH_LIMITS, SEARCH_TOOLS, SEARCH_TOOL_NAMES } from './search-tools.js';
import type { ToolSearch } from './server.js';

export { buildSearchIndex, expandQuery, INDEX_OPTIONS, rankTools, searchDocument, stem } from './search-index.js';
export type { SearchDocument, SearchSource } from './search-index.js';

/** The `search_tools` arguments, checked: a query (cut to its bound) and a limit (capped). */
function searchArguments(args: unknown): { query: string; limit: number } {
  const invalid = (why: string) => new ProtocolError(ProtocolErrorCode.InvalidParams, `Invalid arguments for tool ${SEARCH_TOOL_NAMES.search}: ${why}`);
  const { query, limit } = args as { query?: unknown; limit?: unknown };
  if (typeof query !== 'string' || query.trim().length === 0) throw invalid('query must be a non-empty string');
  if (limit !== undefined && (typeof limit !== 'number' || !Number.isInteger(limit) || limit < 1)) throw invalid('limit must be a positive integer');
  return { query: query.slice(0, SEARCH_LIMITS.queryChars), limit: Math.min(limit ?? SEARCH_LIMITS.defaultLimit, SEARCH_LIMITS.maxLimit) };
}

/** A description cut to {@link SEARCH_LIMITS}.descriptionChars. */
function cut(text: string): string {
  return text.length > SEARCH_LIMITS.descriptionChars ? `${text.slice(0, SEARCH_LIMITS.descriptionChars - 1)}…` : text;
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
export type DiscoveryModes = { readonly mode: 'list' | 'search'; readonly presets?: { readonly [preset: string]: 'list' | 'search' } };

/**
 * Loads a serialised index: what the server needs to answer in search mode. Without `discovery`,
 * every request lists the search tools; with it, the requests whose active concern preset (or,
 * without one, the server) is in search mode (`modeOf`).
 */
export function createToolSearch(serialised: string, discovery: DiscoveryModes = { mode: 'search' }): ToolSearch & Required<Pick<ToolSearch, 'modeOf'>> {
  const index = MiniSearch.loadJSON<SearchDocument>(serialised, INDEX_OPTIONS);
  const presets = discovery.presets ?? {};
  return {
    tools: SEARCH_TOOLS,
    names: SEARCH_TOOL_NAMES,
    modeOf: (preset) => (preset !== undefined && Object.hasOwn(presets, preset) ? presets[preset]! : discovery.mode),
    unknown: unknownToolMessage,
    search(args, keep, describe): CallToolResult {
      const { query, limit } = searchArguments(args);
      const results = rankTools(index, query, limit, keep).map((hit) => {
        const tool = describe(hit.name);
        return { name: hit.name, ...(tool?.title !== undefined ? { title: tool.title } : {}), description: cut(tool?.description ?? ''), score: hit.score };
      });
      const text = results.length > 0 ? JSON.stringify(results) : `No tool matches ${JSON.stringify(query)}; try other words.`;
      return { content: [{ type: 'text', text }], structuredContent: { results } };
    },
  };
}
