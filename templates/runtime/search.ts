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
