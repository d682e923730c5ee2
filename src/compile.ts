/**
 * The pipeline, load → validate → model → emit, shared by `build` and `validate`.
 * Stages after a failed one still run when they can, so one run reports every problem;
 * nothing is emitted when any error was found.
 */
import path from 'node:path';
import { diagnosticLevels } from './core/diagnostic-levels.js';
import { Diagnostics, type Location } from './core/diagnostics.js';
import { readTokenMemo, saveTokenMemo, useTokenMemo } from './core/token-memo.js';
import { TokenWorker } from './core/token-worker.js';
import { emitProject, loadModeEmitters } from './emit/index.js';
import { readRuntimeImportMemo, saveRuntimeImportMemo } from './emit/runtime-memo.js';
import { buildIr } from './ir/build.js';
import { type OperationMemo, operationMemoKey, readOperationMemo } from './ir/model-memo.js';
import { judgeSurface, wantsTokens } from './ir/surface/judge.js';
import { countTokens } from './ir/surface/measure.js';
import type { IrServer } from './ir/types.js';
import { loadManifest, resolveManifest } from './manifest/load.js';
import { checkInvalidManifest } from './manifest/partial.js';
import { type CacheOutcome, cacheDir, loadSpecCached } from './openapi/cache.js';
import { type LoadedSpec, type LoadSpecOptions, loadSpec, readRegularFile } from './openapi/load.js';
import { checkHandlers } from './write/handlers.js';
import { checkOutputDir, withLockFile } from './write/tree.js';

/** Options of {@link compile}. */
export type CompileOptions = {
  manifestPath: string;
  /** Directory paths in diagnostics are shown relative to. */
  cwd: string;
  /** `--out`: output directory overriding the manifest's `output`. */
  out?: string;
  /** Emit the file tree (build) or stop after the model (validate). */
  emit: boolean;
  /** Count the surface's tokens and those of the tools' documented result examples (`--report`); a token budget counts the surface's anyway. */
  tokens?: boolean;
  /** Told when a stage starts (`reading the spec`, …), for a progress indicator. */
  onStage?: (stage: string) => void;
  /** Read and keep the loaded spec, the operation tools (./ir/model-memo.ts) and the runtime's imports in the build cache beside the manifest (`.cache/mcpgen/`, ./openapi/cache.ts); the CLI's default, off with `--no-cache`. */
  cache?: boolean;
};

/** What {@link compile} produced. */
export type CompileResult = {
  diagnostics: Diagnostics;
  ir?: IrServer;
  /** The generated files (with the lock file), when `emit` and there were no errors. */
  files?: Map<string, string>;
  /** Stubs of handler files that do not exist yet (project path ⇒ content); written once, never listed as generated. */
  stubs?: Map<string, string>;
  /** Absolute output directory. */
  outDir?: string;
  /** Output directory as shown to the user. */
  displayOut?: string;
  /** Where the output directory is chosen (the manifest's `output`, or `--out`): output conflicts are reported there. */
  outputAt?: Location;
  /** With `cache`: whether the spec came from the build cache (`hit`), can be kept in it (`miss`), or cannot. */
  specCache?: CacheOutcome;
  /** With `cache`: writes what the cache lacks (the spec on a miss, new token counts, the operation tools modelled anew, the runtime's imports read anew); for a build that wrote its project only. Resolves to whether it wrote. */
  saveCache?: () => Promise<boolean>;
};

const display = (cwd: string, p: string) => path.relative(cwd, p).split(path.sep).join('/') || '.';

