/**
 * Emits `src/search-index.gen.ts` for search mode (manifest `discovery: search`): the full-text
 * index of every tool, built here with the generated server's own index options
 * (templates/runtime/search.ts) and embedded as one string the server loads at start-up, so no
 * start-up time is spent indexing and the ranking is fixed by the build.
 */
import type { IrServer } from '../../ir/types.js';
import { buildSearchIndex } from '../../../templates/runtime/search-index.js';
import type { SearchSource } from '../../../templates/runtime/search-index.js';
import { TS_HEADER } from '../header.js';
import { tsString } from '../safe.js';

/** The tools of `ir` as the index sees them: operation tools (with tags and method), then extra tools. */
export function searchSources(ir: IrServer): SearchSource[] {
  const ops: SearchSource[] = ir.tools.map((t) => ({
    name: t.name,
    ...(t.title !== undefined ? { title: t.title } : {}),
    ...(t.description !== undefined ? { description: t.description } : {}),
    tags: t.tags,
    method: t.method,
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

/** Renders `src/search-index.gen.ts`. */
export function emitSearchIndexFile(ir: IrServer): string {
  return TS_HEADER + '\n/** The full-text index `search_tools` ranks with (MiniSearch, serialised at build time). */\n' + `export const searchIndex: string = ${tsString(buildSearchIndex(searchSources(ir)))};\n`;
}
