/**
 * Who owns a file in the output folder, decided by its content (never by a name list or a
 * substring): mcpgen owns a file when what is on disk still has the sha256 that `.mcpgen.json`
 * recorded when mcpgen wrote it, or when it begins with the generated header. JSON files cannot
 * carry a header, so their recorded hash is what lets mcpgen update them. Anything else is the
 * user's and is never overwritten or removed.
 *
 * Paths are inspected without following links and without opening anything but regular files:
 * a symbolic link, a folder or a FIFO where mcpgen wants a file (or a file where it wants a
 * folder) is reported, never written through, read from or waited on.
 */
import { createHash } from 'node:crypto';
import { lstat, readFile } from 'node:fs/promises';
import path from 'node:path';
import { Diagnostics, escapePointerToken, type Location } from '../core/diagnostics.js';
import { isObject } from '../core/json.js';
import { HASH_HEADER, MD_HEADER, TS_HEADER } from '../emit/header.js';
import { parseYamlSource, type YamlSource } from '../source/source.js';

/** Name of the file that records the generated files and their hashes. */
export const LOCK_FILE = '.mcpgen.json';

/** sha256 of a file's text (UTF-8), hex: what `.mcpgen.json` records per file. */
export function contentHash(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

const HEADER_LINES = [TS_HEADER, MD_HEADER, HASH_HEADER].map((h) => h.slice(0, h.indexOf('\n') + 1));

/**
 * True when `text` begins with one of the generated headers (after a `#!` line, which
 * `server.ts` has). Containing the header text somewhere else does not count.
 */
export function beginsWithHeader(text: string): boolean {
  const body = text.startsWith('#!') ? text.slice(text.indexOf('\n') + 1) : text;
  return HEADER_LINES.some((h) => body.startsWith(h));
}

/** The lock file as read from disk. */
export type PreviousLock = {
  /** Listed path ⇒ recorded hash (undefined for the old format, a bare list of names). */
  files: Map<string, string | undefined>;
  /** Where an entry is written in the lock file, for diagnostics. */
  locate: (rel: string) => Location;
  /** False when a `.mcpgen.json` exists but is not one mcpgen wrote (then it is the user's). */
  ours: boolean;
  /** Merged file ⇒ what mcpgen generated for it last time, as recorded (`mergeBase`; see ./merge.ts). */
  mergeBase: Map<string, unknown>;
};

/** What is at a path of the output folder. */
export type Found =
  | { kind: 'missing' }
  | { kind: 'file'; text: string }
  /**
   * Something mcpgen must not replace or read: `what` says what and where, e.g. `server/src is
   * a symbolic link`; `at` is the path in the way (the file itself or a folder on its way).
   */
  | { kind: 'blocked'; what: string; at: string };

/**
 * Inspects `rel` under `root` without following links: each folder on the way must be a real
 * folder (or missing), and the path itself a regular file (or missing).
 */
export async function inspect(root: string, rel: string, display: (rel: string) => string): Promise<Found> {
  const parts = rel.split('/');
  for (let i = 1; i <= parts.length; i++) {
    const sub = parts.slice(0, i).join('/');
    const last = i === parts.length;
    let st;
    try {
      st = await lstat(path.join(root, ...parts.slice(0, i)));
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === 'ENOENT') return { kind: 'missing' };
      return { kind: 'blocked', at: sub, what: `${display(sub)} cannot be inspected (${code ?? String(e)})` };
    }
    if (st.isSymbolicLink())
      return { kind: 'blocked', at: sub, what: `${display(sub)} is a symbolic link${last ? '' : ' to a folder'}; mcpgen does not write through links` };
    if (!last) {
      if (!st.isDirectory()) return { kind: 'blocked', at: sub, what: `${display(sub)} is a file, where mcpgen needs a folder` };
      continue;
    }
    if (st.isDirectory()) return { kind: 'blocked', at: sub, what: `${display(rel)} is a folder, where mcpgen writes a file` };
    if (!st.isFile()) return { kind: 'blocked', at: sub, what: `${display(rel)} is not a regular file (a FIFO, socket or device)` };
    try {
      return { kind: 'file', text: await readFile(path.join(root, ...parts), 'utf8') };
    } catch (e) {
      return { kind: 'blocked', at: sub, what: `${display(rel)} cannot be read (${(e as NodeJS.ErrnoException).code ?? String(e)})` };
    }
  }
  return { kind: 'missing' };
}

