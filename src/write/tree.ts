/**
 * Stage 5 (write): put the virtual file tree on disk, or compare it with the disk (`--check`).
 *
 * - `.mcpgen.json` in the output root records every file mcpgen generated, with the sha256 of
 *   what it wrote. Ownership is decided by content (./ownership.ts): an existing file is
 *   overwritten, and a listed file that is no longer generated is removed, only while it still
 *   has its recorded hash or begins with the generated header. Anything else belongs to the user
 *   and stops the build with MCPGEN_OUTPUT_CONFLICT, naming the file; nothing is written then.
 * - package.json is merged instead (./merge-file.ts): what the user added or changed in it is
 *   kept, what mcpgen changed is applied, and a key both changed differently is a conflict.
 * - Handler files (the user's, written once as stubs) are never overwritten or removed, whatever
 *   the lock file says.
 * - Nothing is written through a symbolic link, into a folder where a file should be, or into a
 *   FIFO: those are conflicts too.
 * - Each file is written to a temporary sibling, fsynced and renamed over the target, so a
 *   crash never leaves a half-written file; unchanged files are not touched at all.
 */
import { randomBytes } from 'node:crypto';
import { realpathSync } from 'node:fs';
import { mkdir, open, readdir, rename, rmdir, stat, unlink } from 'node:fs/promises';
import path from 'node:path';
import type { Diagnostics, Location } from '../core/diagnostics.js';
import { mergeOnDisk } from './merge-file.js';
import { inspect, isSafeRelative, LOCK_FILE, lockText, MERGED_FILES, owned, readLock } from './ownership.js';

export { LOCK_FILE } from './ownership.js';

/** What a write (or a check) found. `stubs` are handler stubs written (or, with `check`, that would be). */
export type WriteReport = { added: string[]; changed: string[]; removed: string[]; unchanged: string[]; stubs: string[] };

/** Options of {@link writeTree}. */
export type WriteOptions = {
  /** Absolute output directory. */
  outDir: string;
  /** Display form of `outDir` for messages. */
  displayDir: string;
  files: ReadonlyMap<string, string>;
  /**
   * User-owned files to create only where nothing exists yet (handler stubs): never overwritten,
   * never listed in the lock file, never removed.
   */
  stubs?: ReadonlyMap<string, string>;
  /** Handler files (project paths): the user's, never overwritten or removed even if the lock file lists them. */
  userFiles?: Iterable<string>;
  /** Compare only; write nothing. */
  check: boolean;
  diagnostics: Diagnostics;
  /** Where the output folder is chosen (the manifest's `output`, or `--out`): conflicts are reported there. */
  at?: Location;
};

/** Adds the lock file that records every generated path and its hash. */
export function withLockFile(files: ReadonlyMap<string, string>): Map<string, string> {
  return new Map([...files, [LOCK_FILE, lockText(files)]]);
}

/** The real path of `p`: that of its nearest existing ancestor, plus the rest as written. */
function realPath(p: string): string {
  const abs = path.resolve(p);
  const rest: string[] = [];
  for (let cur = abs; ; ) {
    try {
      return path.join(realpathSync(cur), ...rest.reverse());
    } catch {
      const up = path.dirname(cur);
      if (up === cur) return abs;
      rest.push(path.basename(cur));
      cur = up;
    }
  }
}

/**
 * Refuses to write into a directory that is not a dedicated output folder: the filesystem root,
 * or one of `protectedDirs` or a folder containing one — compared as written and after resolving
 * symbolic links, so `server -> .` does not pass.
 */
export function checkOutputDir(outDir: string, protectedDirs: ReadonlyArray<string | { dir: string; name: string }>): string | undefined {
  const linked = realPath(outDir) !== path.resolve(outDir) ? ' (after following symbolic links)' : '';
  for (const [out, resolve, note] of [
    [path.resolve(outDir), path.resolve, ''],
    [realPath(outDir), realPath, linked],
  ] as const) {
    if (out === path.parse(out).root) return `the filesystem root${note}`;
    for (const entry of protectedDirs) {
      const { dir, name } = typeof entry === 'string' ? { dir: entry, name: entry } : entry;
      const d = resolve(dir);
      if (d === out) return `${name}${note}`;
      if (d.startsWith(out + path.sep)) return `a folder that contains ${name}${note}`;
    }
  }
  return undefined;
}

