/**
 * A fingerprint of the mcpgen that is running: its package.json, the size and time of every file
 * of its compiled code (the `src` folder this module is in — `dist/src/` with the CLI's bundle, or
 * `src/` under the tests — its compiled runtime helpers beside it, and the precompiled checks in
 * `generated/`) and the versions of the packages it depends on, as installed. What the build
 * cache keeps that mcpgen's own code computed (../ir/model-memo.ts, ../emit/runtime-memo.ts) is
 * keyed by it, so a new release or an edited checkout never reads what other code wrote.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { sha256 } from './cache-entry.js';
import { installedPackageJson, PACKAGE_ROOT } from './paths.js';

let value: string | undefined;

function files(dir: string, out: string[]): void {
  let names: string[];
  try {
    names = readdirSync(dir, { recursive: true, encoding: 'utf8' });
  } catch {
    return;
  }
  for (const n of names) out.push(path.join(dir, n));
}

/** The fingerprint (a sha256), computed once per process. */
export function codeFingerprint(): string {
  if (value !== undefined) return value;
  // this module is src/core/<file> (tsc's output or the tests' source) or src/cli/<bundle>: two folders up is src/
  const src = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
  const list: string[] = [];
  files(src, list);
  files(path.join(src, '..', 'templates', 'runtime'), list);
  files(path.join(PACKAGE_ROOT, 'generated'), list);
  const pkg = readFileSync(path.join(PACKAGE_ROOT, 'package.json'), 'utf8');
  const parts = [pkg];
  for (const f of list.sort()) {
    try {
      const st = statSync(f);
      parts.push(`${f}\0${st.size}\0${st.mtimeMs}`);
    } catch {
      parts.push(`${f}\0-`);
    }
  }
  const deps = Object.keys((JSON.parse(pkg) as { dependencies?: Record<string, string> }).dependencies ?? {}).sort();
  for (const d of deps) parts.push(installedPackageJson(d) ?? `${d}\0-`);
  return (value = sha256(parts.join('\n')));
}
