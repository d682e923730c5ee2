/**
 * `mcpgen build --watch`: builds, then rebuilds whenever the manifest, the spec (or a file next
 * to it that it may `$ref`), a handler or resource file the manifest names, or one of mcpgen's
 * templates changes. Each build runs `mcpgen build` in a fresh child process, so templates and
 * caches are read anew and a crash in one build never stops the watcher; its output is passed
 * through as it is. What to watch is read again from the manifest after every build.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';
import { type FSWatcher, watch } from 'chokidar';
import { Diagnostics } from '../core/diagnostics.js';
import { isObject } from '../core/json.js';
import { PACKAGE_ROOT } from '../core/paths.js';
import { loadManifest, resolveManifest, toDisplayPath } from '../manifest/load.js';
import type { Format, Io } from './commands.js';

/** Options of {@link runWatch}: those of `build`, less `--check`. */
export type WatchOptions = { manifest: string; out?: string; format: Format; report?: boolean; quiet?: boolean; color?: boolean; cache?: boolean };

/** What to watch for one manifest. */
export type WatchTargets = {
  /** Files and folders to watch (absolute). Folders are watched for spec files (`.json`, `.yaml`, `.yml`) and, under templates, any file. */
  paths: string[];
  /** Files named by the manifest (manifest, spec, handler and resource files): never ignored. */
  files: Set<string>;
  /** The output folder: everything in it is ignored except the handler files. */
  outDir?: string;
  /** mcpgen's templates folder. */
  templates: string;
};

const SPEC_EXTENSIONS = new Set(['.json', '.yaml', '.yml']);

/** `value` of every `key` anywhere in a parsed manifest. */
function valuesOf(node: unknown, key: string, out: string[] = []): string[] {
  if (Array.isArray(node)) for (const v of node) valuesOf(v, key, out);
  else if (isObject(node)) {
    for (const [k, v] of Object.entries(node)) {
      if (k === key && typeof v === 'string') out.push(v);
      else valuesOf(v, key, out);
    }
  }
  return out;
}

/**
 * Reads the manifest (leniently: a broken one still names itself, and whatever paths it gives)
 * and lists what a rebuild depends on.
 */
export async function watchTargets(manifest: string, cwd: string, out?: string): Promise<WatchTargets> {
  const manifestAbs = path.resolve(cwd, manifest);
  const templates = path.join(PACKAGE_ROOT, 'templates');
  const files = new Set([manifestAbs]);
  const paths = [manifestAbs, templates];
  const loaded = await loadManifest(manifestAbs, new Diagnostics(), { cwd });
  if (!loaded || typeof (loaded.manifest as { openapi?: unknown }).openapi !== 'string') return { paths, files, templates };
  const m = resolveManifest(loaded);
  const outDir = out !== undefined ? path.resolve(cwd, out) : m.outputDir;
  files.add(m.openapiPath);
  paths.push(m.openapiPath, path.dirname(m.openapiPath));
  // handlers: `<file under src/>#<export>`; resources: `file:` relative to the manifest
  for (const ref of valuesOf(loaded.manifest, 'handler')) {
    const file = ref.split('#')[0];
    if (file) files.add(path.resolve(outDir, 'src', file));
  }
  for (const kind of ['resources', 'resourceTemplates'] as const) {
    for (const f of valuesOf((loaded.manifest as Record<string, unknown>)[kind], 'file')) files.add(path.resolve(loaded.dir, f));
  }
  for (const f of files) if (!paths.includes(f)) paths.push(f);
  return { paths, files, outDir, templates };
}

const inside = (dir: string, p: string) => {
  const rel = path.relative(dir, p);
  return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
};

/** Whether a changed path is one a rebuild depends on (chokidar's `ignored`, inverted). */
export function isWatched(targets: WatchTargets, p: string, isDir: boolean): boolean {
  if (targets.files.has(p)) return true;
  const base = path.basename(p);
  if (isDir && (base === 'node_modules' || base === '.git')) return false;
  if (targets.outDir !== undefined && inside(targets.outDir, p)) {
    // only the way to the handler files
    return isDir && [...targets.files].some((f) => inside(p, f));
  }
  if (isDir) return true;
  if (inside(targets.templates, p)) return true;
  return SPEC_EXTENSIONS.has(path.extname(p).toLowerCase());
}