function assertInside(root: string, rel: string): string {
  if (!isSafeRelative(rel)) throw new Error(`refusing to write outside the output directory: ${rel}`);
  const abs = path.resolve(root, rel);
  if (!abs.startsWith(path.resolve(root) + path.sep)) throw new Error(`refusing to write outside the output directory: ${rel}`);
  return abs;
}

const CONFLICT_HELP =
  'move it away or choose another `output` folder; mcpgen only overwrites and removes files it wrote (recorded with their hash in .mcpgen.json) or that begin with its header';

/** Writes (or checks) the tree; returns undefined when a user file is in the way (reported in `diagnostics`). */
export async function writeTree(opts: WriteOptions): Promise<WriteReport | undefined> {
  const { outDir, files, check, diagnostics } = opts;
  const at = opts.at ?? { file: opts.displayDir, pointer: '', line: 0, col: 0 };
  const display = (rel: string) => path.posix.join(opts.displayDir, rel);
  const conflict = (message: string, help = CONFLICT_HELP, where = at) => diagnostics.error('MCPGEN_OUTPUT_CONFLICT', message, help, where);
  const report: WriteReport = { added: [], changed: [], removed: [], unchanged: [], stubs: [] };

  const root = await stat(outDir).catch((e: NodeJS.ErrnoException) => (e.code === 'ENOENT' || e.code === 'ENOTDIR' ? undefined : e));
  if (root instanceof Error || (root && !root.isDirectory())) {
    const what = root instanceof Error ? `cannot be inspected (${(root as NodeJS.ErrnoException).code ?? root.message})` : 'is a file, not a folder';
    conflict(`output ${opts.displayDir} ${what}`, 'point `output` at a folder (it is created when missing)');
    return undefined;
  }
  const blocker = root === undefined ? await blockedAncestor(outDir) : undefined;
  if (blocker !== undefined) {
    conflict(
      `output ${opts.displayDir} cannot be created: ${blocker} on its way is a file, not a folder`,
      'point `output` at a folder (it is created when missing)',
    );
    return undefined;
  }

  const lockFound = await inspect(outDir, LOCK_FILE, display);
  const previous = readLock({ displayLock: display(LOCK_FILE), found: lockFound });
  const userFiles = new Set(opts.userFiles ?? []);
  const pending: Array<[string, string]> = [];
  // a folder in the way of many files is one problem, reported once
  const blockers = new Set<string>();
  const blocked = (found: { at: string; what: string }, help?: string, where?: Location) => {
    if (blockers.has(found.at)) return;
    blockers.add(found.at);
    conflict(found.what, help, where);
  };
  for (const [rel, content] of files) {
    const abs = assertInside(outDir, rel);
    const found = rel === LOCK_FILE ? lockFound : await inspect(outDir, rel, display);
    if (found.kind === 'blocked') {
      blocked(found);
      continue;
    }
    if (found.kind === 'missing') report.added.push(rel);
    else if (found.text === content) report.unchanged.push(rel);
    else if (rel === LOCK_FILE ? previous.ours : !userFiles.has(rel) && owned(found.text, previous.files.get(rel))) report.changed.push(rel);
    else {
      const merge = MERGED_FILES.has(rel)
        ? mergeOnDisk({ rel, generated: content, onDisk: found.text, previous, shown: display(rel), conflict })
        : { kind: 'no-base' as const };
      if (merge.kind === 'merged') {
        // merged with the user's edits: written only when the merge differs from the file in content
        (merge.text === undefined ? report.unchanged : report.changed).push(rel);
        if (merge.text !== undefined) pending.push([abs, merge.text]);
      } else if (merge.kind === 'no-base') {
        if (previous.files.get(rel) !== undefined && MERGED_FILES.has(rel))
          conflict(
            `${display(rel)} was changed since mcpgen wrote it, and ${display(LOCK_FILE)} does not hold what mcpgen generated for it (it is from before mcpgen merged ${rel}, or its mergeBase was edited), so mcpgen cannot tell your changes from its own`,
            `put back the ${rel} mcpgen wrote (e.g. from version control), build, then make your changes again: from then on mcpgen keeps them`,
          );
        else if (previous.files.get(rel) !== undefined)
          conflict(
            `${display(rel)} was changed since mcpgen wrote it (it no longer has the hash recorded in ${display(LOCK_FILE)}) and does not begin with the generated header`,
          );
        else if (previous.files.has(rel))
          conflict(
            `${display(rel)} is listed in an older ${display(LOCK_FILE)} without a hash and does not begin with the generated header, so mcpgen cannot tell whether you edited it`,
            'if you have not edited it, delete it and build again (mcpgen records its hash from now on); otherwise move it away',
          );
        else conflict(`${display(rel)} exists and was not written by mcpgen`);
      }
      continue;
    }
    if (found.kind === 'missing' || found.text !== content) pending.push([abs, content]);
  }
  for (const rel of [...previous.files.keys()].sort()) {
    if (files.has(rel) || userFiles.has(rel) || opts.stubs?.has(rel)) continue;
    const where = previous.locate(rel);
    if (!isSafeRelative(rel)) {
      conflict(
        `${display(LOCK_FILE)} lists ${JSON.stringify(rel)}, which is not a path inside the output folder; mcpgen will not remove it`,
        'remove the entry from .mcpgen.json',
        where,
      );
      continue;
    }
    const found = await inspect(outDir, rel, display);
    if (found.kind === 'missing') continue;
    if (found.kind === 'file' && owned(found.text, previous.files.get(rel))) {
      report.removed.push(rel);
      continue;
    }
    const recorded = previous.files.get(rel) !== undefined;
    const why =
      found.kind === 'blocked'
        ? found.what
        : `${display(rel)} ${recorded ? 'does not have the content mcpgen wrote (its hash differs)' : 'has no recorded hash (an older .mcpgen.json)'} and does not begin with the generated header`;
    conflict(
      `${display(rel)} is listed in ${display(LOCK_FILE)} as generated, but mcpgen will not remove it: ${why}`,
      'if the file is yours, remove its entry from .mcpgen.json; if it is a stale generated file, delete it',
      where,
    );
  }
  for (const [rel, content] of opts.stubs ?? []) {
    if (files.has(rel)) continue;
    const abs = assertInside(outDir, rel);
    const found = await inspect(outDir, rel, display);
    if (found.kind === 'file') continue;
    if (found.kind === 'blocked') {
      blocked(found, 'make it a regular file (your handler) or remove what is in the way; mcpgen writes a stub there');
      continue;
    }
    report.stubs.push(rel);
    pending.push([abs, content]);
  }
  if (diagnostics.hasErrors) return undefined;
  if (check) return report;
  // every file but the lock at once (each is fsynced: one after another took ~60 ms for 50
  // files), then the lock, so a lock never names content that is not on disk yet
  const lock = assertInside(outDir, LOCK_FILE);
  const settled = await Promise.allSettled(pending.filter(([abs]) => abs !== lock).map(([abs, content]) => atomicWrite(abs, content)));
  const failed = settled.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed) throw failed.reason;
  for (const [abs, content] of pending) if (abs === lock) await atomicWrite(abs, content);
  for (const rel of report.removed) {
    const abs = assertInside(outDir, rel);
    await unlink(abs);
    await pruneEmptyDirs(path.dirname(abs), outDir);
  }
  return report;
}

