/**
 * Measuring the tool surface once fit.ts has made it fit: the `tools/list` a client will receive
 * (whole, per concern preset, in search and code mode) measured in bytes with the generated
 * server's own listing code (templates/runtime/core/surface.ts), and in o200k tokens when asked
 * ({@link countTokens}); judge.ts gives the verdict against the manifest's `budget`.
 */

import { matches } from '../../../templates/runtime/concerns/concerns.js';
import {
  DEFAULT_JUSTIFICATION_SCHEMA,
  listBytes,
  persistToolFor,
  type ToolEntry,
  toolEntry,
  withConcernMeta,
} from '../../../templates/runtime/core/surface.js';
import { CODE_TOOLS, SEARCH_TOOLS } from '../../../templates/runtime/search/search-tools.js';
import { o200k } from '../../core/lazy.js';
import { discoveryOf, usesSearch } from '../features/discovery.js';
import { WITH_CONTEXT_PROMPT } from '../features/preprocessors.js';
import type { IrPresetSurface, IrServer, IrSurface } from '../types.js';
import type { FitReport } from './fit.js';

const bytes = (v: unknown): number => (v === undefined ? 0 : Buffer.byteLength(JSON.stringify(v)));

/** Search mode: the `tools/list` entries (search_tools, describe_tool, call_tool, the gate's persist tool). */
export function searchEntries(ir: IrServer, mode: 'search' | 'code' = 'search'): ToolEntry[] {
  const entries: ToolEntry[] = [...(mode === 'code' ? CODE_TOOLS : SEARCH_TOOLS)];
  const r = ir.reflection;
  if (r && r.mode !== 'sampling') {
    const mappings = ir.concerns?.exposeInMeta ? (ir.concerns.mappings.tools ?? {}) : {};
    const persist = persistToolFor(r.justificationSchema ?? DEFAULT_JUSTIFICATION_SCHEMA, r.domains);
    entries.push(Object.hasOwn(mappings, persist.name) ? withConcernMeta(persist, mappings[persist.name]) : persist);
  }
  return entries;
}

/** The `tools/list` entries of a server, unfiltered, in the order the server lists them. */
export function toolEntries(ir: IrServer): ToolEntry[] {
  const mappings = ir.concerns?.exposeInMeta ? (ir.concerns.mappings.tools ?? {}) : {};
  const meta = (e: ToolEntry): ToolEntry => (Object.hasOwn(mappings, e.name) ? withConcernMeta(e, mappings[e.name]) : e);
  const entries = [...ir.tools, ...ir.extraTools].map((t) => meta(toolEntry(t)));
  const r = ir.reflection;
  if (r && r.mode !== 'sampling') {
    entries.push(meta(persistToolFor(r.justificationSchema ?? DEFAULT_JUSTIFICATION_SCHEMA, r.domains)));
  }
  return entries;
}

/**
 * The catalogue a client that selected `preset` sees: the unfiltered entries filtered with the
 * generated server's own matching rule (templates/runtime/concerns/concerns.ts). In list mode that is what
 * `tools/list` lists; in search mode, what `search_tools` searches.
 */
export function presetEntries(ir: IrServer, preset: string, entries: readonly ToolEntry[] = toolEntries(ir)): ToolEntry[] {
  const c = ir.concerns;
  if (!c || !Object.hasOwn(c.presets, preset)) return [...entries];
  const prefs = c.presets[preset] ?? {};
  const tools = c.mappings.tools ?? {};
  return entries.filter((e) => matches(Object.hasOwn(tools, e.name) ? tools[e.name] : undefined, prefs));
}

/**
 * The `tools/list` entries a client that selected `preset` receives, whatever its mode: its
 * catalogue ({@link presetEntries}) in list mode; in search mode the search tools, with the gate's
 * persist tool when the preset shows it (the server lists the search tools unfiltered).
 */
export function presetListed(ir: IrServer, preset: string, entries: readonly ToolEntry[] = toolEntries(ir)): ToolEntry[] {
  const mode = discoveryOf(ir, preset);
  if (mode === 'list') return presetEntries(ir, preset, entries);
  const front = searchEntries(ir, mode);
  const shown = new Set(presetEntries(ir, preset, front).map((e) => e.name));
  return front.filter((e) => SEARCH_TOOLS.includes(e) || CODE_TOOLS.includes(e) || shown.has(e.name));
}