/** Runs the pipeline up to emission. */
export async function compile(opts: CompileOptions): Promise<CompileResult> {
  const diagnostics = new Diagnostics();
  const loaded = await loadManifest(opts.manifestPath, diagnostics, { cwd: opts.cwd });
  if (!loaded) return { diagnostics };
  // from here on every warning is added at the level the manifest's `diagnostics` sets for it
  diagnostics.setLevels(
    diagnosticLevels({ value: (loaded.manifest as { diagnostics?: unknown }).diagnostics, locate: (p, o) => loaded.source.locate(p, o), diagnostics }),
  );
  const m = loadedManifestOrUndefined(loaded);
  if (!m) return { diagnostics };
  const outDir = opts.out !== undefined ? path.resolve(opts.cwd, opts.out) : m.outputDir;
  const displayOut = display(opts.cwd, outDir);
  const outputAt: Location = opts.out !== undefined ? { file: '--out', pointer: '', line: 0, col: 0 } : loaded.source.locate('/output');
  const unsafe = checkOutputDir(outDir, [
    { dir: loaded.dir, name: "the manifest's folder" },
    { dir: opts.cwd, name: 'the working directory' },
  ]);
  if (unsafe) {
    diagnostics.error(
      'MCPGEN_OUTPUT_UNSAFE',
      `output directory ${displayOut} is ${unsafe}`,
      'use a dedicated folder for the generated project, e.g. `output: ./server`',
      outputAt,
    );
  }
  const cached: Cached = {};
  // token counts of the result examples are remembered in the cache too (./token-memo.ts)
  const memo = opts.cache === true ? await readTokenMemo(cacheDir(loaded.dir)) : undefined;
  // and the runtime's import graph (./emit/runtime-memo.ts), read while the model is built
  const importMemo = opts.cache === true && opts.emit ? readRuntimeImportMemo(cacheDir(loaded.dir)) : undefined;
  const bytes = await readRegularFile(m.openapiPath).catch(() => undefined);
  // calibrating result sizes counts the tokens of the spec's examples: a build that has none of
  // those counts yet (no cache, or an empty one) and does not count on this thread anyway (the
  // report, token budgets) loads the tokenizer on a worker while it reads and models the spec
  const countsAhead =
    bytes !== undefined && (memo === undefined || memo.known.size === 0) && opts.tokens !== true && !wantsTokens(m.budget) && documentsExamples(bytes);
  const tokenWorker = countsAhead ? new TokenWorker() : undefined;
  let ir: IrServer | undefined;
  try {
    ir = await useTokenMemo(memo, () => model(opts, loaded, m, diagnostics, cached, bytes), tokenWorker);
  } finally {
    tokenWorker?.close();
  }
  // the operation tools came from the cache, their examples' counts unread: they stay remembered
  if (cached.operations?.hit && memo) for (const [k, n] of memo.known) if (!memo.used.has(k)) memo.used.set(k, n);
  const saveCache = async () => {
    const spec = cached.save ? await cached.save() : false;
    const tokens = memo && cached.outcome !== undefined && cached.outcome !== 'uncacheable' ? await saveTokenMemo(cacheDir(loaded.dir), memo) : false;
    const imports = importMemo ? await saveRuntimeImportMemo(cacheDir(loaded.dir), await importMemo) : false;
    const operations = cached.operations ? await cached.operations.save() : false;
    return spec || tokens || imports || operations;
  };
  const specCache = cached.outcome !== undefined ? { specCache: cached.outcome, saveCache } : {};
  if (!ir) return { diagnostics, outDir, displayOut, outputAt, ...specCache };
  if (ir.surface && !diagnostics.hasErrors && (opts.tokens === true || wantsTokens(m.budget))) {
    opts.onStage?.('counting tokens');
    ir.surface.tokens = await countTokens(ir);
    // buildIr judged the bytes; the tokens, counted only for a clean build, are judged here
    const declaredPresets = Object.keys(ir.concerns?.presets ?? {});
    const locate = (p: string, o?: { key?: boolean }) => loaded.source.locate(p, o);
    for (const d of judgeSurface({ surface: ir.surface, budget: m.budget, measure: 'tokens', declaredPresets, locate })) diagnostics.add(d);
  }
  const stubs = await checkHandlers({ ir, outDir, displayOut, locateManifest: (p) => loaded.source.locate(p), diagnostics });
  if (diagnostics.hasErrors || !opts.emit) return { diagnostics, ir, outDir, displayOut, outputAt, ...specCache };
  opts.onStage?.(`generating ${ir.tools.length + ir.extraTools.length} tools`);
  return {
    diagnostics,
    ir,
    files: withLockFile(emitProject(ir, await loadModeEmitters(ir), await importMemo)),
    stubs,
    outDir,
    displayOut,
    outputAt,
    ...specCache,
  };
}

/**
 * Reads the spec and builds the IR; `undefined` when there is none to emit (the spec cannot be
 * used, or the manifest failed its schema: then the semantic checks still run on what the schema
 * accepted, so one run reports both kinds). A function of its own so that the spec document is
 * garbage once the IR is built, before the emitters allocate the project.
 */