/** Args of the child `mcpgen build` for one rebuild. */
function buildArgs(opts: WatchOptions): string[] {
  return [
    'build',
    opts.manifest,
    ...(opts.out !== undefined ? ['--out', opts.out] : []),
    '--format',
    opts.format,
    ...(opts.report ? ['--report'] : []),
    ...(opts.quiet ? ['--quiet'] : []),
    ...(opts.cache === false ? ['--no-cache'] : []),
  ];
}

/**
 * Builds, then rebuilds on every change, until `signal` aborts. Resolves to 0. Notices (what
 * changed, that it is watching) go to stderr, so `--format json` keeps stdout to one document
 * per build.
 */
export async function runWatch(opts: WatchOptions, io: Io, signal: AbortSignal): Promise<number> {
  const bin = path.join(PACKAGE_ROOT, 'bin', 'mcpgen.js');
  let child: ChildProcess | undefined;
  let pending: string | undefined;
  let timer: NodeJS.Timeout | undefined;
  let watcher: FSWatcher | undefined;
  let targets = await watchTargets(opts.manifest, io.cwd, opts.out);
  const shown = (p: string) => toDisplayPath(io.cwd, p);

  const build = (): Promise<void> =>
    new Promise((resolve) => {
      child = spawn(process.execPath, [bin, ...buildArgs(opts)], {
        cwd: io.cwd,
        env: { ...process.env, FORCE_COLOR: opts.color ? '1' : '0' },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      child.stdout!.setEncoding('utf8').on('data', (s: string) => io.stdout(s));
      child.stderr!.setEncoding('utf8').on('data', (s: string) => io.stderr(s));
      child.on('close', () => {
        child = undefined;
        resolve();
      });
      child.on('error', (e) => {
        io.stderr(`mcpgen: cannot start a build: ${e.message}\n`);
        child = undefined;
        resolve();
      });
    });

  const refresh = async () => {
    const next = await watchTargets(opts.manifest, io.cwd, opts.out);
    const added = next.paths.filter((p) => !targets.paths.includes(p));
    const gone = targets.paths.filter((p) => !next.paths.includes(p));
    targets = next;
    if (added.length) watcher?.add(added);
    if (gone.length) watcher?.unwatch(gone);
  };

  let running = false;
  const rebuild = async () => {
    if (running || signal.aborted) return;
    running = true;
    while (pending !== undefined && !signal.aborted) {
      io.stderr(`\n${pending} changed: rebuilding\n`);
      pending = undefined;
      await build();
      await refresh();
    }
    running = false;
  };

  await build();
  if (signal.aborted) return 0;
  watcher = watch(targets.paths, {
    ignoreInitial: true,
    depth: 4,
    // chokidar may ask before it knows whether a path is a folder (no stats): keep it if it could be watched as either
    ignored: (p, stats) => {
      const abs = path.resolve(p);
      return stats ? !isWatched(targets, abs, stats.isDirectory()) : !isWatched(targets, abs, false) && !isWatched(targets, abs, true);
    },
    awaitWriteFinish: { stabilityThreshold: 50, pollInterval: 20 },
  });
  watcher.on('all', (event, p) => {
    if (event === 'addDir' || event === 'unlinkDir') return;
    pending = shown(path.resolve(p));
    clearTimeout(timer);
    timer = setTimeout(() => void rebuild(), 100);
  });
  await new Promise<void>((resolve) => watcher!.on('ready', resolve));
  const extra = targets.paths.length - 1;
  io.stderr(
    `Watching ${shown(path.resolve(io.cwd, opts.manifest))}${extra > 0 ? `, its spec, the files it names and mcpgen's templates` : ''} for changes (Ctrl-C stops)\n`,
  );

  await new Promise<void>((resolve) => {
    if (signal.aborted) resolve();
    else signal.addEventListener('abort', () => resolve(), { once: true });
  });
  clearTimeout(timer);
  child?.kill('SIGTERM');
  await watcher.close();
  return 0;
}
