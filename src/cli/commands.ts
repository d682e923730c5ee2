/**
 * The `build` and `validate` commands.
 */
import { compile, type CompileResult } from '../compile.js';
import { handlerExports } from '../emit/ts/stubs.js';
import { largestTools } from '../ir/surface.js';
import type { IrServer } from '../ir/types.js';
import { writeTree } from '../write/tree.js';
import { formatDiagnostics } from './format.js';

/** Where the commands read and write. */
export type Io = { stdout: (s: string) => void; stderr: (s: string) => void; cwd: string };

/** Diagnostics output formats. */
export type Format = 'text' | 'json' | 'github';

function report(io: Io, format: Format, list: Parameters<typeof formatDiagnostics>[0]): void {
  if (format === 'json') io.stdout(formatDiagnostics(list, 'json'));
  else if (list.length) io.stderr(formatDiagnostics(list, format));
}

/**
 * `12 tools, 2 prompts, 3 resources, 1 resource template, 2 concerns, 2 preprocessors, 1 gated tool`
 * (the parts after resources only when there are any). Prompts count every prompt the server
 * serves: the manifest's, gate prompts and `with_context`.
 */
function summary(ir: IrServer): string {
  const n = (count: number, word: string) => `${count} ${word}${count === 1 ? '' : 's'}`;
  const gatePrompts = new Set(Object.values(ir.reflection?.gates ?? {}).flatMap((gates) => gates.map((g) => g.prompt))).size;
  const prompts = ir.prompts.length + gatePrompts + (ir.preprocessors.length > 0 ? 1 : 0);
  const parts = [n(ir.tools.length + ir.extraTools.length, 'tool') + surfaceNote(ir), n(prompts, 'prompt'), n(ir.resources.length, 'resource')];
  if (ir.resourceTemplates.length > 0) parts.push(n(ir.resourceTemplates.length, 'resource template'));
  if (ir.concerns) parts.push(n(ir.concerns.declarations.length, 'concern'));
  if (ir.preprocessors.length > 0) parts.push(n(ir.preprocessors.length, 'preprocessor'));
  if (ir.reflection) parts.push(n(Object.keys(ir.reflection.gates).length, 'gated tool'));
  return parts.join(', ');
}

/** `(tools/list 1,669,794 bytes, ~412,000 tokens; 729 with an output schema)`. */
function surfaceNote(ir: IrServer): string {
  const s = ir.surface;
  if (!s) return '';
  const tokens = s.tokens ? `, ${s.tokens.total.toLocaleString('en-US')} tokens` : '';
  return ` (tools/list ${s.listBytes.toLocaleString('en-US')} bytes${tokens}; ${s.withOutputSchema} with an output schema)`;
}

/** The `--report` lines: the largest tools and what dominates each. */
function surfaceReport(ir: IrServer): string {
  const s = ir.surface;
  if (!s) return '';
  const tokens = new Map((s.tokens?.largest ?? []).map((t) => [t.name, t.tokens]));
  const lines = [`Tool surface: ${s.tools.length} tools, tools/list ${s.listBytes.toLocaleString('en-US')} bytes${s.tokens ? `, ${s.tokens.total.toLocaleString('en-US')} tokens (o200k)` : ''}.`];
  if (s.outputSchemasDropped.length) lines.push(`  ${s.outputSchemasDropped.length} output schema(s) dropped for size (outputSchemaMaxBytes); ${s.inputSchemasCut.length} input schema(s) cut (inputSchemaMaxBytes).`);
  lines.push('  Largest tools:');
  for (const line of largestTools(s)) {
    const name = line.split(' ')[0]!;
    lines.push(`    ${line}${tokens.has(name) ? ` [${tokens.get(name)} tokens]` : ''}`);
  }
  return lines.join('\n') + '\n';
}

/**
 * Writes the compiled tree (or, with `check`, only compares it): every conflict with what is in
 * the output folder is reported in `res.diagnostics`, and undefined returned.
 */
function writeCompiled(res: CompileResult & { files: Map<string, string>; outDir: string; ir: NonNullable<CompileResult['ir']> }, check: boolean) {
  return writeTree({
    outDir: res.outDir,
    displayDir: res.displayOut ?? res.outDir,
    files: res.files,
    ...(res.stubs ? { stubs: res.stubs } : {}),
    userFiles: handlerExports(res.ir).keys(),
    check,
    diagnostics: res.diagnostics,
    ...(res.outputAt ? { at: res.outputAt } : {}),
  });
}

/** `mcpgen validate`: every check `build` makes, including what is in the output folder; nothing written. */
export async function runValidate(opts: { manifest: string; format: Format }, io: Io): Promise<number> {
  const res = await compile({ manifestPath: opts.manifest, cwd: io.cwd, emit: true });
  if (res.files && res.outDir && res.ir) await writeCompiled({ ...res, files: res.files, outDir: res.outDir, ir: res.ir }, true);
  const list = res.diagnostics.sorted();
  report(io, opts.format, list);
  if (res.diagnostics.hasErrors) return 1;
  if (opts.format === 'text') io.stdout(`${opts.manifest}: valid (${res.ir ? summary(res.ir) : '0 tools'})\n`);
  return 0;
}

/** `mcpgen build [--check]`. */
export async function runBuild(opts: { manifest: string; out?: string; check: boolean; format: Format; report?: boolean }, io: Io): Promise<number> {
  const started = performance.now();
  const res = await compile({ manifestPath: opts.manifest, cwd: io.cwd, emit: true, tokens: opts.report === true, ...(opts.out !== undefined ? { out: opts.out } : {}) });
  if (!res.files || !res.outDir || !res.ir) {
    report(io, opts.format, res.diagnostics.sorted());
    return 1;
  }
  const written = await writeCompiled({ ...res, files: res.files, outDir: res.outDir, ir: res.ir }, opts.check);
  report(io, opts.format, res.diagnostics.sorted());
  if (!written) return 1;
  const out = res.displayOut ?? res.outDir;
  if (opts.check) {
    const drift = [
      ...written.added.map((f) => `  added    ${out}/${f}`),
      ...written.changed.map((f) => `  changed  ${out}/${f}`),
      ...written.removed.map((f) => `  removed  ${out}/${f}`),
      // a missing handler file fails the project's own build: CI should hear of it here
      ...written.stubs.map((f) => `  missing  ${out}/${f} (handler file; \`mcpgen build\` writes a stub)`),
    ];
    if (drift.length === 0) {
      if (opts.format === 'text') io.stdout(`${out}: up to date (${res.files.size} files)\n`);
      return 0;
    }
    io.stderr(`${out} is out of date with ${opts.manifest}; ${drift.length} file(s) would change:\n${drift.join('\n')}\nRun \`mcpgen build ${opts.manifest}\` and commit the result.\n`);
    return 1;
  }
  if (opts.format === 'text') {
    const ms = Math.round(performance.now() - started);
    io.stdout(
      `Built ${res.ir.name} into ${out}: ${summary(res.ir)}; ` +
        `${written.added.length} added, ${written.changed.length} changed, ${written.removed.length} removed, ${written.unchanged.length} unchanged (${ms} ms)\n`,
    );
    for (const f of written.stubs) io.stdout(`Wrote handler stub ${out}/${f}: implement its functions (mcpgen will not overwrite it).\n`);
    if (opts.report) io.stdout(surfaceReport(res.ir));
  }
  return 0;
}
