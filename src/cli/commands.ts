/**
 * The `build` and `validate` commands.
 */
import path from 'node:path';
import { clientLines, shellQuote } from '../emit/project/client-lines.js';
import { ENTRY_POINT } from '../emit/project/ship.js';
import type { IrServer } from '../ir/types.js';
import { type BuildOutcome, buildProject, type ValidateOutcome, validateProject } from '../project.js';
import { type DriftEntry, presetSummaries, resultsSummary, type Summary, servedPrompts } from '../summary.js';
import { formatDiagnostics } from './format.js';
import { formatArgumentRulesReport, formatGithubDrift, formatJsonReport, formatResultsReport, formatSurfaceReport, formatTextDrift } from './report.js';
import { NO_PROGRESS, type Paint, type Progress, paint } from './terminal.js';

/**
 * Where the commands read and write. `colors` (default: none) styles text output per stream;
 * `progress` (default: none) starts a progress indicator for a long step.
 */
export type Io = {
  stdout: (s: string) => void;
  stderr: (s: string) => void;
  cwd: string;
  colors?: { stdout: Paint; stderr: Paint };
  progress?: (label: string) => Progress;
  /** Ends `build --watch` when aborted (default: SIGINT or SIGTERM). */
  signal?: AbortSignal;
};

/** Diagnostics output formats. */
export type Format = 'text' | 'json' | 'github';

/** What a command found, printed once at its end in the chosen format. */
type Outcome = { diagnostics: Parameters<typeof formatDiagnostics>[0]; summary: Summary | null; drift: DriftEntry[]; manifest: string; output?: string };

/**
 * `json`: one document on stdout (docs/cli.md). `text` and `github`: diagnostics on
 * stderr, then the drift list (text) or one annotation per drifted file (github).
 */
function report(io: Io, format: Format, o: Outcome): void {
  if (format === 'json') {
    io.stdout(formatJsonReport(o.diagnostics, o.summary, o.drift));
    return;
  }
  if (o.diagnostics.length) io.stderr(formatDiagnostics(o.diagnostics, format, io.colors?.stderr));
  if (o.drift.length === 0) return;
  io.stderr(format === 'github' ? formatGithubDrift(o.drift, o.manifest) : formatTextDrift(o.drift, o.output ?? '.', o.manifest));
}

/**
 * `12 tools, 2 prompts, 3 resources, 1 resource template, 2 concerns, 2 preprocessors, 1 gated tool`
 * (the parts after resources only when there are any). Prompts count every prompt the server
 * serves: the manifest's, gate prompts and `with_context`.
 */
function summary(ir: IrServer): string {
  const n = (count: number, word: string) => `${count} ${word}${count === 1 ? '' : 's'}`;
  const prompts = servedPrompts(ir);
  const parts = [n(ir.tools.length + ir.extraTools.length, 'tool') + surfaceNote(ir), n(prompts, 'prompt'), n(ir.resources.length, 'resource')];
  if (ir.resourceTemplates.length > 0) parts.push(n(ir.resourceTemplates.length, 'resource template'));
  if (ir.concerns) parts.push(n(ir.concerns.declarations.length, 'concern'));
  if (ir.preprocessors.length > 0) parts.push(n(ir.preprocessors.length, 'preprocessor'));
  if (ir.reflection) parts.push(n(Object.keys(ir.reflection.gates).length, 'gated tool'));
  // the build cannot see what src/main.ts registers: the server logs it at start
  if (ir.entry === 'custom') parts.push('and what src/main.ts registers at run time');
  return parts.join(', ');
}

/** One line per concern preset (each ending in a newline): what a client that selected it lists. */
function presetLines(ir: IrServer): string {
  const n = (count: number, word: string) => `${count} ${word}${count === 1 ? '' : 's'}`;
  return presetSummaries(ir)
    .map((p) => {
      const share = ir.surface && ir.surface.listBytes > 0 ? `, ${((100 * p.listBytes) / ir.surface.listBytes).toFixed(1)}% of all` : '';
      const tokens = p.listTokens !== null ? `, ${p.listTokens.toLocaleString('en-US')} tokens` : '';
      // a preset in search mode lists the search tools; its catalogue is what they reach
      const search = p.catalogue
        ? `, ${p.discovery} mode; catalogue ${n(p.catalogue.tools, 'tool')}, ${p.catalogue.listBytes.toLocaleString('en-US')} bytes`
        : '';
      const parts = [
        n(p.tools, 'tool') + ` (tools/list ${p.listBytes.toLocaleString('en-US')} bytes${share}${tokens}${search})`,
        n(p.prompts, 'prompt'),
        n(p.resources, 'resource'),
      ];
      if (p.resourceTemplates > 0) parts.push(n(p.resourceTemplates, 'resource template'));
      return `  preset ${p.name}: ${parts.join(', ')}\n`;
    })
    .join('');
}

