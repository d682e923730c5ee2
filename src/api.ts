/**
 * mcpgen as a library: `import { build, validate } from 'mcpgen'` (docs/library.md). The same
 * work as `mcpgen build` and `mcpgen validate`, returned as data: the diagnostics the CLI
 * prints, the summary of `--format json` and the drift list of `--check`. The CLI
 * (cli/commands.ts) is a layer over the same functions (project.ts) that only prints. Nothing
 * here writes to stdout or stderr or ends the process, and a user's mistake (a broken manifest,
 * a missing spec, drift, an output conflict) is a diagnostic, never a throw.
 */
import type { BuildOptions, BuildResult, ValidateOptions, ValidateResult } from './api-types.js';
import { buildProject, validateProject } from './project.js';

export type { BuildOptions, BuildResult, ValidateOptions, ValidateResult } from './api-types.js';
export type { Diagnostic, DiagnosticCode, Location, Severity, WarningCode } from './core/diagnostics.js';
export type { Contributor, DriftEntry, PresetSummary, ResultExampleSummary, ResultsSummary, Summary } from './summary.js';

/** Builds (or, with `check`, compares) the project the manifest describes. */
export async function build(opts: BuildOptions): Promise<BuildResult> {
  return (await buildProject(opts)).result;
}

/** Every check `build` makes, including on what is in the output folder; writes nothing. */
export async function validate(opts: ValidateOptions): Promise<ValidateResult> {
  return (await validateProject(opts)).result;
}