/** The nearest existing ancestor of a missing `dir` when it is not a folder (then `dir` cannot be created). */
async function blockedAncestor(dir: string): Promise<string | undefined> {
  for (let cur = path.dirname(path.resolve(dir)); ; cur = path.dirname(cur)) {
    const st = await stat(cur).catch(() => undefined);
    if (st) return st.isDirectory() ? undefined : path.basename(cur);
    if (path.dirname(cur) === cur) return undefined;
  }
}

/**
 * Writes a file via a temporary sibling + fsync + rename. The temporary name is random and
 * created exclusively (`wx`), so nothing already there — a stale file, a planted symlink — is
 * followed or overwritten; `mode` is the new file's (default 0644).
 */
export async function atomicWrite(file: string, content: string, options: { mode?: number } = {}): Promise<void> {
  await mkdir(path.dirname(file), { recursive: true });
  const tmp = path.join(path.dirname(file), `.${path.basename(file)}.${randomBytes(6).toString('hex')}.tmp`);
  const handle = await open(tmp, 'wx', options.mode ?? 0o644);
  try {
    await handle.writeFile(content, 'utf8');
    await handle.sync();
  } finally {
    await handle.close();
  }
  try {
    await rename(tmp, file);
  } catch (e) {
    await unlink(tmp).catch(() => undefined);
    throw e;
  }
}

async function pruneEmptyDirs(dir: string, root: string): Promise<void> {
  const r = path.resolve(root);
  let d = path.resolve(dir);
  while (d.startsWith(r + path.sep)) {
    if ((await readdir(d)).length > 0) return;
    await rmdir(d);
    d = path.dirname(d);
  }
}