/** True for a relative POSIX path that stays inside the folder it is relative to. */
export function isSafeRelative(rel: string): boolean {
  return rel !== '' && !rel.startsWith('/') && !rel.includes('\\') && !rel.includes('\0') && rel.split('/').every((s) => s !== '' && s !== '.' && s !== '..');
}

/**
 * Reads `.mcpgen.json`. A missing lock gives an empty list; an unreadable one, or one that is
 * not mcpgen's, gives `ours: false` and an empty list (so nothing is trusted from it).
 */
export function readLock(opts: { displayLock: string; found: Found }): PreviousLock {
  const files = new Map<string, string | undefined>();
  const mergeBase = new Map<string, unknown>();
  const whole: Location = { file: opts.displayLock, pointer: '', line: 1, col: 1 };
  if (opts.found.kind !== 'file') return { files, locate: () => whole, ours: opts.found.kind === 'missing', mergeBase };
  let source: YamlSource | undefined;
  try {
    JSON.parse(opts.found.text);
    source = parseYamlSource({ file: opts.displayLock, text: opts.found.text, diagnostics: new Diagnostics(), syntaxCode: 'MCPGEN_SPEC_SYNTAX' });
  } catch {
    source = undefined;
  }
  const value = source?.value;
  if (!source || !isObject(value) || value.generator !== 'mcpgen') return { files, locate: () => whole, ours: false, mergeBase };
  const pointers = new Map<string, string>();
  if (Array.isArray(value.files)) {
    value.files.forEach((f, i) => {
      if (typeof f !== 'string' || files.has(f)) return;
      files.set(f, undefined);
      pointers.set(f, `/files/${i}`);
    });
  } else if (isObject(value.files)) {
    for (const [f, hash] of Object.entries(value.files)) {
      files.set(f, typeof hash === 'string' ? hash : undefined);
      pointers.set(f, `/files/${escapePointerToken(f)}`);
    }
  }
  if (isObject(value.mergeBase)) {
    for (const f of MERGED_FILES) if (Object.prototype.hasOwnProperty.call(value.mergeBase, f)) mergeBase.set(f, value.mergeBase[f]);
  }
  const src = source;
  return { files, locate: (rel) => src.locate(pointers.get(rel) ?? '', { key: true }), ours: true, mergeBase };
}

/** True when mcpgen may overwrite or remove `text`, listed (or not) in the previous lock. */
export function owned(text: string, recorded: string | undefined): boolean {
  return (recorded !== undefined && contentHash(text) === recorded) || beginsWithHeader(text);
}

/**
 * Generated files that are merged with the user's edits instead of being owned whole: the lock
 * keeps what mcpgen generated for them (`mergeBase`), the base of the next three-way merge.
 */
export const MERGED_FILES: ReadonlySet<string> = new Set(['package.json']);

/**
 * The lock file's text for a set of generated files (path ⇒ content), sorted by path, with the
 * generated content of the merged files (parsed, so the lock stays readable JSON).
 */
export function lockText(files: ReadonlyMap<string, string>): string {
  const list = [...files.keys()].filter((f) => f !== LOCK_FILE).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const merged = list.filter((f) => MERGED_FILES.has(f));
  const lock = {
    '//': 'Files generated by mcpgen, with the sha256 of what it generated: `mcpgen build` overwrites or removes a file only while it still has that content or begins with the generated header. package.json is merged instead: `mergeBase` is what mcpgen generated for it, so a build keeps what you added or changed and updates only what mcpgen changed.',
    generator: 'mcpgen',
    files: Object.fromEntries(list.map((f) => [f, contentHash(files.get(f)!)])),
    ...(merged.length > 0 ? { mergeBase: Object.fromEntries(merged.map((f) => [f, JSON.parse(files.get(f)!) as unknown])) } : {}),
  };
  return JSON.stringify(lock, null, 2) + '\n';
}
