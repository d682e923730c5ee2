/**
 * How `build` and `validate` print what they report besides diagnostics (the summary and drift
 * list of `summary.ts`): `--report` text, `--format json` as one document with the diagnostics
 * (docs/cli.md), `--format github` annotations of drifted files.
 */
import type { Diagnostic } from '../core/diagnostics.js';
import { largestTools } from '../ir/surface/judge.js';
import type { IrServer } from '../ir/types.js';
import { type DriftEntry, presetSummaries, type ResultsSummary, type Summary } from '../summary.js';
import { type DiagnosticJson, diagnosticJson, escapeGithubData, escapeGithubProperty } from './format.js';

/**
 * The text of the results part: the ten largest examples once compacted (most tokens first) and
 * the tools whose compacted example alone is over budget.
 *
 * @example
 * // Result examples: 885 tools have a JSON response example in the spec; o200k tokens of the largest, as documented → compacted:
 * //     repos/get-content 25,148 → 9,977 (over maxTokens 8,000)
 * //   1 tool's compacted example is over its maxTokens on its own: its results will be cut (repos/get-content).
 */
export function formatResultsReport(r: ResultsSummary): string {
  const n = (x: number) => x.toLocaleString('en-US');
  if (r.withExamples === 0) return 'Result examples: no tool has a JSON response example in the spec.\n';
  const lines = [
    `Result examples: ${r.withExamples} tool${r.withExamples === 1 ? ' has' : 's have'} a JSON response example in the spec; o200k tokens of the largest, as documented → compacted:`,
  ];
  const largest = [...r.tools]
    .sort((a, b) => b.tokens - a.tokens || b.rawTokens - a.rawTokens || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
    .slice(0, 10);
  for (const t of largest) lines.push(`    ${t.name} ${n(t.rawTokens)} → ${n(t.tokens)}${t.tokens > t.maxTokens ? ` (over maxTokens ${n(t.maxTokens)})` : ''}`);
  const over = r.overBudget;
  if (over.length === 0) lines.push("  No compacted example is over its tool's maxTokens.");
  else {
    const shown = over.slice(0, 10).join(', ') + (over.length > 10 ? ` and ${over.length - 10} more` : '');
    lines.push(
      `  ${over.length} tool${over.length === 1 ? "'s compacted example is" : "s' compacted examples are"} over ${over.length === 1 ? 'its' : 'their'} maxTokens on ${over.length === 1 ? 'its' : 'their'} own: ${over.length === 1 ? 'its' : 'their'} results will be cut (${shown}).`,
    );
  }
  return lines.join('\n') + '\n';
}

/**
 * The `--report` lines of the manifest's argument rules: each rule, what it sets and how many
 * tools it changed (the env variable's name is shown, a constant `value` never is).
 *
 * @example
 * // Argument rules: 3 rules changed 157 tools:
 * //   arguments[0] token: hidden, from env SLACK_TOKEN: 155 tools
 * //   arguments[1] channel: shown as conversation: 2 tools (conversations_history, conversations_replies)
 */
export function formatArgumentRulesReport(ir: IrServer): string {
  const rules = ir.argumentRules;
  if (!rules || rules.length === 0) return '';
  const changed = new Set(rules.flatMap((r) => r.tools)).size;
  const lines = [`Argument rules: ${rules.length} rule${rules.length === 1 ? '' : 's'} changed ${changed} tool${changed === 1 ? '' : 's'}:`];
  for (const r of rules) {
    const sets = r.sets.map((f) =>
      f === 'hidden' ? `hidden, ${r.fill === 'value' ? 'a constant value' : `from env ${r.fill?.env ?? ''}`}` : f === 'as' ? `shown as ${r.as ?? ''}` : f,
    );
    const few = r.tools.length > 0 && r.tools.length <= 3 ? ` (${r.tools.join(', ')})` : '';
    lines.push(
      `  arguments[${r.index}] ${r.name}: ${sets.join(', ')}: ${r.tools.length === 0 ? 'no tool' : `${r.tools.length} tool${r.tools.length === 1 ? '' : 's'}`}${few}`,
    );
  }
  return lines.join('\n') + '\n';
}

const DOMINANT = { description: 'description', inputSchema: 'input schema', outputSchema: 'output schema' } as const;

/**
 * The `--report` lines: the largest tools and what dominates each, overall and per preset. In
 * search mode the measured list is the search catalogue (what search_tools reaches), not the
 * `tools/list` a client receives, and each is named for what it is.
 *
 * @example
 * // Tool surface (search mode): tools/list 1,618 bytes (3 tools); search catalogue 6 tools, 4,832 bytes.
 * //   Largest tools in the search catalogue:
 */
export function formatSurfaceReport(ir: IrServer): string {
  const s = ir.surface;
  if (!s) return '';
  const n = (x: number) => x.toLocaleString('en-US');
  const tokens = new Map((s.tokens?.largest ?? []).map((t) => [t.name, t.tokens]));
  const counted = s.tokens ? `, ${n(s.tokens.total)} tokens (o200k)` : '';
  const lines = s.search
    ? [
        `Tool surface (${s.search.mode === 'code' ? 'code' : 'search'} mode): tools/list ${n(s.search.listBytes)} bytes${s.search.tokens !== undefined ? `, ${n(s.search.tokens)} tokens (o200k)` : ''} (${s.search.tools.length} tools); search catalogue ${s.tools.length} tools, ${n(s.listBytes)} bytes${counted}.`,
      ]
    : [`Tool surface: ${s.tools.length} tools, tools/list ${n(s.listBytes)} bytes${counted}.`];
  if (s.outputSchemasDropped.length)
    lines.push(
      `  ${s.outputSchemasDropped.length} output schema(s) dropped for size (outputSchemaMaxBytes); ${s.inputSchemasCut.length} input schema(s) cut (inputSchemaMaxBytes).`,
    );
  lines.push(s.search ? '  Largest tools in the search catalogue:' : '  Largest tools:');
  for (const line of largestTools(s)) {
    const name = line.split(' ')[0]!;
    lines.push(`    ${line}${tokens.has(name) ? ` [${tokens.get(name)} tokens]` : ''}`);
  }
  if (ir.entry === 'custom') lines.push('  Registered at run time (src/main.ts): not measured here; the server logs their count and bytes at start.');
  for (const p of presetSummaries(ir)) {
    lines.push(
      `  Preset ${p.name}${p.catalogue ? ' (search mode)' : ''}: ${p.tools} tools, tools/list ${n(p.listBytes)} bytes${p.listTokens !== null ? `, ${n(p.listTokens)} tokens (o200k)` : ''}${p.catalogue ? `; search catalogue ${p.catalogue.tools} tools, ${n(p.catalogue.listBytes)} bytes` : ''}; largest:`,
    );
    for (const t of p.largest) lines.push(`    ${t.name} ${t.bytes} bytes${t.tokens !== null ? ` [${t.tokens} tokens]` : ''}, mostly ${DOMINANT[t.dominant]}`);
  }
  return lines.join('\n') + '\n';
}

/** The document `--format json` prints, once, on stdout. */
export type JsonReport = { diagnostics: DiagnosticJson[]; summary: Summary | null; drift: DriftEntry[] };

/** The `--format json` document, ending with a newline; keys in a fixed order. */
export function formatJsonReport(diagnostics: readonly Diagnostic[], summary: Summary | null, drift: readonly DriftEntry[]): string {
  const doc: JsonReport = {
    diagnostics: diagnostics.map(diagnosticJson),
    summary,
    drift: drift.map((d) => ({ change: d.change, file: d.file })),
  };
  return JSON.stringify(doc, null, 2) + '\n';
}

const DRIFT_TEXT: Record<DriftEntry['change'], string> = {
  added: 'would be added: it is generated but missing from the output folder',
  changed: 'is out of date: it differs from what mcpgen generates',
  removed: 'would be removed: mcpgen no longer generates it',
  missing: 'is missing: a handler file the server imports (`mcpgen build` writes a stub)',
};

/** One GitHub Actions `::error` annotation per drifted file. */
export function formatGithubDrift(drift: readonly DriftEntry[], manifest: string): string {
  return drift
    .map(
      (d) =>
        `::error file=${escapeGithubProperty(d.file)},title=${escapeGithubProperty(`mcpgen drift (${d.change})`)}::${escapeGithubData(`${d.file} ${DRIFT_TEXT[d.change]}; run \`mcpgen build ${manifest}\` and commit the result`)}\n`,
    )
    .join('');
}

/** The text form of the drift list (stderr), as `build --check` has always printed it. */
export function formatTextDrift(drift: readonly DriftEntry[], output: string, manifest: string): string {
  const lines = drift.map((d) =>
    d.change === 'missing' ? `  missing  ${d.file} (handler file; \`mcpgen build\` writes a stub)` : `  ${d.change.padEnd(8)} ${d.file}`,
  );
  return `${output} is out of date with ${manifest}; ${drift.length} file(s) would change:\n${lines.join('\n')}\nRun \`mcpgen build ${manifest}\` and commit the result.\n`;
}
