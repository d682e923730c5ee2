/**
 * The options and results of the library's `build` and `validate` (api.ts, which exports them),
 * apart so that project.ts, which does the work, reads them without importing api.ts.
 */
import type { Diagnostic } from './core/diagnostics.js';
import type { DriftEntry, Summary } from './summary.js';
import type { WriteReport } from './write/tree.js';

/** Options of `validate`. */
export type ValidateOptions = {
  /** Path of the manifest (`mcpgen.yaml`), absolute or relative to `cwd`. */
  manifest: string;
  /** The directory relative paths are resolved from and diagnostics' files shown relative to (default: `process.cwd()`). */
  cwd?: string;
  /** Told when a stage starts (`reading the spec`, …), e.g. for a progress indicator. */
  onStage?: (stage: string) => void;
  /** Use the build cache beside the manifest, `.cache/mcpgen/` (default: off here; the CLI's default is on, `--no-cache` turns it off). */
  cache?: boolean;
};

/** What `validate` found. */
export type ValidateResult = {
  /** No error among `diagnostics` (warnings allowed). */
  ok: boolean;
  /** Every problem, sorted as the CLI prints them (errors and warnings, each located). */
  diagnostics: Diagnostic[];
  /** What the server would publish; `null` when there are errors. The `summary` of `--format json`. */
  summary: Summary | null;
};

/** Options of `build`. */
export type BuildOptions = ValidateOptions & {
  /** Output directory, overriding the manifest's `output` (the CLI's `--out`), relative to `cwd`. */
  out?: string;
  /** Write nothing; report in `drift` every file that would be added, changed or removed (the CLI's `--check`). */
  check?: boolean;
  /** Also count the surface's tokens and those of the result examples (the CLI's `--report`). */
  report?: boolean;
};

/** What `build` did. */
export type BuildResult = {
  /** No error among `diagnostics` and, with `check`, no drift: the CLI's exit code 0. */
  ok: boolean;
  /** Every problem, sorted as the CLI prints them. */
  diagnostics: Diagnostic[];
  /** What was (or, with `check`, would be) generated; `null` when nothing could be. */
  summary: Summary | null;
  /** With `check`: every out-of-date file, as `build --check` lists it; else empty. */
  drift: DriftEntry[];
  /** The output directory as shown (relative to `cwd`), when the manifest names one. */
  output?: string;
  /** The absolute output directory. */
  outDir?: string;
  /** Project paths (`src/tools.gen.ts`) by what the write did (with `check`: would do), when it got that far. */
  files?: WriteReport;
};
