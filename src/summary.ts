/**
 * The summary of what `build` and `validate` generated (or would generate) and the drift list of
 * `build --check`: data both the library (`api.ts`, `project.ts`) and the CLI return. How the
 * CLI prints them (text, `--format json`, `--format github`) is `cli/report.ts`.
 */

import { discoveryOf } from './ir/features/discovery.js';
import { presetToolSizes } from './ir/surface/measure.js';
import type { IrServer } from './ir/types.js';
import type { WriteReport } from './write/tree.js';

/** One file a `build --check` found out of date; `file` is shown as the user sees the output folder (`server/src/tools.gen.ts`). */
export type DriftEntry = {
  /** `added`: would be created; `changed`: differs; `removed`: no longer generated; `missing`: a handler file `build` would write a stub for. */
  change: 'added' | 'changed' | 'removed' | 'missing';
  file: string;
};

/** The summary of a successful model stage (both commands) and write (build). */
export type Summary = {
  name: string;
  version: string;
  /** Output directory as shown to the user. */
  output: string;
  /** Every tool: operation tools and extra tools (and `persist_justification` when gated). */
  tools: number;
  /** `entry: custom`: src/main.ts may register tools, prompts and resources at run time, which no count here includes (the server logs them at start). */
  registeredAtRunTime?: true;
  operationTools: number;
  extraTools: number;
  /** Prompts served: the manifest's, gate prompts and `with_context`. */
  prompts: number;
  resources: number;
  resourceTemplates: number;
  concerns: number;
  preprocessors: number;
  gatedTools: number;
  /** Bytes of the `tools/list` result's `tools` array (null when not measured). */
  listBytes: number | null;
  /** o200k tokens of the same, when counted (`--report`, `budget.maxTokens`). */
  listTokens: number | null;
  /** Tools publishing an output schema. */
  withOutputSchema: number | null;
  /** Output schemas dropped for size; input schemas cut to `inputSchemaMaxBytes`. */
  outputSchemasDropped: number | null;
  inputSchemasCut: number | null;
  /** `search` when the server lists search_tools, describe_tool and call_tool instead of its tools to a client that selected no preset (each preset's own mode: `presets[].discovery`). */
  discovery: 'list' | 'search' | 'code';
  /** Code mode: o200k tokens of the `tools/list` result a client reads (search_tools, describe_tool, execute…); else absent. */
  codeListTokens?: number;
  /** Search mode: bytes of the `tools` array a client lists (`listBytes` is then the catalogue behind search_tools); else null. */
  searchListBytes: number | null;
  /** The surface with each concern preset selected, in manifest order. */
  presets: PresetSummary[];
  /** The largest tools of the whole list (up to ten), with what dominates each. */
  largest: Contributor[];
  /** `build --report` only: the tokens of the tools' documented JSON response examples. */
  results?: ResultsSummary;
  /** With argument rules in the manifest: each rule (`arguments[index]`), what it sets and how many tools it changed. */
  argumentRules?: Array<{ index: number; name: string; sets: string[]; tools: number }>;
  /** `build` (not `--check`) only: what the write did. */
  files?: { added: number; changed: number; removed: number; unchanged: number };
  /** `build` only: handler stubs written (or, with `--check`, missing), as shown to the user. */
  stubs?: string[];
};

/** `build --report`: what the spec's JSON response examples say about result sizes. */
export type ResultsSummary = {
  /** Operation tools with a JSON response example in the spec. */
  withExamples: number;
  /** Those whose compacted example alone is over their `maxTokens` (the server will cut such a result), in tool order. */
  overBudget: string[];
  /** Every tool with an example, in tool order: its largest example's o200k tokens as documented and compacted, and its `maxTokens`. */
  tools: ResultExampleSummary[];
};

/** One tool's largest documented JSON response example. */
export type ResultExampleSummary = { name: string; examples: number; rawTokens: number; tokens: number; maxTokens: number };

/** The results part of the report, from the IR's counts (`undefined` when they were not counted). */
export function resultsSummary(ir: IrServer): ResultsSummary | undefined {
  if (!ir.resultExamples) return undefined;
  const tools = ir.resultExamples.map((e) => ({ name: e.tool, examples: e.examples, rawTokens: e.rawTokens, tokens: e.tokens, maxTokens: e.maxTokens }));
  return { withExamples: tools.length, overBudget: tools.filter((t) => t.tokens > t.maxTokens).map((t) => t.name), tools };
}

/** One of the largest tools of a list: its bytes, tokens when counted, and its largest part. */
export type Contributor = { name: string; bytes: number; tokens: number | null; dominant: 'description' | 'inputSchema' | 'outputSchema' };

/** What a client that selected one preset lists. */
export type PresetSummary = {
  name: string;
  /** `search`: a client that selected the preset lists search_tools, describe_tool and call_tool (`tools`, `listBytes`); `catalogue` measures what they reach. */
  discovery: 'list' | 'search' | 'code';
  tools: number;
  listBytes: number;
  /** Search mode: the tools behind search_tools with the preset selected, and their `tools/list` bytes; else null. */
  catalogue: { tools: number; listBytes: number } | null;
  /** o200k tokens, when counted (`--report`, a token budget); else null. */
  listTokens: number | null;
  prompts: number;
  resources: number;
  resourceTemplates: number;
  /** The preset's largest tools (up to five). */
  largest: Contributor[];
};