/** The surface of every concern preset, in manifest order. */
function measurePresets(ir: IrServer, entries: readonly ToolEntry[], listBytes: (list: readonly ToolEntry[]) => number): IrPresetSurface[] {
  const c = ir.concerns;
  if (!c) return [];
  const gatePrompts = [...new Set(Object.values(ir.reflection?.gates ?? {}).flatMap((gates) => gates.map((g) => g.prompt)))];
  const prompts = [...ir.prompts.map((p) => p.name), ...gatePrompts, ...(ir.preprocessors.length > 0 ? [WITH_CONTEXT_PROMPT] : [])];
  return Object.entries(c.presets).map(([name, prefs]) => {
    const visible = (kind: 'prompts' | 'resources' | 'resourceTemplates', id: string): boolean => {
      const m = c.mappings[kind] ?? {};
      return matches(Object.hasOwn(m, id) ? m[id] : undefined, prefs);
    };
    const catalogue = presetEntries(ir, name, entries);
    const listed = presetListed(ir, name, entries);
    return {
      name,
      tools: listed.map((e) => e.name),
      listBytes: listBytes(listed),
      ...(discoveryOf(ir, name) !== 'list' ? { catalogue: { tools: catalogue.map((e) => e.name), listBytes: listBytes(catalogue) } } : {}),
      prompts: prompts.filter((p) => visible('prompts', p)).length,
      resources: ir.resources.filter((r) => visible('resources', r.uri)).length,
      resourceTemplates: ir.resourceTemplates.filter((t) => visible('resourceTemplates', t.uriTemplate)).length,
    };
  });
}

/** Measures the surface of a finished IR. */
export function measureSurface(ir: IrServer, report: FitReport = { dropped: [], cut: [], describedResults: 0 }): IrSurface {
  const entries = toolEntries(ir);
  const sized = (list: readonly ToolEntry[]): IrSurface['tools'] =>
    list.map((e) => ({
      name: e.name,
      bytes: bytes(e),
      inputBytes: bytes(e.inputSchema),
      outputBytes: bytes(e.outputSchema),
      descriptionBytes: e.description === undefined ? 0 : Buffer.byteLength(e.description),
    }));
  const tools = sized(entries);
  // a list's JSON is its entries' JSON between brackets, separated by commas: summed, not serialised again
  const sizes = new Map<ToolEntry, number>(entries.map((e, i) => [e, tools[i]!.bytes]));
  const measured = (list: readonly ToolEntry[]): number =>
    list.every((e) => sizes.has(e)) ? 2 + Math.max(0, list.length - 1) + list.reduce((n, e) => n + sizes.get(e)!, 0) : listBytes(list);
  return {
    tools,
    listBytes: measured(entries),
    withOutputSchema: entries.filter((e) => e.outputSchema !== undefined).length,
    describedResults: report.describedResults,
    outputSchemasDropped: report.dropped,
    inputSchemasCut: report.cut,
    presets: measurePresets(ir, entries, measured),
    ...(ir.discovery === 'search' ? { search: { tools: searchEntries(ir).map((e) => e.name), listBytes: listBytes(searchEntries(ir)) } } : {}),
    // code mode: its front tools, and their o200k tokens as a client reads the tools/list result
    ...(ir.discovery === 'code'
      ? {
          search: {
            tools: searchEntries(ir, 'code').map((e) => e.name),
            listBytes: listBytes(searchEntries(ir, 'code')),
            mode: 'code' as const,
            tokens: o200k().countTokens(JSON.stringify({ tools: searchEntries(ir, 'code') })),
          },
        }
      : {}),
    ...(usesSearch(ir) ? { front: sized(searchEntries(ir, ir.discovery === 'code' ? 'code' : 'search')) } : {}),
  };
}

/** The sizes of the tools a preset lists: the search tools' for a search-mode preset, else its catalogue's. */
export function presetToolSizes(surface: IrSurface, preset: IrPresetSurface): IrSurface['tools'] {
  const listed = new Set(preset.tools);
  return (preset.catalogue ? (surface.front ?? []) : surface.tools).filter((t) => listed.has(t.name));
}

/**
 * Counts the tokens of the `tools` array with the o200k tokenizer (loaded only here: it costs
 * about a quarter of a second), and of each of the ten largest tools; the same for every preset.
 */
export async function countTokens(ir: IrServer): Promise<{ total: number; largest: Array<{ name: string; tokens: number }> }> {
  const count = o200k().countTokens;
  const entries = toolEntries(ir);
  const cache = new Map<string, number>();
  const tokensOf = (e: ToolEntry): number => {
    let n = cache.get(e.name);
    if (n === undefined) cache.set(e.name, (n = count(JSON.stringify(e))));
    return n;
  };
  const tally = (list: readonly ToolEntry[]) => ({
    total: count(JSON.stringify(list)),
    largest: [...list]
      .sort((a, b) => bytes(b) - bytes(a) || (a.name < b.name ? -1 : 1))
      .slice(0, 10)
      .map((e) => ({ name: e.name, tokens: tokensOf(e) })),
  });
  for (const p of ir.surface?.presets ?? []) p.tokens = tally(presetListed(ir, p.name, entries));
  return tally(entries);
}
