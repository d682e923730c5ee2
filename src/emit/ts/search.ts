/**
 * Emits `src/search-index.gen.ts` for search mode (manifest `discovery: search`): the index of
 * every tool, built here with the generated server's own code (templates/runtime/search/search-index.ts)
 * and mcpgen's WordNet lexicon (ir/features/search-lexicon.ts), embedded as one string the server loads at
 * start-up, so no start-up time is spent indexing and the ranking is fixed by the build.
 */

import type { SearchSource } from '../../../templates/runtime/search/search-index.js';
import { buildSearchIndex } from '../../../templates/runtime/search/search-index.js';
import { wordnetLexicon } from '../../ir/features/search-lexicon.js';
import { THESAURUS } from '../../ir/features/search-thesaurus.js';
import type { IrServer } from '../../ir/types.js';
import { TS_HEADER } from '../header.js';
import { tsLiteral, tsString } from '../safe.js';

/** The tools of `ir` as the index sees them: operation tools (with tags and method), then extra tools. */
export function searchSources(ir: IrServer): SearchSource[] {
  const ops: SearchSource[] = ir.tools.map((t) => ({
    name: t.name,
    ...(t.title !== undefined ? { title: t.title } : {}),
    ...(t.description !== undefined ? { description: t.description } : {}),
    tags: t.tags,
    method: t.method,
    path: t.path,
    inputSchema: t.inputSchema,
  }));
  const extra: SearchSource[] = ir.extraTools.map((t) => ({
    name: t.name,
    ...(t.title !== undefined ? { title: t.title } : {}),
    ...(t.description !== undefined ? { description: t.description } : {}),
    inputSchema: t.inputSchema,
  }));
  return [...ops, ...extra];
}

/**
 * Renders `src/search-index.gen.ts`; when presets have a discovery mode of their own (manifest
 * `discovery.presets`), also `discovery`: the mode without a preset and each such preset's.
 */
export function emitSearchIndexFile(ir: IrServer): string {
  const index =
    TS_HEADER +
    '\n/** The index `search_tools` ranks with (BM25F over tool fields and their WordNet words, serialised at build time). */\n' +
    `export const searchIndex: string = ${tsString(buildSearchIndex(searchSources(ir), wordnetLexicon(), THESAURUS))};\n`;
  if (ir.presetDiscovery === undefined && ir.discovery !== 'code') return index;
  const modes = { mode: ir.discovery ?? 'list', presets: ir.presetDiscovery };
  return (
    index +
    '\n/** What `tools/list` lists (manifest `discovery`): the search tools (`search`) or the tools (`list`), without a preset and per preset. */\n' +
    `export const discovery = ${tsLiteral(modes, 2)} as const;\n`
  );
}