/** The largest of `tools`, with what dominates each (the description, input or output schema). */
export function contributors(
  surface: NonNullable<IrServer['surface']>,
  tools: readonly string[] | undefined,
  tokens: ReadonlyArray<{ name: string; tokens: number }> | undefined,
  count: number,
  pool: NonNullable<IrServer['surface']>['tools'] = surface.tools,
): Contributor[] {
  const only = tools ? new Set(tools) : undefined;
  const counted = new Map((tokens ?? []).map((t) => [t.name, t.tokens]));
  return pool
    .filter((t) => !only || only.has(t.name))
    .sort((a, b) => b.bytes - a.bytes || (a.name < b.name ? -1 : 1))
    .slice(0, count)
    .map((t) => {
      const parts: Array<[number, Contributor['dominant']]> = [
        [t.descriptionBytes, 'description'],
        [t.inputBytes, 'inputSchema'],
        [t.outputBytes, 'outputSchema'],
      ];
      parts.sort((a, b) => b[0] - a[0]);
      return { name: t.name, bytes: t.bytes, tokens: counted.get(t.name) ?? null, dominant: parts[0]![1] };
    });
}

/** The summary of every preset's surface. */
export function presetSummaries(ir: IrServer): PresetSummary[] {
  const s = ir.surface;
  if (!s) return [];
  return s.presets.map((p) => ({
    name: p.name,
    discovery: discoveryOf(ir, p.name),
    tools: p.tools.length,
    listBytes: p.listBytes,
    catalogue: p.catalogue ? { tools: p.catalogue.tools.length, listBytes: p.catalogue.listBytes } : null,
    listTokens: p.tokens ? p.tokens.total : null,
    prompts: p.prompts,
    resources: p.resources,
    resourceTemplates: p.resourceTemplates,
    largest: contributors(s, p.tools, p.tokens?.largest, 5, presetToolSizes(s, p)),
  }));
}

/** Prompts the server serves: the manifest's, gate prompts and `with_context`. */
export function servedPrompts(ir: IrServer): number {
  const gatePrompts = new Set(Object.values(ir.reflection?.gates ?? {}).flatMap((gates) => gates.map((g) => g.prompt))).size;
  return ir.prompts.length + gatePrompts + (ir.preprocessors.length > 0 ? 1 : 0);
}

/** The summary of a model (and, for build, of its write). */
export function summarize(ir: IrServer, output: string, written?: WriteReport, check = false): Summary {
  const s = ir.surface;
  const out: Summary = {
    name: ir.name,
    version: ir.version,
    output,
    tools: s ? s.tools.length : ir.tools.length + ir.extraTools.length,
    operationTools: ir.tools.length,
    extraTools: ir.extraTools.length,
    prompts: servedPrompts(ir),
    resources: ir.resources.length,
    resourceTemplates: ir.resourceTemplates.length,
    concerns: ir.concerns?.declarations.length ?? 0,
    preprocessors: ir.preprocessors.length,
    gatedTools: Object.keys(ir.reflection?.gates ?? {}).length,
    listBytes: s ? s.listBytes : null,
    listTokens: s?.tokens ? s.tokens.total : null,
    withOutputSchema: s ? s.withOutputSchema : null,
    outputSchemasDropped: s ? s.outputSchemasDropped.length : null,
    inputSchemasCut: s ? s.inputSchemasCut.length : null,
    discovery: ir.discovery ?? 'list',
    ...(s?.search?.tokens !== undefined ? { codeListTokens: s.search.tokens } : {}),
    searchListBytes: s?.search ? s.search.listBytes : null,
    presets: presetSummaries(ir),
    largest: s ? contributors(s, undefined, s.tokens?.largest, 10) : [],
  };
  if (ir.entry === 'custom') out.registeredAtRunTime = true;
  const results = resultsSummary(ir);
  if (results) out.results = results;
  if (ir.argumentRules) out.argumentRules = ir.argumentRules.map((r) => ({ index: r.index, name: r.name, sets: [...r.sets], tools: r.tools.length }));
  if (written) {
    if (!check)
      out.files = { added: written.added.length, changed: written.changed.length, removed: written.removed.length, unchanged: written.unchanged.length };
    out.stubs = written.stubs.map((f) => `${output}/${f}`);
  }
  return out;
}

/** The drift of a `build --check`, in a fixed order: added, changed, removed, missing handler files. */
export function driftOf(written: WriteReport, output: string): DriftEntry[] {
  const at = (f: string) => `${output}/${f}`;
  return [
    ...written.added.map((f) => ({ change: 'added' as const, file: at(f) })),
    ...written.changed.map((f) => ({ change: 'changed' as const, file: at(f) })),
    ...written.removed.map((f) => ({ change: 'removed' as const, file: at(f) })),
    ...written.stubs.map((f) => ({ change: 'missing' as const, file: at(f) })),
  ];
}