/** `(tools/list 1,669,794 bytes, ~412,000 tokens; 729 with an output schema)`. */
function surfaceNote(ir: IrServer): string {
  const s = ir.surface;
  if (!s) return '';
  const tokens = s.tokens ? `, ${s.tokens.total.toLocaleString('en-US')} tokens` : '';
  if (s.search)
    return ` (${s.search.mode === 'code' ? 'code' : 'search'} mode: tools/list ${s.search.listBytes.toLocaleString('en-US')} bytes${s.search.tokens !== undefined ? `, ${s.search.tokens.toLocaleString('en-US')} tokens` : ''}, ${s.search.tools.length} tools; catalogue ${s.listBytes.toLocaleString('en-US')} bytes${tokens}; ${s.withOutputSchema} with an output schema)`;
  return ` (tools/list ${s.listBytes.toLocaleString('en-US')} bytes${tokens}; ${s.withOutputSchema} with an output schema)`;
}

/** `mcpgen validate`: every check `build` makes, including what is in the output folder; nothing written. */
export async function runValidate(opts: { manifest: string; format: Format; quiet?: boolean; cache?: boolean }, io: Io): Promise<number> {
  const progress = opts.quiet ? NO_PROGRESS : (io.progress?.(`Validating ${opts.manifest}`) ?? NO_PROGRESS);
  let done: ValidateOutcome;
  try {
    done = await validateProject({ manifest: opts.manifest, cwd: io.cwd, onStage: progress.stage, cache: opts.cache !== false });
  } finally {
    progress.stop();
  }
  const { result, ir } = done;
  report(io, opts.format, { diagnostics: result.diagnostics, summary: result.summary, drift: [], manifest: opts.manifest });
  if (!result.ok) return 1;
  const c = io.colors?.stdout ?? paint(false);
  if (opts.format === 'text' && !opts.quiet) io.stdout(`${opts.manifest}: ${c.green('valid')} (${ir ? summary(ir) : '0 tools'})\n`);
  if (opts.format === 'text' && !opts.quiet && ir) io.stdout(presetLines(ir));
  return 0;
}

/** `mcpgen build [--check]`. */
export async function runBuild(
  opts: { manifest: string; out?: string; check: boolean; format: Format; report?: boolean; quiet?: boolean; cache?: boolean },
  io: Io,
): Promise<number> {
  const started = performance.now();
  const progress = opts.quiet ? NO_PROGRESS : (io.progress?.(`${opts.check ? 'Checking' : 'Building'} ${opts.manifest}`) ?? NO_PROGRESS);
  let done: BuildOutcome;
  try {
    done = await buildProject({
      manifest: opts.manifest,
      cwd: io.cwd,
      check: opts.check,
      report: opts.report === true,
      onStage: progress.stage,
      cache: opts.cache !== false,
      ...(opts.out !== undefined ? { out: opts.out } : {}),
    });
  } finally {
    progress.stop();
  }
  const { result, ir } = done;
  const out = result.output ?? result.outDir ?? '.';
  const written = result.files;
  if (!ir || !written) {
    report(io, opts.format, { diagnostics: result.diagnostics, summary: null, drift: [], manifest: opts.manifest });
    return 1;
  }
  report(io, opts.format, { diagnostics: result.diagnostics, summary: result.summary, drift: result.drift, manifest: opts.manifest, output: out });
  if (result.drift.length > 0) return 1;
  if (opts.format !== 'text' || opts.quiet) return 0;
  const c = io.colors?.stdout ?? paint(false);
  if (opts.check) {
    io.stdout(`${out}: ${c.green('up to date')} (${done.fileCount} files)\n`);
    return 0;
  }
  const ms = Math.round(performance.now() - started);
  io.stdout(
    `${c.green('Built')} ${c.bold(ir.name)} into ${out}: ${summary(ir)}; ` +
      `${written.added.length} added, ${written.changed.length} changed, ${written.removed.length} removed, ${written.unchanged.length} unchanged (${ms} ms)\n`,
  );
  io.stdout(presetLines(ir));
  for (const f of written.stubs) io.stdout(`Wrote handler stub ${out}/${f}: implement its functions (mcpgen will not overwrite it).\n`);
  if (opts.report) io.stdout(formatSurfaceReport(ir) + formatArgumentRulesReport(ir));
  const results = opts.report ? resultsSummary(ir) : undefined;
  if (results) io.stdout(formatResultsReport(results));
  io.stdout(nextSteps(ir, out, result.outDir!));
  return 0;
}

/** The two commands after a build: build the generated project, then connect Claude Code to it (the line test/e2e/client-lines.test.ts runs). */
function nextSteps(ir: IrServer, shown: string, outDir: string): string {
  const entry = path.join(outDir, ENTRY_POINT);
  return `Next:\n  cd ${shellQuote(shown)} && npm install && npm run build\n  ${clientLines(ir, { claude: entry }).claudeStdio}\n`;
}
