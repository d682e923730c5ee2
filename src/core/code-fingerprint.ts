/**
 * A fingerprint of the mcpgen that is running: its package.json, the content of every file of its
 * compiled code (the `src` folder this module is in — `dist/src/` with the CLI's bundle, or `src/`
 * under the tests — its compiled runtime helpers beside it, and the precompiled checks in
 * `generated/`; type declarations and source maps, which never run, left out) and the versions of
 * the packages it depends on, as installed. What the build cache keeps that mcpgen's own code
 * computed (../ir/model-memo.ts, ../emit/runtime-memo.ts) is keyed by it, so a new release or an
 * edited checkout never reads what other code wrote — whatever the files' sizes and times say
 * (`cp -p`, `rsync -t`, tar and npm's packages keep or set times; an edit can keep the size).
 * Hashing the ~4 MB costs ~10 ms once per process (docs/cli.md).
 */
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { installedPackageJson, PACKAGE_ROOT } from './paths.js';

let value: string | undefined;
/** Each file's sha256, read once per process (the spec cache's fingerprint reads some of the same files). */
const digests = new Map<string, string | null>();

/** Whether a file of mcpgen's code may run: not a type declaration, a source map or tsc's build info. */
export const mayRun = (name: string) => !/\.d\.[cm]?ts$|\.map$|\.tsbuildinfo$/.test(name);

/** Every file under `dir` (recursively) that may run: not a type declaration or a source map. */
export function codeFiles(dir: string, out: string[] = []): string[] {
  let names: string[];
  try {
    names = readdirSync(dir, { recursive: true, encoding: 'utf8' });
  } catch {
    return out;
  }
  for (const n of names) if (mayRun(n)) out.push(path.join(dir, n));
  return out;
}

/** A file's sha256 (`null`: a folder), `-` when it cannot be read; memoised for the process. */
function digest(file: string): string | null {
  let d = digests.get(file);
  if (d === undefined) {
    try {
      d = createHash('sha256').update(readFileSync(file)).digest('hex');
    } catch (e) {
      d = (e as NodeJS.ErrnoException).code === 'EISDIR' ? null : '-';
    }
    digests.set(file, d);
  }
  return d;
}

/** A sha256 of `head` and of each file's path and content (sorted by path; folders skipped). */
export function hashFiles(head: string[], files: string[]): string {
  const hash = createHash('sha256');
  for (const h of head) hash.update(`${h}\n`);
  for (const f of [...files].sort()) {
    const d = digest(f);
    if (d !== null) hash.update(`${f}\0${d}\n`);
  }
  return hash.digest('hex');
}

/** The fingerprint (a sha256), computed once per process. */
export function codeFingerprint(): string {
  if (value !== undefined) return value;
  // this module is src/core/<file> (tsc's output or the tests' source) or src/cli/<bundle>: two folders up is src/
  const src = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
  const list = codeFiles(src);
  codeFiles(path.join(src, '..', 'templates', 'runtime'), list);
  codeFiles(path.join(PACKAGE_ROOT, 'generated'), list);
  const pkg = readFileSync(path.join(PACKAGE_ROOT, 'package.json'), 'utf8');
  const deps = Object.keys((JSON.parse(pkg) as { dependencies?: Record<string, string> }).dependencies ?? {}).sort();
  const head = [pkg, ...deps.map((d) => installedPackageJson(d) ?? `${d}\0-`)];
  return (value = hashFiles(head, list));
}