async function model(
  opts: CompileOptions,
  loaded: Loaded,
  m: NonNullable<ReturnType<typeof resolveManifest>>,
  diagnostics: Diagnostics,
  cached: Cached,
  bytes: Buffer | undefined,
): Promise<IrServer | undefined> {
  opts.onStage?.('reading the spec');
  const loadOpts: LoadSpecOptions = {
    file: m.openapiPath,
    displayPath: display(opts.cwd, m.openapiPath),
    rootDirs: [loaded.dir, path.dirname(m.openapiPath)],
    referencedAt: loaded.source.locate('/openapi'),
    allowRemoteRefs: m.allowRemoteRefs ?? [],
    diagnostics,
    ...(bytes !== undefined ? { bytes } : {}),
  };
  let spec: LoadedSpec | undefined;
  if (opts.cache === true) {
    // the operation tools' entry (./ir/model-memo.ts) is read while the spec loads
    const operations = loaded.valid
      ? readOperationMemo({ cacheDir: cacheDir(loaded.dir), manifestPath: path.resolve(opts.cwd, opts.manifestPath) })
      : undefined;
    const levels = (loaded.manifest as { diagnostics?: unknown }).diagnostics;
    const memoOf = async (specKey: string) => {
      const memo = await operations!.withKey(operationMemoKey({ specKey, manifest: m, levels, exampleTokens: opts.tokens === true }));
      return { specKey, memo };
    };
    let asked: { specKey: string; memo: OperationMemo } | undefined;
    // the spec's document is parsed only if something reads it when the tools come from the cache
    const deferDocument = async (specKey: string) => {
      asked = await memoOf(specKey);
      return asked.memo.usable({ manifest: m, locateManifest: (p, o) => loaded.source.locate(p, o) });
    };
    const got = await loadSpecCached({ ...loadOpts, cacheDir: cacheDir(loaded.dir), ...(operations ? { deferDocument } : {}) });
    spec = got.spec;
    cached.outcome = got.outcome;
    if (got.save) cached.save = got.save;
    if (operations && got.contentKey !== undefined) cached.operations = (asked?.specKey === got.contentKey ? asked : await memoOf(got.contentKey)).memo;
  } else {
    spec = await loadSpec(loadOpts);
  }
  if (!spec) return undefined;
  if (!loaded.valid) {
    const locateManifest = (p: string, o?: { key?: boolean }) => loaded.source.locate(p, o);
    checkInvalidManifest({
      loaded,
      diagnostics,
      checks: (pruned, into) => void buildIr({ manifest: resolveManifest(pruned), locateManifest, spec, diagnostics: into }),
    });
    return undefined;
  }
  opts.onStage?.('modelling the tools');
  return buildIr({
    ...(cached.operations ? { memo: cached.operations } : {}),
    manifest: m,
    locateManifest: (p, o) => loaded.source.locate(p, o),
    spec,
    diagnostics,
    ...(opts.tokens === true ? { exampleTokens: true } : {}),
  });
}

type Loaded = NonNullable<Awaited<ReturnType<typeof loadManifest>>>;

/** What the build cache gave a build, and what it will write. */
type Cached = { outcome?: CacheOutcome; save?: () => Promise<boolean>; operations?: OperationMemo };

/** Keys that document examples in JSON (`"example":`, `"examples":`) or YAML (`example:`, `examples:`). */
const EXAMPLE_KEYS = ['example":', 'examples":', 'example:', 'examples:'].map((k) => Buffer.from(k));
/** How many example keys make the tokenizer worth loading ahead (GitHub has 5,864; Kubernetes 1). */
const EXAMPLES_AHEAD = 20;

/** Whether a spec's text documents enough examples that calibration will count tokens (a guess: it decides only where the tokenizer loads). */
function documentsExamples(bytes: Buffer): boolean {
  let n = 0;
  for (const key of EXAMPLE_KEYS) {
    for (let i = bytes.indexOf(key); i >= 0; i = bytes.indexOf(key, i + key.length)) if (++n >= EXAMPLES_AHEAD) return true;
  }
  return false;
}

function loadedManifestOrUndefined(loaded: Loaded): ReturnType<typeof resolveManifest> | undefined {
  // a manifest that failed its schema may still name a readable spec: load it too, so spec
  // problems are reported in the same run, but only when the fields we need are usable
  const raw = loaded.manifest as { openapi?: unknown };
  if (typeof raw.openapi !== 'string') return undefined;
  return resolveManifest(loaded);
}
