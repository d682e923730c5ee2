/**
 * The work behind `build` and `validate`, shared by the library (api.ts) and the CLI
 * (cli/commands.ts): compile, then write or compare the tree. Returns the library's results plus
 * the model, which only the CLI's text output uses.
 */
import path from 'node:path';
import type { BuildOptions, BuildResult, ValidateOptions, ValidateResult } from './api-types.js';
import { type CompileResult, compile } from './compile.js';
import { handlerExports } from './emit/ts/stubs.js';
import type { IrServer } from './ir/types.js';
import { driftOf, summarize } from './summary.js';
import { type WriteReport, writeTree } from './write/tree.js';

/** `build`'s result with what the CLI prints besides it. */
export type BuildOutcome = { result: BuildResult; ir?: IrServer; fileCount: number };

/** `validate`'s result with the model the CLI's success line counts. */
export type ValidateOutcome = { result: ValidateResult; ir?: IrServer };

/** `build` (api.ts), keeping the model for the CLI's text output. */
export async function buildProject(opts: BuildOptions): Promise<BuildOutcome> {
  const cwd = path.resolve(opts.cwd ?? process.cwd());
  const check = opts.check === true;
  const res = await compile({
    manifestPath: opts.manifest,
    cwd,
    emit: true,
    tokens: opts.report === true,
    cache: opts.cache === true,
    ...(opts.onStage ? { onStage: opts.onStage } : {}),
    ...(opts.out !== undefined ? { out: opts.out } : {}),
  });
  let written: WriteReport | undefined;
  if (res.files && res.outDir && res.ir) {
    opts.onStage?.(check ? `comparing ${res.files.size} files` : `writing ${res.files.size} files`);
    written = await writeCompiled({ ...res, files: res.files, outDir: res.outDir, ir: res.ir }, check);
    // the spec is kept only by a build that wrote its project: a refused build and --check write nothing
    if (written && !check && !res.diagnostics.hasErrors) await res.saveCache?.();
  }
  const diagnostics = res.diagnostics.sorted();
  const out = res.displayOut ?? res.outDir ?? '.';
  const where = { ...(res.displayOut !== undefined ? { output: res.displayOut } : {}), ...(res.outDir !== undefined ? { outDir: res.outDir } : {}) };
  if (!res.files || !res.ir || !written) return { result: { ok: false, diagnostics, summary: null, drift: [], ...where }, fileCount: 0 };
  const drift = check ? driftOf(written, out) : [];
  const summary = summarize(res.ir, out, written, check);
  return { result: { ok: drift.length === 0, diagnostics, summary, drift, ...where, files: written }, ir: res.ir, fileCount: res.files.size };
}

/** `validate` (api.ts), keeping the model for the CLI's text output. */
export async function validateProject(opts: ValidateOptions): Promise<ValidateOutcome> {
  const cwd = path.resolve(opts.cwd ?? process.cwd());
  const res = await compile({ manifestPath: opts.manifest, cwd, emit: true, cache: opts.cache === true, ...(opts.onStage ? { onStage: opts.onStage } : {}) });
  if (res.files && res.outDir && res.ir) {
    opts.onStage?.('checking the output folder');
    await writeCompiled({ ...res, files: res.files, outDir: res.outDir, ir: res.ir }, true);
  }
  const diagnostics = res.diagnostics.sorted();
  const ok = !res.diagnostics.hasErrors;
  const summary = res.ir && ok ? summarize(res.ir, res.displayOut ?? res.outDir ?? '.') : null;
  return { result: { ok, diagnostics, summary }, ...(res.ir ? { ir: res.ir } : {}) };
}

/**
 * Writes the compiled tree (or, with `check`, only compares it): every conflict with what is in
 * the output folder is reported in `res.diagnostics`, and undefined returned.
 */
function writeCompiled(res: CompileResult & { files: Map<string, string>; outDir: string; ir: IrServer }, check: boolean) {
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
